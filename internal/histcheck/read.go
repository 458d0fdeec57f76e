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
	var recs []Rec
	after, target := uint64(0), h.GetLastSeq()
	finished := terminal(h.GetStatus())
	peeked := false
	for round := 0; round < 16; round++ {
		var ended, reached bool
		err := k.do(ctx, "", id, func(ctx context.Context, r *Replica) error {
			ended, reached = false, false
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			s, err := r.Client().StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: id, AfterSeq: after, IncludeInternal: true})
			if err != nil {
				return err
			}
			defer func() { _ = s.Close() }()
			opened := false
			for s.Receive() {
				opened = true
				if hb := s.Msg().GetHeartbeat(); hb != nil {
					target = max(target, hb.GetLastSeq())
					continue
				}
				rec := toRec(s.Msg().GetRecord())
				recs = append(recs, rec)
				after = rec.Seq
				if !rec.Terminal && !finished && after >= target {
					reached = true
					return nil
				}
			}
			err = s.Err()
			if err == nil {
				ended = true
			}
			if opened && connect.CodeOf(err) == connect.CodeDeadlineExceeded {
				return fmt.Errorf("%w: read to #%d of %d: %w", errStalled, after, target, err)
			}
			return err
		})
		switch {
		case errors.Is(err, errStalled):
			return recs, nil // the checker sees the records short of last_seq
		case connect.CodeOf(err) == connect.CodeInvalidArgument && after > 0:
			return recs, nil // resumed beyond the last record: nothing after it
		case err != nil:
			return recs, fmt.Errorf("stream %s after #%d: %w", id, after, err)
		case reached:
			return recs, nil
		case !ended:
			return recs, nil
		case after < target:
			continue // a record after the terminal one: read on
		case finished && !peeked && after > 0:
			peeked = true
			continue
		default:
			return recs, nil
		}
	}
	return recs, nil
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
