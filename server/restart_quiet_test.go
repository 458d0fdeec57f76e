package server_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
)

// recordsSoFar returns a handler's stream up to its current last record,
// without waiting for more (the handler may still be running).
func recordsSoFar(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) []*wfdv1.Record {
	t.Helper()
	last := getH(t, c, id).GetLastSeq()
	if last == 0 {
		return nil
	}
	s, err := c.StreamEvents(ctxT(t), &wfdv1.StreamEventsRequest{HandlerId: id, IncludeInternal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	var out []*wfdv1.Record
	for s.Receive() {
		if r := s.Msg().GetRecord(); r != nil {
			out = append(out, r)
			if r.Seq >= last {
				return out
			}
		}
	}
	t.Fatalf("stream of %s ended before record %d: %v", id, last, s.Err())
	return nil
}

func getH(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) *wfdv1.Handler {
	t.Helper()
	res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
	if err != nil {
		t.Fatalf("GetHandler(%s): %v", id, err)
	}
	return res.Handler
}

// waitUpdated polls until the handler's updated_at is after since.
func waitUpdated(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string, since time.Time) *wfdv1.Handler {
	t.Helper()
	var h *wfdv1.Handler
	testwait.Until(t, func() error {
		if h = getH(t, c, id); !h.GetUpdatedAt().AsTime().After(since) {
			return fmt.Errorf("handler %s not updated after %v: %v", id, since, h)
		}
		return nil
	})
	return h
}

// batchHalfDone starts a batch parent with two children waiting for "go",
// lets the first go, and returns once the parent has durably taken its
// result and waits for the second: parent, done child, waiting child.
func batchHalfDone(t *testing.T, c wfdv1connect.WorkflowServiceClient) (parent, done, waiting string) {
	t.Helper()
	p := waitIdle(t, c, run(t, c, "batch", map[string]any{"n": 2.0, "job_wait": "go"}).HandlerId)
	kids := p.GetChildren()
	if len(kids) != 2 {
		t.Fatalf("batch parent has children %v, want 2", kids)
	}
	for _, k := range kids {
		waitIdle(t, c, k)
	}
	if _, err := sendEv(t, c, kids[0], "go", nil); err != nil {
		t.Fatal(err)
	}
	// Taking a child's result writes no record but moves updated_at.
	waitUpdated(t, c, p.HandlerId, p.GetUpdatedAt().AsTime())
	if st := getH(t, c, kids[0]).Status; st != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("first child is %v", st)
	}
	return p.HandlerId, kids[0], kids[1]
}

// TestRestartsChangeNothing restarts a server several times on the same
// store while nothing happens: a batch parent waiting for its second child
// (the first done), the waiting child, an approval handler released before
// the restarts and one idle in memory when the server stops. No restart
// appends a record or moves updated_at (the parent used to get a
// handler_restored record each time, because start-up told it again about
// the child it already had), and none loads a handler. The handlers then
// still finish: the parent learns of its second child.
func TestRestartsChangeNothing(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir})
	c := ts.client()
	parent, done, waiting := batchHalfDone(t, c)
	released := run(t, c, "approval", nil).HandlerId
	waitIdle(t, c, released)
	release(t, c, released)
	idle := run(t, c, "approval", nil).HandlerId
	waitIdle(t, c, idle)

	ids := []string{parent, done, waiting, released, idle}
	before := map[string]*wfdv1.Handler{}
	for _, id := range ids {
		before[id] = getH(t, c, id)
	}
	const restarts = 4
	for i := range restarts {
		ts.stop()
		ts = startServer(t, serverConfig{dir: dir})
		c = ts.client()
		for _, id := range ids {
			h, was := getH(t, c, id), before[id]
			if h.GetLastSeq() != was.GetLastSeq() || !h.GetUpdatedAt().AsTime().Equal(was.GetUpdatedAt().AsTime()) {
				t.Fatalf("restart %d: handler %s moved from last_seq %d, updated_at %v to %d, %v; stream %s", i+1, id,
					was.GetLastSeq(), was.GetUpdatedAt().AsTime(), h.GetLastSeq(), h.GetUpdatedAt().AsTime(), kinds(recordsSoFar(t, c, id)))
			}
		}
		if k := kinds(recordsSoFar(t, c, parent)); strings.Contains(k, "restored") {
			t.Fatalf("restart %d: parent's stream %s", i+1, k)
		}
		if s := stats(t, c); s.RehydrationsTotal != 0 {
			t.Fatalf("restart %d loaded %d handlers, want none: %v", i+1, s.RehydrationsTotal, s)
		}
	}

	// Real work after the restarts: the second child goes, the parent is
	// woken (one handler_restored, for a real change) and completes with
	// both children.
	if _, err := sendEv(t, c, waiting, "go", nil); err != nil {
		t.Fatal(err)
	}
	recs := collect(t, c, parent, 0)
	k := kinds(recs)
	if strings.Count(k, "restored") != 1 || !strings.HasSuffix(k, "COMPLETED") {
		t.Fatalf("parent's stream after the second child: %s", k)
	}
	if got := strs(recs[len(recs)-1].GetHandlerFinished(), "completed"); len(got) != 2 {
		t.Fatalf("parent completed with %v, want both children", got)
	}
	if _, err := sendEv(t, c, released, "approval", map[string]any{"approved": true}); err != nil {
		t.Fatal(err)
	}
	if k := kinds(collect(t, c, released, 0)); !strings.HasSuffix(k, "COMPLETED") {
		t.Fatalf("released approval after the restarts: %s", k)
	}
}

// TestRestartReportsUnseenChildEnd: a child that ended while its parent
// never heard of it (the server stopped in between; simulated here by
// marking the child completed in the store while the server is down) is
// still reported at start-up, and the parent completes.
func TestRestartReportsUnseenChildEnd(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir})
	c := ts.client()
	parent, _, waiting := batchHalfDone(t, c)
	ts.stop()

	store, err := bolt.Open(filepath.Join(dir, "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	meta, err := store.GetHandler(context.Background(), waiting)
	if err != nil {
		t.Fatal(err)
	}
	meta.Status, meta.CompletedAt = persistence.StatusCompleted, time.Now()
	meta.IdleSince, meta.Waiters = time.Time{}, nil
	if err := store.Write(context.Background(), persistence.Change{Handler: meta}); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	ts = startServer(t, serverConfig{dir: dir})
	recs := collect(t, ts.client(), parent, 0)
	if got := strs(recs[len(recs)-1].GetHandlerFinished(), "completed"); len(got) != 2 {
		t.Fatalf("parent finished with %v (stream %s), want both children completed", got, kinds(recs))
	}
}
