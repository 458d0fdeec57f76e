package histcheck

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// ReadFinals reads every handler in ids through random replicas on w
// goroutines (see ReadFinal).
func ReadFinals(ctx context.Context, c *Cluster, h *History, ids []string, w int, seed uint64) map[string]Final {
	out := make(map[string]Final, len(ids))
	var mu sync.Mutex
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := range max(1, w) {
		k := c.Caller(h, rand.New(rand.NewPCG(seed, uint64(200+g))), 10*time.Second)
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(ids) || ctx.Err() != nil {
					return
				}
				f := ReadFinal(ctx, k, ids[i])
				mu.Lock()
				out[ids[i]] = f
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// ReadFinal reads handler id as it is once everything has healed:
// GetHandler, every record from the first, and GetHandler again; if the
// two GetHandlers differ (the handler moved while it was read: an idle one
// released), it reads again, a few times at most.
func ReadFinal(ctx context.Context, k *Caller, id string) Final {
	var f Final
	for attempt := 0; attempt < 4; attempt++ {
		h1, via, err := k.get(ctx, id, false)
		if connect.CodeOf(err) == connect.CodeNotFound {
			return Final{NotFound: true, Replica: via}
		}
		if err != nil {
			return Final{ReadErr: err.Error()}
		}
		recs, err := readRecords(ctx, k, id, h1)
		if err != nil {
			return Final{ReadErr: err.Error()}
		}
		h2, via, err := k.get(ctx, id, false)
		if err != nil {
			return Final{ReadErr: err.Error()}
		}
		f = Final{Replica: via, Status: h2.GetStatus(), LastSeq: h2.GetLastSeq(), Residency: h2.GetResidency(),
			Idle: h2.GetIdle() != nil, Result: h2.GetResult().AsMap(), Error: h2.GetError(), Records: recs}
		if h2.GetResult() == nil {
			f.Result = nil
		}
		if h1.GetStatus() == h2.GetStatus() && h1.GetLastSeq() == h2.GetLastSeq() {
			return f
		}
	}
	return f
}

// errStalled ends a stream that stopped short of the last record.
var errStalled = errors.New("histcheck: stream stalled before the last record")

// readRecords reads the handler's records with StreamEvents (internal
// records included), from the first, until it has read h's last_seq (a
// running handler's stream would follow it forever). A stream ends after
// the first terminal record: if last_seq is beyond it, the records after it
// are read with a stream resumed there; for a finished handler it always
// looks past the terminal record once, so that a record after it shows.
func readRecords(ctx context.Context, k *Caller, id string, h *wfdv1.Handler) ([]Rec, error) {
	rr := &recordReader{id: id, target: h.GetLastSeq(), finished: terminal(h.GetStatus())}
	peeked := false
	for round := 0; round < 16; round++ {
		err := k.do(ctx, "", id, rr.stream)
		switch {
		case errors.Is(err, errStalled):
			return rr.recs, nil // the checker sees the records short of last_seq
		case connect.CodeOf(err) == connect.CodeInvalidArgument && rr.after > 0:
			return rr.recs, nil // resumed beyond the last record: nothing after it
		case err != nil:
			return rr.recs, fmt.Errorf("stream %s after #%d: %w", id, rr.after, err)
		case rr.reached:
			return rr.recs, nil
		case !rr.ended:
			return rr.recs, nil
		case rr.after < rr.target:
			continue // a record after the terminal one: read on
		case rr.finished && !peeked && rr.after > 0:
			peeked = true
			continue
		default:
			return rr.recs, nil
		}
	}
	return rr.recs, nil
}

// recordReader is what readRecords has read of handler id: the records,
// the last one's seq (after) and the last_seq to read to (target, raised
// by heartbeats); finished: the handler had finished when read.
type recordReader struct {
	id            string
	recs          []Rec
	after, target uint64
	finished      bool
	// Of the latest stream: ended, closed by the server without an error;
	// reached, the running handler's target read.
	ended, reached bool
}

// stream reads one StreamEvents stream of the handler through r, resuming
// after the last record read, until it ends or, for a running handler,
// until the target. A stream that stops short of it with DeadlineExceeded
// once it has sent something is errStalled.
func (rr *recordReader) stream(ctx context.Context, r *Replica) error {
	rr.ended, rr.reached = false, false
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := r.Client().StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: rr.id, AfterSeq: rr.after, IncludeInternal: true})
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	opened := false
	for s.Receive() {
		opened = true
		if hb := s.Msg().GetHeartbeat(); hb != nil {
			rr.target = max(rr.target, hb.GetLastSeq())
			continue
		}
		rec := toRec(s.Msg().GetRecord())
		rr.recs = append(rr.recs, rec)
		rr.after = rec.Seq
		if !rec.Terminal && !rr.finished && rr.after >= rr.target {
			rr.reached = true
			return nil
		}
	}
	err = s.Err()
	if err == nil {
		rr.ended = true
	}
	if opened && connect.CodeOf(err) == connect.CodeDeadlineExceeded {
		return fmt.Errorf("%w: read to #%d of %d: %w", errStalled, rr.after, rr.target, err)
	}
	return err
}

// toRec keeps what the checker needs of a record.
func toRec(r *wfdv1.Record) Rec {
	m := r.ProtoReflect()
	kind := "unknown"
	if fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("kind")); fd != nil {
		kind = string(fd.Name())
	}
	out := Rec{Seq: r.GetSeq(), Kind: kind}
	if f := r.GetHandlerFinished(); f != nil {
		out.Terminal, out.Status, out.Error = true, f.GetStatus(), f.GetError()
		if f.GetResult() != nil {
			out.Result = f.GetResult().AsMap()
		}
	}
	return out
}
