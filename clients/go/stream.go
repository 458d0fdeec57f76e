package client

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// errEndedEarly is a stream that the server or a proxy ended cleanly
// before the terminal record.
var errEndedEarly = status.Error(codes.Unavailable, "client: stream ended before the handler finished")

// Stream yields the handler's records with a sequence number greater than
// after, first those already recorded and then new ones as they happen,
// and ends after the terminal record (rec.GetHandlerFinished() != nil).
// Heartbeats are not yielded. Breaking out of the loop ends the stream.
//
// A dropped connection (codes.Unavailable, or the server or a proxy
// cancelling the stream) does not end the iteration: Stream reconnects with
// the client's backoff and asks for the records after the last sequence
// number it yielded, so each record is yielded once, in order. It gives up
// after RetryPolicy.MaxAttempts reconnects in a row that yielded no record
// (heartbeats do not count). Resuming after the last record of a finished
// handler yields nothing and ends.
// Any other error (codes.NotFound for an unknown handler, the context's
// end) is yielded as (nil, err) and ends the iteration.
//
// By default the stream carries the events steps write and the terminal
// record; [StreamInternal] adds the server's internal records (step state,
// idle changes, releases and restores, runs waiting for a worker), and
// [StreamFromHead] skips what was recorded before the stream began (after
// must then be 0). Both hold across reconnects.
func (c *Client) Stream(ctx context.Context, id string, after uint64, opts ...StreamOption) iter.Seq2[*wfdv1.Record, error] {
	return func(yield func(*wfdv1.Record, error) bool) {
		s := stream{c: c, id: id, last: after, yield: yield}
		for _, opt := range opts {
			opt(&s.opts)
		}
		s.run(ctx)
	}
}

// StreamOption configures Stream.
type StreamOption func(*streamOptions)

type streamOptions struct {
	internal bool
	fromHead bool
}

// StreamInternal makes Stream yield the internal records too.
func StreamInternal() StreamOption { return func(o *streamOptions) { o.internal = true } }

// StreamFromHead makes Stream yield only records made after it began: it
// asks for the handler's last record first (GetHandler) and streams from
// there, so that a reconnect yields what happened while it was away.
func StreamFromHead() StreamOption { return func(o *streamOptions) { o.fromHead = true } }

// stream is the state of one Stream iteration.
type stream struct {
	c     *Client
	id    string
	opts  streamOptions
	last  uint64 // sequence number of the last record yielded (or where a from-head stream began)
	yield func(*wfdv1.Record, error) bool
}

func (s *stream) run(ctx context.Context) {
	if s.opts.fromHead {
		// The head is asked for once, before the stream opens: a stream
		// cut before its first heartbeat (which says where the head was)
		// would otherwise ask for the head again when it reconnects, and
		// skip what was recorded meanwhile.
		h, err := s.c.Get(ctx, s.id)
		if err != nil {
			s.yield(nil, err)
			return
		}
		s.last, s.opts.fromHead = h.GetLastSeq(), false
	}
	backoff := s.c.opts.retry.backoffFunc()
	failures := 0
	for {
		progressed, stop, err := s.attempt(ctx)
		if stop {
			return
		}
		if progressed {
			failures = 0
		}
		failures++
		if !resumable(ctx, err) || failures >= s.c.opts.retry.MaxAttempts {
			s.yield(nil, err)
			return
		}
		t := time.NewTimer(backoff(ctx, uint(failures)))
		select {
		case <-ctx.Done():
			t.Stop()
			s.yield(nil, status.FromContextError(ctx.Err()).Err())
			return
		case <-t.C:
		}
	}
}

// attempt runs one StreamEvents call. It reports whether anything arrived,
// whether the iteration is over (terminal record, or the consumer broke
// off), and otherwise the error that ended the call.
func (s *stream) attempt(ctx context.Context) (progressed, stop bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A from-head stream starts at the head once; a reconnect continues
	// after what it saw (its first heartbeat says where the head was).
	fromHead := s.opts.fromHead
	req := &wfdv1.StreamEventsRequest{HandlerId: s.id, AfterSeq: s.last, FromHead: fromHead, IncludeInternal: s.opts.internal}
	if fromHead {
		req.AfterSeq = 0
	}
	st, err := s.c.svc.StreamEvents(ctx, req)
	if err != nil {
		return false, false, err
	}
	for {
		msg, err := st.Recv()
		if errors.Is(err, io.EOF) {
			// The server ends a stream without a terminal record only when
			// the handler finished before the records asked for (a resume
			// after the end): then there is nothing more to wait for.
			if h, gerr := s.c.Get(ctx, s.id); gerr == nil && finished(h) && s.last >= h.GetLastSeq() {
				return progressed, true, nil
			}
			return progressed, false, errEndedEarly
		}
		if err != nil {
			return progressed, false, err
		}
		if hb := msg.GetHeartbeat(); hb != nil && fromHead {
			s.last, s.opts.fromHead, fromHead = hb.GetLastSeq(), false, false
		}
		rec := msg.GetRecord()
		if rec == nil || rec.GetSeq() <= s.last {
			continue // a heartbeat (not progress), or a record already yielded
		}
		progressed = true
		s.last = rec.GetSeq()
		if !s.yield(rec, nil) || rec.GetHandlerFinished() != nil {
			return true, true, nil
		}
	}
}

// resumable says whether a stream that ended with err should be opened
// again: the connection dropped, or the peer (not our context) ended it.
func resumable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.Canceled:
		return true
	}
	return false
}

func finished(h *wfdv1.Handler) bool {
	switch h.GetStatus() {
	case wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED, wfdv1.HandlerStatus_HANDLER_STATUS_FAILED, wfdv1.HandlerStatus_HANDLER_STATUS_CANCELLED:
		return true
	}
	return false
}
