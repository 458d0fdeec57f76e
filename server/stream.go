package server

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

func (v *service) StreamEvents(ctx context.Context, req *wfdv1.StreamEventsRequest, out *connect.ServerStream[wfdv1.StreamEventsResponse]) error {
	if err := checkHandlerID(req.GetHandlerId()); err != nil {
		return err
	}
	if req.GetFromHead() && req.GetAfterSeq() != 0 {
		return fmt.Errorf("%w: from_head and after_seq %d: a stream starts at the head or after a record, not both", apierr.ErrInvalid, req.GetAfterSeq())
	}
	opts := streamOptions{after: req.GetAfterSeq(), fromHead: req.GetFromHead(), internal: req.GetIncludeInternal()}
	return v.s.stream(ctx, req.GetHandlerId(), opts, func(r *wfdv1.StreamEventsResponse) error { return out.Send(r) })
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
// as a poke (feed.go): the stream reads them from the store, after the
// last it sent, so it follows the handler wherever it is live.
func (s *Server) stream(ctx context.Context, id string, opts streamOptions, send func(*wfdv1.StreamEventsResponse) error) error {
	// Subscribe before reading the metadata: what commits after the read
	// reaches the subscription, what committed before is in the store.
	sub := s.hub.Subscribe(id)
	meta, err := s.rt.Meta(ctx, id)
	// Only these two are used from here on, so the metadata, which may
	// hold a large result, is not kept alive by a stream that lives long
	// (or is not read).
	headSeq, finished := meta.LastSeq, meta.Status != persistence.StatusRunning
	after := opts.after
	if opts.fromHead {
		after = headSeq
	}
	if err == nil && after > headSeq {
		err = fmt.Errorf("%w: after_seq %d is beyond the last record of handler %s (%d)", apierr.ErrInvalid, after, id, headSeq)
	}
	if err != nil {
		s.hub.Unsubscribe(id, sub)
		return err
	}
	// A finished handler's stream is complete in the store: replay it and
	// end, even when the caller resumes after the terminal record.
	last := after
	heartbeat := time.NewTicker(s.opts.Heartbeat)
	defer heartbeat.Stop()
	// emit sends r, with held bytes of the stream budget already taken
	// for it (a replayed record) or none (a live one: send takes them).
	emit := func(r *wfdv1.Record, held int64) (done bool, err error) {
		if r.GetSeq() <= last {
			s.streams.release(held)
			return false, nil
		}
		if !opts.internal && internalRecord(r) {
			s.streams.release(held)
			last = r.GetSeq()
			return false, nil
		}
		// Stored records may hold what JSON cannot (see live.CleanRecord).
		msg := &wfdv1.StreamEventsResponse{Kind: &wfdv1.StreamEventsResponse_Record{Record: live.CleanRecord(r)}}
		if err := s.streams.send(ctx, held, int64(proto.Size(msg)), last, func() error { return send(msg) }); err != nil {
			return false, err
		}
		last = r.GetSeq()
		heartbeat.Reset(s.opts.Heartbeat)
		return r.GetHandlerFinished() != nil, nil
	}
	// The first message says the stream is subscribed: a client that sends
	// an event after receiving it will see its effects. (It also flushes
	// the response headers.)
	if err := send(&wfdv1.StreamEventsResponse{Kind: &wfdv1.StreamEventsResponse_Heartbeat{Heartbeat: &wfdv1.Heartbeat{LastSeq: headSeq}}}); err != nil {
		s.hub.Unsubscribe(id, sub)
		return err
	}
	for first := true; ; first = false {
		if !first {
			sub = s.hub.Subscribe(id)
		}
		// A client that resumes at the head has nothing to replay.
		if !first || last < headSeq || finished {
			done, err := s.replay(ctx, id, &last, emit)
			if done || err != nil || finished {
				s.hub.Unsubscribe(id, sub)
				return err
			}
		}
	follow:
		for {
			select {
			case b, ok := <-sub.Ch:
				if !ok {
					break follow // lagged: catch up from the store
				}
				sub.Taken(b)
				recs := b.Recs
				if len(recs) > 0 && recs[0].GetSeq() > last+1 {
					s.hub.Unsubscribe(id, sub)
					break follow // a gap: the store has what is missing
				}
				for _, r := range recs {
					done, err := emit(r, 0)
					if done || err != nil {
						s.hub.Unsubscribe(id, sub)
						return err
					}
				}
			case <-sub.Poke:
				// Another replica committed records of it (feed.go).
				done, err := s.replay(ctx, id, &last, emit)
				if done || err != nil {
					s.hub.Unsubscribe(id, sub)
					return err
				}
			case <-heartbeat.C:
				if err := send(&wfdv1.StreamEventsResponse{Kind: &wfdv1.StreamEventsResponse_Heartbeat{Heartbeat: &wfdv1.Heartbeat{LastSeq: last}}}); err != nil {
					s.hub.Unsubscribe(id, sub)
					return err
				}
			case <-s.draining:
				// The server is shutting down, not the caller: tell it to
				// resume (from another server, or this one once it is back).
				s.hub.Unsubscribe(id, sub)
				return errStreamDrained(last)
			case <-ctx.Done():
				s.hub.Unsubscribe(id, sub)
				return ctx.Err()
			}
		}
	}
}

// replay sends stored records after *last. Its pages hold about
// StreamLimits.BufferBytes: the first read takes one record, the next
// as many as fit by the largest record seen so far (at most replayPage),
// so a stream of large records never reads hundreds of them ahead of its
// client; and a page's bytes are the stream budget's until they are sent.
func (s *Server) replay(ctx context.Context, id string, last *uint64, emit func(*wfdv1.Record, int64) (bool, error)) (bool, error) {
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
func (s *Server) replayPage(ctx context.Context, id string, last *uint64, page int, largest *int64, res *reservation,
	emit func(*wfdv1.Record, int64) (bool, error),
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
