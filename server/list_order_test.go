package server_test

import (
	"slices"
	"testing"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// TestListHandlersByCreation: newest first is by creation time whatever
// ids callers choose, so "zzz-late", started first, lists last, with and
// without filters, in pages, and after a restart on the same store.
func TestListHandlersByCreation(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir})
	c := ts.client()
	var created []string // oldest first
	for _, id := range []string{"zzz-late", "aaa-middle", "", "mmm-new"} {
		res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: id})
		if err != nil {
			t.Fatalf("RunWorkflow(%q): %v", id, err)
		}
		waitIdle(t, c, res.Handler.HandlerId)
		created = append(created, res.Handler.HandlerId)
	}
	want := slices.Clone(created)
	slices.Reverse(want)

	check := func(t *testing.T) {
		t.Helper()
		c := ts.client()
		for _, req := range []*wfdv1.ListHandlersRequest{
			{},
			{Workflow: "approval"},
			{IdleOnly: true, Statuses: []wfdv1.HandlerStatus{wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING}},
		} {
			for _, size := range []int32{1, 3, 0} {
				req.PageSize, req.PageToken = size, ""
				var got []string
				for {
					res, err := c.ListHandlers(ctxT(t), req)
					if err != nil {
						t.Fatal(err)
					}
					for _, h := range res.Handlers {
						got = append(got, h.HandlerId)
					}
					if req.PageToken = res.NextPageToken; req.PageToken == "" {
						break
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("ListHandlers(%v) = %v, want %v (newest first by creation)", req, got, want)
				}
			}
		}
	}
	check(t)
	ts.stop()
	ts = startServer(t, serverConfig{dir: dir})
	check(t)
}
