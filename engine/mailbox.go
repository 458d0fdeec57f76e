package engine

import "context"

// inboxSize is how many messages may wait for a handler's loop; a sender
// that finds the inbox full waits for room, which is the back-pressure.
const inboxSize = 4

// mailbox is a handler's inbox: a ring of messages guarded by Handler.mu.
// It exists only while messages flow (it is dropped when the loop parks),
// so an idle handler in memory holds none; a channel would keep its buffer
// for the handler's whole life.
type mailbox struct {
	msgs    [inboxSize]msg
	head, n int
}

func (q *mailbox) len() int {
	if q == nil {
		return 0
	}
	return q.n
}

func (q *mailbox) push(m msg) {
	q.msgs[(q.head+q.n)%inboxSize] = m
	q.n++
}

func (q *mailbox) pop() (msg, bool) {
	if q.len() == 0 {
		return msg{}, false
	}
	m := q.msgs[q.head]
	q.msgs[q.head] = msg{}
	q.head = (q.head + 1) % inboxSize
	q.n--
	return m, true
}

// post delivers m to the loop: it waits for room in the inbox, then makes
// sure the loop runs. It fails when the loop has exited or ctx is done.
func (h *Handler) post(ctx context.Context, m msg) error {
	for {
		h.mu.Lock()
		if h.exit != 0 || h.lost.Load() {
			err := h.exitErrLocked()
			h.mu.Unlock()
			return err
		}
		if h.inbox.len() < inboxSize {
			if h.inbox == nil {
				h.inbox = new(mailbox)
			}
			h.inbox.push(m)
			h.wakeLocked()
			h.mu.Unlock()
			return nil
		}
		if h.space == nil {
			h.space = make(chan struct{})
		}
		space := h.space
		h.mu.Unlock()
		select {
		case <-space:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// receive takes the next message, waiting for one if the inbox is empty.
// It gives up (false) once the handler is lost, and, while the loop is
// stopping, once the handler is aborted.
func (h *Handler) receive(stopping bool) (msg, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		if h.lost.Load() || stopping && h.aborted {
			return msg{}, false
		}
		if m, ok := h.popLocked(); ok {
			return m, true
		}
		if h.signal == nil {
			h.signal = make(chan struct{}, 1)
		}
		sig := h.signal
		h.mu.Unlock()
		<-sig
		h.mu.Lock()
	}
}

// tryReceive takes the next message if one is waiting (and the handler is
// not lost: what it would do with it could not become durable).
func (h *Handler) tryReceive() (msg, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost.Load() {
		return msg{}, false
	}
	return h.popLocked()
}

func (h *Handler) popLocked() (msg, bool) {
	full := h.inbox.len() == inboxSize
	m, ok := h.inbox.pop()
	if ok && full && h.space != nil {
		close(h.space)
		h.space = nil
	}
	return m, ok
}

// park ends the loop goroutine if nothing is waiting in the inbox. A sender
// puts its message in the inbox and starts the loop if it is not running,
// both under mu, so a message is either seen here or starts a new loop.
// Parking drops the inbox's buffer and the loop's signal channel.
func (h *Handler) park() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.inbox.len() > 0 || h.lost.Load() {
		// A lost handler exits instead (lose found its loop running).
		return false
	}
	h.running = false
	h.inbox = nil
	h.signal = nil
	return true
}

// abort makes a stopping loop give up on running steps.
func (h *Handler) abort() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.aborted = true
	if h.signal != nil {
		select {
		case h.signal <- struct{}{}:
		default:
		}
	}
}

// closeInbox marks the loop as gone for good and returns the messages it
// will never handle. Senders from now on get the exit error; those waiting
// for room, or for Done, are let go.
func (h *Handler) closeInbox(exit exitReason) []msg {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.exit = exit
	h.running = false
	var left []msg
	for {
		m, ok := h.inbox.pop()
		if !ok {
			break
		}
		left = append(left, m)
	}
	h.inbox = nil
	h.signal = nil
	if h.space != nil {
		close(h.space)
		h.space = nil
	}
	if h.done != nil {
		close(h.done)
	}
	return left
}

// refuse answers a message the loop will never handle, as if it had been
// sent after the loop exited.
func refuse(m msg, err error) {
	switch {
	case m.reply != nil:
		m.reply <- reply{err: err, gone: true}
	case m.ack != nil:
		m.ack <- err
	}
}

// wakeLocked makes the loop look at the handler: it starts the loop if it
// is parked and wakes it if it waits for a message. h.mu is held.
func (h *Handler) wakeLocked() {
	switch {
	case !h.running:
		h.running = true
		go h.loop()
	case h.signal != nil:
		select {
		case h.signal <- struct{}{}:
		default:
		}
	}
}
