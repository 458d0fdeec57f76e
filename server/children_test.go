package server_test

import (
	"slices"
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

func strs(v *wfdv1.HandlerFinished, field string) []string {
	var out []string
	for _, x := range v.GetResult().Fields[field].GetListValue().GetValues() {
		out = append(out, x.GetStringValue())
	}
	return out
}

func TestChildWorkflows(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir})
	c := ts.client()
	n := 100
	if raceEnabled {
		n = 30
	}
	fails := []any{1.0, 7.0, 22.0}
	h := run(t, c, "batch", map[string]any{"n": float64(n), "fail": fails})
	recs := collect(t, c, h.HandlerId, 0)
	fin := recs[len(recs)-1].GetHandlerFinished()
	completed, failed := strs(fin, "completed"), strs(fin, "failed")
	if len(completed) != n-3 || len(failed) != 3 || len(strs(fin, "pending")) != 0 {
		t.Fatalf("batch: %d completed, %d failed (%v)", len(completed), len(failed), fin)
	}
	child, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: failed[0]})
	if err != nil || child.Handler.ParentId != h.HandlerId || child.Handler.Status != wfdv1.HandlerStatus_HANDLER_STATUS_FAILED {
		t.Fatalf("failed child %v %v", child, err)
	}
	parent, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: h.HandlerId})
	if err != nil || len(parent.Handler.Children) != n || !slices.Contains(parent.Handler.Children, failed[0]) {
		t.Fatalf("parent's children %v %v", parent.GetHandler().GetChildren(), err)
	}
}

// TestParentReleasedWhileChildrenRun: the parent is idle while it waits,
// can be released, and is woken by its children's completion, across a
// restart.
func TestParentReleasedWhileChildrenRun(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir})
	c := ts.client()
	h := run(t, c, "batch", map[string]any{"n": 3.0, "job_wait": "go"})
	idle := waitIdle(t, c, h.HandlerId)
	kids := idle.Idle.Waiters[0].Children
	if len(kids) != 3 {
		t.Fatalf("waiter %v", idle.Idle.Waiters)
	}
	for _, k := range kids {
		waitIdle(t, c, k)
	}
	release(t, c, h.HandlerId)
	if _, err := sendEv(t, c, kids[0], "go", nil); err != nil {
		t.Fatal(err)
	}
	ts.stop()
	ts = startServer(t, serverConfig{dir: dir})
	c = ts.client(connect.WithGRPC())
	for _, k := range kids[1:] {
		if _, err := sendEv(t, c, k, "go", nil); err != nil {
			t.Fatal(err)
		}
	}
	recs := collect(t, c, h.HandlerId, 0)
	fin := recs[len(recs)-1].GetHandlerFinished()
	if got := strs(fin, "completed"); len(got) != 3 {
		t.Fatalf("finished %v (stream %s)", fin, kinds(recs))
	}
}

func TestCancelParentCancelsChildren(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	h := run(t, c, "batch", map[string]any{"n": 4.0, "job_wait": "go"})
	idle := waitIdle(t, c, h.HandlerId)
	kids := idle.Idle.Waiters[0].Children
	for _, k := range kids {
		waitIdle(t, c, k)
	}
	if _, err := c.CancelHandler(ctxT(t), &wfdv1.CancelHandlerRequest{HandlerId: h.HandlerId}); err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		recs := collect(t, c, k, 0)
		if st := recs[len(recs)-1].GetHandlerFinished().GetStatus(); st != wfdv1.HandlerStatus_HANDLER_STATUS_CANCELLED {
			t.Fatalf("child %s ended %v", k, st)
		}
	}
}
