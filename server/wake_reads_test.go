package server_test

import (
	"context"
	"sync"
	"testing"

	"connectrpc.com/connect"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/faultstore"
	"github.com/wfd-dev/wfd/server"
)

// handlerReads counts, through the store double, the store reads that
// name handler id, by method.
type handlerReads struct {
	mu sync.Mutex
	n  map[string]int
}

func countReads(fs *faultstore.Store, id string) *handlerReads {
	r := &handlerReads{n: map[string]int{}}
	note := func(method, hid string) {
		if hid == id {
			r.mu.Lock()
			r.n[method]++
			r.mu.Unlock()
		}
	}
	fs.Update(func(f *faultstore.Funcs) {
		f.GetHandlerFunc = func(ctx context.Context, hid string) (persistence.Handler, error) {
			note("GetHandler", hid)
			return fs.Inner().GetHandler(ctx, hid)
		}
		f.LoadHandlerFunc = func(ctx context.Context, hid string) (persistence.Handler, []byte, error) {
			note("LoadHandler", hid)
			return fs.Inner().LoadHandler(ctx, hid)
		}
		f.LoadSnapshotFunc = func(ctx context.Context, hid string) ([]byte, error) {
			note("LoadSnapshot", hid)
			return fs.Inner().LoadSnapshot(ctx, hid)
		}
		f.ReadRecordsFunc = func(ctx context.Context, hid string, after uint64, limit int) ([]persistence.Record, error) {
			note("ReadRecords", hid)
			return fs.Inner().ReadRecords(ctx, hid, after, limit)
		}
	})
	return r
}

func (r *handlerReads) counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.n))
	for k, v := range r.n {
		out[k] = v
	}
	return out
}

// TestWakeIsOneRead wakes a released handler with an event and counts the
// store reads of that handler the call makes: one LoadHandler (metadata
// and checkpoint together), nothing else; the answer comes from what the
// journal committed, not from reading the handler back. An event the
// handler would refuse is refused after that one read, and nothing is
// loaded for it.
func TestWakeIsOneRead(t *testing.T) {
	f := startFaulty(t, server.Options{Workflows: testWorkflows()})
	c := f.client
	h := run(t, c, "approval", nil)
	waitIdle(t, c, h.HandlerId)
	released := release(t, c, h.HandlerId)

	reads := countReads(f.fs, h.HandlerId)
	_, err := sendEv(t, c, h.HandlerId, "no-such-type", nil)
	wantCode(t, err, connect.CodeInvalidArgument, "does not accept")
	if got := reads.counts(); len(got) != 1 || got["LoadHandler"] != 1 {
		t.Fatalf("a refused event to a released handler read %v, want one LoadHandler", got)
	}
	if got := getHandler(t, c, h.HandlerId); got.LastSeq != released.LastSeq || got.Idle == nil {
		t.Fatalf("a refused event changed the handler: %v", got)
	}

	reads = countReads(f.fs, h.HandlerId)
	answer, err := sendEv(t, c, h.HandlerId, "approval", map[string]any{"approved": true})
	if err != nil {
		t.Fatal(err)
	}
	if got := reads.counts(); len(got) != 1 || got["LoadHandler"] != 1 {
		t.Fatalf("waking a released handler read %v, want one LoadHandler", got)
	}
	if answer.LastSeq <= released.LastSeq {
		t.Fatalf("SendEvent answered last_seq %d, not past the released handler's %d", answer.LastSeq, released.LastSeq)
	}
}
