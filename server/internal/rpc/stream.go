package rpc

import (
	"context"
	"fmt"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/live"

	"github.com/wfd-dev/wfd/persistence"
)

// replayPage is how many records one store read returns during replay.
const replayPage = 500

func (v *Service) StreamEvents(ctx context.Context, req *wfdv1.StreamEventsRequest, out *connect.ServerStream[wfdv1.StreamEventsResponse]) error {
	if err := checkHandlerID(req.GetHandlerId()); err != nil {
		return err
	}
	if req.GetFromHead() && req.GetAfterSeq() != 0 {
		return fmt.Errorf("%w: from_head and after_seq %d: a stream starts at the head or after a record, not both", apierr.ErrInvalid, req.GetAfterSeq())
	}
	opts := streamOptions{after: req.GetAfterSeq(), fromHead: req.GetFromHead(), internal: req.GetIncludeInternal()}
	return v.stream(ctx, req.GetHandlerId(), opts, func(r *wfdv1.StreamEventsResponse) error { return out.Send(r) })
}

// streamOptions are what a StreamEvents request asks for.
type streamOptions struct {
	after    uint64 // send records after this sequence number
	fromHead bool   // start after the last record as the stream subscribes
	internal bool   // send internal records too (see internalRecord)
}

// internalRecord says whether a record is the server's bookkeeping rather
// than what the handler did: a stream leaves these out unless asked.
// Records are internal unless known not to be, so a kind added later stays
// out of default streams until it is meant for them.
func internalRecord(r *wfdv1.Record) bool {
	switch r.GetKind().(type) {
	case *wfdv1.Record_EventWritten, *wfdv1.Record_HandlerFinished:
		return false
	}
	return true
}

// stream sends the handler's records after opts.after (or, with
// opts.fromHead, after the last one as it subscribes): first from the
// store, then live from the hub, and returns after the terminal record.
// Internal records are skipped unless opts.internal; they still move the
// stream's position, which heartbeats report. It never
// loads the handler: a stream follows a released handler without waking it.
//
// It subscribes before it reads the store, so a record committed meanwhile
// is either read or received (or both: sequence numbers drop duplicates),
// and it reads records only when the client is behind the last one.
// A subscriber that falls behind is cut loose by the hub and catches up
// from the store again. Records another replica commits reach the hub only
// as a poke (the commit feed): the stream reads them from the store, after the
// last it sent, so it follows the handler wherever it is live.
func (s *Service) stream(ctx context.Context, id string, opts streamOptions, send func(*wfdv1.StreamEventsResponse) error) error {
	st := &streamRun{ctx: ctx, id: id, internal: opts.internal, send: send, hub: s.hub, budget: s.streams, draining: s.draining,
		every: s.heartbeat, replay: func(last *uint64, emit emitFunc) (bool, error) { return s.replay(ctx, id, last, emit) }}
	// Subscribe before reading the metadata: what commits after the read
	// reaches the subscription, what committed before is in the store.
	st.sub = s.hub.Subscribe(id)
	// Whichever subscription is the stream's when it ends (each catch-up
	// from the store takes a new one).
	defer func() { s.hub.Unsubscribe(id, st.sub) }()
	meta, err := s.rt.Meta(ctx, id)
	// Only these two are used from here on, so the metadata, which may
	// hold a large result, is not kept alive by a stream that lives long
	// (or is not read).
	headSeq, finished := meta.LastSeq, meta.Status != persistence.StatusRunning
	st.last = opts.after
	if opts.fromHead {
		st.last = headSeq
	}
	if err == nil && st.last > headSeq {
		err = fmt.Errorf("%w: after_seq %d is beyond the last record of handler %s (%d)", apierr.ErrInvalid, st.last, id, headSeq)
	}
	if err != nil {
		return err
	}
	st.heartbeat = time.NewTicker(s.heartbeat)
	defer st.heartbeat.Stop()
	// The first message says the stream is subscribed: a client that sends
	// an event after receiving it will see its effects. (It also flushes
	// the response headers.)
	if err := send(heartbeat(headSeq)); err != nil {
		return err
	}
	// A finished handler's stream is complete in the store: replay it and
	// end, even when the caller resumes after the terminal record.
	for first := true; ; first = false {
		if !first {
			st.sub = s.hub.Subscribe(id)
		}
		// A client that resumes at the head has nothing to replay.
		if !first || st.last < headSeq || finished {
			done, err := st.replay(&st.last, st.emit)
			if done || err != nil || finished {
				return err
			}
		}
		if done, err := st.follow(); done || err != nil {
			return err
		}
	}
}

// emitFunc sends a record of a stream (emit).
type emitFunc func(r *wfdv1.Record, held int64) (done bool, err error)

// streamRun is one StreamEvents stream: where it is (last), and what it
// follows (sub).
type streamRun struct {
	ctx      context.Context
	id       string
	internal bool
	send     func(*wfdv1.StreamEventsResponse) error
	hub      *live.Hub
	budget   *StreamBudget
	draining <-chan struct{}
	every    time.Duration
	// replay sends what the store has after *last.
	replay func(last *uint64, emit emitFunc) (bool, error)

	sub       *live.Subscription
	last      uint64
	heartbeat *time.Ticker
}

// emit sends r, with held bytes of the stream budget already taken for it
// (a replayed record) or none (a live one: send takes them); done once
// the handler's terminal record is sent.
func (st *streamRun) emit(r *wfdv1.Record, held int64) (done bool, err error) {
	if r.GetSeq() <= st.last {
		st.budget.release(held)
		return false, nil
	}
	if !st.internal && internalRecord(r) {
		st.budget.release(held)
		st.last = r.GetSeq()
		return false, nil
	}
	// Stored records may hold what JSON cannot (see live.CleanRecord).
	msg := &wfdv1.StreamEventsResponse{Kind: &wfdv1.StreamEventsResponse_Record{Record: live.CleanRecord(r)}}
	if err := st.budget.send(st.ctx, held, int64(proto.Size(msg)), st.last, func() error { return st.send(msg) }); err != nil {
		return false, err
	}
	st.last = r.GetSeq()
	st.heartbeat.Reset(st.every)
	return r.GetHandlerFinished() != nil, nil
}

// follow sends what commits reach the subscription, and heartbeats,
// until the stream ends (done, or an error) or must catch up from the
// store (false, nil: it lagged, met a gap, or another replica committed).
func (st *streamRun) follow() (done bool, err error) {
	for {
		select {
		case b, ok := <-st.sub.Ch:
			if !ok {
				return false, nil // lagged: catch up from the store
			}
			st.sub.Taken(b)
			if len(b.Recs) > 0 && b.Recs[0].GetSeq() > st.last+1 {
				st.hub.Unsubscribe(st.id, st.sub)
				return false, nil // a gap: the store has what is missing
			}
			for _, r := range b.Recs {
				if done, err := st.emit(r, 0); done || err != nil {
					return true, err
				}
			}
		case <-st.sub.Poke:
			// Another replica committed records of it (the commit feed).
			if done, err := st.replay(&st.last, st.emit); done || err != nil {
				return true, err
			}
		case <-st.heartbeat.C:
			if err := st.send(heartbeat(st.last)); err != nil {
				return true, err
			}
		case <-st.draining:
			// The server is shutting down, not the caller: tell it to
			// resume (from another server, or this one once it is back).
			return true, errStreamDrained(st.last)
		case <-st.ctx.Done():
			return true, st.ctx.Err()
		}
	}
}

// heartbeat is the message that says the stream is at seq.
func heartbeat(seq uint64) *wfdv1.StreamEventsResponse {
	return &wfdv1.StreamEventsResponse{Kind: &wfdv1.StreamEventsResponse_Heartbeat{Heartbeat: &wfdv1.Heartbeat{LastSeq: seq}}}
}

// replay sends stored records after *last. Its pages hold about
// StreamLimits.BufferBytes: the first read takes one record, the next
// as many as fit by the largest record seen so far (at most replayPage),
// so a stream of large records never reads hundreds of them ahead of its
// client; and a page's bytes are the stream budget's until they are sent.
func (s *Service) replay(ctx context.Context, id string, last *uint64, emit emitFunc) (bool, error) {
	page, largest := 1, int64(0)
	for {
		// The page's bytes come out of the stream budget before it is
		// read (a guess, then what it holds), so streams that cannot
		// send hold no more pages than the budget allows.
		res := &reservation{b: s.streams}
		n, err := s.streams.acquire(ctx, int64(page)*max(largest, replayGuess), *last)
		if err != nil {
			return false, err
		}
		res.n = n
		done, full, err := s.replayPage(ctx, id, last, page, &largest, res, emit)
		res.close()
		if done || err != nil || !full {
			return done, err
		}
		page = int(min(max(s.streams.limits.BufferBytes/max(largest, 1), 1), replayPage))
	}
}

// replayGuess is the size a replay guesses for a record before it has
// read one.
const replayGuess = 64 << 10

// replayPage reads and sends one page of up to page records after *last,
// their bytes held in res; full reports that the page was full (more may
// follow).
func (s *Service) replayPage(ctx context.Context, id string, last *uint64, page int, largest *int64, res *reservation,
	emit emitFunc,
) (done, full bool, err error) {
	recs, err := s.store.ReadRecords(ctx, id, *last, page)
	if err != nil {
		return false, false, err
	}
	var total int64
	for _, raw := range recs {
		total += int64(len(raw.Data))
		*largest = max(*largest, int64(len(raw.Data)))
	}
	if err := res.resize(ctx, total, *last); err != nil {
		return false, false, err
	}
	for _, raw := range recs {
		var r wfdv1.Record
		if err := proto.Unmarshal(raw.Data, &r); err != nil {
			return false, false, fmt.Errorf("%w: record %d of handler %s: %w", persistence.ErrCorrupt, raw.Seq, id, err)
		}
		done, err := emit(&r, res.take(int64(len(raw.Data))))
		if done || err != nil {
			return done, false, err
		}
	}
	return false, len(recs) == page, nil
}

// errStreamDrained ends a stream at shutdown.
func errStreamDrained(last uint64) error {
	return fmt.Errorf("%w: server is shutting down; resume after seq %d", apierr.ErrUnavailable, last)
}
