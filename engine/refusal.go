package engine

import "errors"

// A refusal that depends on the handler's state (an event no step waits
// for, a handler that has ended) is only as true as that state is
// durable. When the state includes changes the journal has not committed
// yet (the change that took the waiter's event, the one that ended the
// handler), the refusal waits for them: if they commit, the caller gets
// the refusal; if they fail, the handler is lost and the caller gets the
// journal's error (Unavailable: a full disk, say), whose retry meets the
// handler as its last durable checkpoint has it. A store that could not
// commit is never reported as the caller's mistake.

// refusal is a SendEvent's refusal waiting for the changes it was judged
// on.
type refusal struct {
	ack chan<- error
	err error
}

// judgedOnState reports whether a SendEvent error depends on the
// handler's state, rather than on the event alone.
func judgedOnState(err error) bool {
	var refused *EventRefusedError
	var held *TaskHeldError
	return errors.As(err, &refused) || errors.As(err, &held) || errors.Is(err, ErrHandlerDone) || errors.Is(err, ErrTaskNotPending)
}

// refuseWhenDurable makes the refusal err of the event whose caller waits
// on ack wait until the handler's changes so far are durable (see above):
// the batch gathered so far is handed to the journal now rather than
// after a linger. It reports false when nothing is waiting to be
// committed: the caller is then answered at once.
func (r *runner) refuseWhenDurable(ack chan<- error, err error) bool {
	if !r.nothingToFlush() && !r.onlyRestored() {
		r.flush()
	}
	return r.h.refuseWhenDurable(ack, err)
}

// refuseWhenDurable is runner.refuseWhenDurable for a refusal decided
// outside the loop (the handler ended and its loop has gone).
func (h *Handler) refuseWhenDurable(ack chan<- error, err error) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.inJournal == 0 {
		return false
	}
	if h.refusals == nil {
		h.refusals = new([]refusal)
	}
	*h.refusals = append(*h.refusals, refusal{ack: ack, err: err})
	return true
}

// toJournal counts a change handed to the journal.
func (h *Handler) toJournal() {
	h.mu.Lock()
	h.inJournal++
	h.mu.Unlock()
}

// journalDone counts a change the journal acknowledged (err nil: durable)
// and answers the refusals waiting once every change handed over before
// them is acknowledged, or at once if one failed.
func (h *Handler) journalDone(err error) {
	h.mu.Lock()
	h.inJournal--
	var waiting []refusal
	if h.refusals != nil && (err != nil || h.inJournal == 0) {
		waiting = *h.refusals
		h.refusals = nil
	}
	h.mu.Unlock()
	for _, w := range waiting {
		if err != nil {
			w.ack <- err
		} else {
			w.ack <- w.err
		}
	}
}
