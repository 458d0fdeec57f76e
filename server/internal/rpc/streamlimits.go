package rpc

// What streams may hold. A StreamEvents stream holds records between the
// store (or the journal) and its client: a page it replayed, batches the
// hub queued for it, and the record it is sending, which stays in memory
// for as long as the client does not read it (HTTP/2 flow control blocks
// the send). Unbounded, a client that opens streams and never reads them
// holds the server's memory hostage (250 unread streams of a handler with
// six 1 MB records held 876 MiB). Every one of those is bounded by bytes:
//
//   - the hub queues at most StreamLimits.BufferBytes for a stream; past
//     that it cuts the stream loose, which then catches up from the store
//     (live.Hub);
//   - a replay reads pages of at most about BufferBytes (StreamEvents);
//   - the records all streams are sending share MemoryBytes: a record is
//     sent only with its size taken from that budget, given back once the
//     client has taken it (the send returned); a stream that cannot get it
//     within a third of SendTimeout ends with ResourceExhausted, naming
//     the sequence number to resume after;
//   - a send the client does not take within SendTimeout is given up (the
//     HTTP/2 stream is reset: its write deadline), so an unread stream
//     holds its share for that long at most.

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// Defaults of StreamLimits.
const (
	DefaultStreamBufferBytes = 4 << 20
	DefaultStreamMemoryBytes = 64 << 20
	DefaultStreamSendTimeout = 30 * time.Second
)

// StreamLimits bound the memory StreamEvents streams hold (see above).
// Zero fields take the defaults.
type StreamLimits struct {
	// BufferBytes bounds the records one stream holds queued or read
	// ahead of its client (default DefaultStreamBufferBytes).
	BufferBytes int64
	// MemoryBytes bounds the records all streams are sending to their
	// clients at once (default DefaultStreamMemoryBytes).
	MemoryBytes int64
	// SendTimeout is how long a record may wait for its share of
	// MemoryBytes, and then for its client to take it, before the stream
	// ends (default DefaultStreamSendTimeout).
	SendTimeout time.Duration
}

func (l StreamLimits) withDefaults() StreamLimits {
	if l.BufferBytes <= 0 {
		l.BufferBytes = DefaultStreamBufferBytes
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = DefaultStreamMemoryBytes
	}
	if l.SendTimeout <= 0 {
		l.SendTimeout = DefaultStreamSendTimeout
	}
	return l
}

// StreamBudget is the server's share of memory for records being sent.
type StreamBudget struct {
	limits StreamLimits
	sem    *semaphore.Weighted
	// sending is the bytes held by sends under way; behind counts the
	// streams ended because a record could not be sent in time (metrics).
	sending, behind atomic.Int64
}

func NewStreamBudget(l StreamLimits) *StreamBudget {
	l = l.withDefaults()
	return &StreamBudget{limits: l, sem: semaphore.NewWeighted(l.MemoryBytes)}
}

// errStreamBehind ends a stream that could not send its next record in
// time: the client resumes after last.
func errStreamBehind(last uint64, why string) error {
	return fmt.Errorf("%w: %s; resume after seq %d", apierr.ErrResourceExhausted, why, last)
}

// acquire takes n bytes of the budget (at most all of it), waiting for
// them a third of SendTimeout at most: the share is held by sends whose
// clients do not read for up to the whole of it, and a stream that waited
// as long would only hold its client up. It returns the bytes taken, or
// the resumable error (last is the position the client resumes after).
func (b *StreamBudget) acquire(ctx context.Context, n int64, last uint64) (int64, error) {
	n = min(max(n, 1), b.limits.MemoryBytes)
	wctx, cancel := context.WithTimeout(ctx, b.limits.SendTimeout/3)
	err := b.sem.Acquire(wctx, n)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		b.behind.Add(1)
		return 0, errStreamBehind(last, "the server holds as much unread stream data as it may")
	}
	b.sending.Add(n)
	return n, nil
}

// release gives back n bytes acquire took.
func (b *StreamBudget) release(n int64) {
	if n > 0 {
		b.sending.Add(-n)
		b.sem.Release(n)
	}
}

// send sends one record of size bytes with its share of the budget: held
// bytes the caller took already for it (a replayed page's share), or, if
// none, size taken here. The share is given back once the send returns.
// The send has a write deadline of SendTimeout when the call's response
// writer supports one (writerKey). last is the sequence number of the
// last record the client got, for the resumable error.
func (b *StreamBudget) send(ctx context.Context, held, size int64, last uint64, send func() error) error {
	if held == 0 {
		var err error
		if held, err = b.acquire(ctx, size, last); err != nil {
			return err
		}
	}
	defer b.release(held)
	start := time.Now()
	rc := responseController(ctx)
	if rc != nil {
		// Ignored where unsupported (an HTTP/1.1 writer without it): the
		// send then waits for the client as before.
		_ = rc.SetWriteDeadline(start.Add(b.limits.SendTimeout))
	}
	err := send()
	if rc != nil {
		_ = rc.SetWriteDeadline(time.Time{})
	}
	if err != nil && time.Since(start) >= b.limits.SendTimeout {
		// The write deadline reset the HTTP/2 stream: the client, which
		// did not read, learns nothing more; this is for the log.
		b.behind.Add(1)
		return errStreamBehind(last, "the client did not read the stream")
	}
	return err
}

// reservation is the share of the budget a replayed page holds, handed
// out to its records as they are sent.
type reservation struct {
	b *StreamBudget
	n int64
}

// take hands out up to n bytes of the reservation to one record.
func (r *reservation) take(n int64) int64 {
	n = min(max(n, 1), r.n)
	r.n -= n
	return n
}

// resize makes the reservation n bytes (a page read turned out larger or
// smaller than guessed), waiting for more as acquire does.
func (r *reservation) resize(ctx context.Context, n int64, last uint64) error {
	switch {
	case n < r.n:
		r.b.release(r.n - n)
		r.n = n
	case n > r.n && r.n < r.b.limits.MemoryBytes:
		more, err := r.b.acquire(ctx, n-r.n, last)
		if err != nil {
			return err
		}
		r.n += more
	}
	return nil
}

// close gives back what is left.
func (r *reservation) close() {
	r.b.release(r.n)
	r.n = 0
}

// writerKey carries the call's http.ResponseController in its context
// (WithResponseController), so a stream can bound how long a send waits.
type writerKey struct{}

// WithResponseController puts each request's ResponseController in its
// context.
func WithResponseController(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), writerKey{}, http.NewResponseController(w))))
	})
}

func responseController(ctx context.Context) *http.ResponseController {
	rc, _ := ctx.Value(writerKey{}).(*http.ResponseController)
	return rc
}

// Limits are the limits the budget keeps.
func (b *StreamBudget) Limits() StreamLimits { return b.limits }

// Sending is how many bytes streams are sending and their clients have
// not taken yet.
func (b *StreamBudget) Sending() int64 { return b.sending.Load() }

// Behind counts the streams ended because their record could not be
// sent in time.
func (b *StreamBudget) Behind() int64 { return b.behind.Load() }
