package server_test

import (
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/server"
)

func deleteHandler(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) error {
	t.Helper()
	_, err := c.DeleteHandler(ctxT(t), &wfdv1.DeleteHandlerRequest{HandlerId: id})
	return err
}

// waitGone waits until GetHandler says NOT_FOUND.
func waitGone(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) {
	t.Helper()
	testwait.For(t, "handler "+id+" is deleted", func() bool {
		_, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
		return connect.CodeOf(err) == connect.CodeNotFound
	})
}

func tasksOf(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) int {
	t.Helper()
	res, err := c.ListTasks(ctxT(t), &wfdv1.ListTasksRequest{HandlerId: id})
	if err != nil {
		t.Fatal(err)
	}
	return len(res.Tasks)
}

func listed(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) bool {
	t.Helper()
	res, err := c.ListHandlers(ctxT(t), &wfdv1.ListHandlersRequest{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Handlers {
		if h.HandlerId == id {
			return true
		}
	}
	return false
}

// deletedTotal reads wfd_handlers_deleted_total{reason}.
func deletedTotal(t *testing.T, addr, reason string) float64 {
	t.Helper()
	fam := scrape(t, addr)["wfd_handlers_deleted_total"]
	for _, m := range fam.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "reason" && l.GetValue() == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("wfd_handlers_deleted_total{reason=%q} not in /metrics", reason)
	return 0
}

// TestDeleteHandler deletes a finished handler: its metadata, records,
// tasks and checkpoint go in one commit, running ones are refused, the
// id can be used again, and what it published stays in the log.
func TestDeleteHandler(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()

	err := deleteHandler(t, c, "no-such-handler")
	wantCode(t, err, connect.CodeNotFound, "no-such-handler")
	err = deleteHandler(t, c, "")
	wantCode(t, err, connect.CodeInvalidArgument, "handler_id is required")

	// Running, in memory and released: refused.
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "expense", HandlerId: "exp-1", Input: st(t, map[string]any{"approver": "ada"})})
	if err != nil {
		t.Fatal(err)
	}
	h := res.Handler
	waitIdle(t, c, h.HandlerId)
	err = deleteHandler(t, c, h.HandlerId)
	wantCode(t, err, connect.CodeFailedPrecondition, "cancel it first")
	release(t, c, h.HandlerId)
	err = deleteHandler(t, c, h.HandlerId)
	wantCode(t, err, connect.CodeFailedPrecondition, "cancel it first")
	if n := tasksOf(t, c, h.HandlerId); n != 1 {
		t.Fatalf("%d tasks before the delete, want 1", n)
	}
	publish(t, c, "for-exp-1", map[string]any{"n": 1.0}, h.HandlerId)

	if _, err := c.CancelHandler(ctxT(t), &wfdv1.CancelHandlerRequest{HandlerId: h.HandlerId}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, h.HandlerId, wfdv1.HandlerStatus_HANDLER_STATUS_CANCELLED)
	before := stats(t, c).HandlersByStatus["cancelled"]
	if err := deleteHandler(t, c, h.HandlerId); err != nil {
		t.Fatalf("DeleteHandler of a cancelled handler: %v", err)
	}

	_, err = c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: h.HandlerId})
	wantCode(t, err, connect.CodeNotFound, h.HandlerId)
	err = deleteHandler(t, c, h.HandlerId)
	wantCode(t, err, connect.CodeNotFound, h.HandlerId)
	if listed(t, c, h.HandlerId) {
		t.Fatal("ListHandlers lists a deleted handler")
	}
	if n := tasksOf(t, c, h.HandlerId); n != 0 {
		t.Fatalf("%d tasks of a deleted handler, want 0", n)
	}
	if after := stats(t, c).HandlersByStatus["cancelled"]; after != before-1 {
		t.Fatalf("GetStats cancelled = %d after the delete, want %d", after, before-1)
	}
	// The published-event log is immutable: the event for it stays.
	evs, err := c.ListPublishedEvents(ctxT(t), &wfdv1.ListPublishedEventsRequest{HandlerId: h.HandlerId})
	if err != nil || len(evs.Events) != 1 {
		t.Fatalf("ListPublishedEvents of a deleted handler = %v, %v; want its event", evs, err)
	}

	// The id starts afresh: a new handler, a stream from 1, a new task.
	res, err = c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "expense", HandlerId: "exp-1", Input: st(t, map[string]any{"approver": "bob"})})
	if err != nil {
		t.Fatal(err)
	}
	if res.Handler.Status != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING || !res.Handler.CreatedAt.AsTime().After(h.CreatedAt.AsTime()) {
		t.Fatalf("RunWorkflow after the delete = %v, want a fresh running handler", res.Handler)
	}
	waitIdle(t, c, "exp-1")
	recs := collectUntilIdle(t, c, "exp-1")
	if len(recs) == 0 || recs[0].Seq != 1 {
		t.Fatalf("stream of the new handler starts at %v, want seq 1", recs)
	}
	tasks, err := c.ListTasks(ctxT(t), &wfdv1.ListTasksRequest{HandlerId: "exp-1"})
	if err != nil || len(tasks.Tasks) != 1 || tasks.Tasks[0].Assignee != "bob" {
		t.Fatalf("tasks of the new handler = %v, %v; want bob's one", tasks, err)
	}

	if got := deletedTotal(t, ts.addr, "request"); got != 1 {
		t.Fatalf("wfd_handlers_deleted_total{reason=request} = %v, want 1", got)
	}
}

// collectUntilIdle reads a running handler's stream so far.
func collectUntilIdle(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) []*wfdv1.Record {
	t.Helper()
	h, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.StreamEvents(ctxT(t), &wfdv1.StreamEventsRequest{HandlerId: id})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stream.Close() }()
	var out []*wfdv1.Record
	for stream.Receive() {
		if r := stream.Msg().GetRecord(); r != nil {
			out = append(out, r)
			if r.Seq >= h.Handler.LastSeq {
				return out
			}
		}
	}
	t.Fatalf("stream ended: %v", stream.Err())
	return nil
}

// TestDeleteChildOfRunningParent: a finished child may not go while its
// parent runs (a re-run of the parent's step would start it again), and
// may once the parent has finished; a finished parent may go while a
// child lives on.
func TestDeleteChildOfRunningParent(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	parent := run(t, c, "batch", map[string]any{"n": 2.0, "job_wait": "go"})
	waitIdle(t, c, parent.HandlerId)
	p, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: parent.HandlerId})
	if err != nil || len(p.Handler.Children) != 2 {
		t.Fatalf("parent = %v, %v; want 2 children", p, err)
	}
	first, second := p.Handler.Children[0], p.Handler.Children[1]
	waitIdle(t, c, first)
	if _, err := sendEv(t, c, first, "go", nil); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, first, wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED)
	err = deleteHandler(t, c, first)
	wantCode(t, err, connect.CodeFailedPrecondition, "still running")

	waitIdle(t, c, second)
	if _, err := sendEv(t, c, second, "go", nil); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, parent.HandlerId, wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED)
	if err := deleteHandler(t, c, parent.HandlerId); err != nil {
		t.Fatalf("DeleteHandler of the finished parent: %v", err)
	}
	// The children are handlers of their own: still there, and deletable
	// now that the parent is gone.
	for _, id := range []string{first, second} {
		if err := deleteHandler(t, c, id); err != nil {
			t.Fatalf("DeleteHandler of child %s: %v", id, err)
		}
	}
}

// TestRetention: the sweep deletes finished handlers once they have been
// finished for Options.Retention, in batches, never a running one nor a
// child of a running parent, and they stay deleted across a restart.
func TestRetention(t *testing.T) {
	dir := t.TempDir()
	retain := func(o *server.Options) {
		o.Retention = time.Millisecond
		o.RetentionInterval = 10 * time.Millisecond
		o.RetentionBatch = 2
	}
	ts := startServer(t, serverConfig{dir: dir, options: retain})
	c := ts.client()
	running := run(t, c, "expense", map[string]any{"approver": "ada"})
	parent := run(t, c, "batch", map[string]any{"n": 2.0, "job_wait": "go"})
	var done []string
	for range 5 {
		done = append(done, run(t, c, "echo", map[string]any{"x": 1.0}).HandlerId)
	}
	for _, id := range done {
		waitGone(t, c, id)
	}
	// A finished child of the running parent stays until the parent ends.
	waitIdle(t, c, parent.HandlerId)
	p, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: parent.HandlerId})
	if err != nil {
		t.Fatal(err)
	}
	child := p.Handler.Children[0]
	waitIdle(t, c, child)
	if _, err := sendEv(t, c, child, "go", nil); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, child, wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED)
	// Deleted handlers stay deleted after a restart on the same file.
	ts.stop()
	ts = startServer(t, serverConfig{dir: dir, options: retain})
	c = ts.client()
	for _, id := range done {
		_, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
		wantCode(t, err, connect.CodeNotFound, id)
	}
	// A handler that finished after the child is deleted: a sweep looked
	// at the child (oldest first) and stepped over it.
	waitGone(t, c, run(t, c, "echo", map[string]any{"x": 2.0}).HandlerId)
	for _, id := range []string{running.HandlerId, parent.HandlerId, child} {
		if _, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id}); err != nil {
			t.Fatalf("GetHandler(%s) with retention: %v; want it kept", id, err)
		}
	}
	// Once the parent ends, it and both children go.
	second := p.Handler.Children[1]
	waitIdle(t, c, second)
	if _, err := sendEv(t, c, second, "go", nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{parent.HandlerId, child, second} {
		waitGone(t, c, id)
	}
	if _, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: running.HandlerId}); err != nil {
		t.Fatalf("GetHandler of the running handler: %v", err)
	}
	if got := deletedTotal(t, ts.addr, "retention"); got != 4 {
		t.Fatalf("wfd_handlers_deleted_total{reason=retention} after the restart = %v, want 4", got)
	}
}

// TestListPublishedEvents lists the log through the API: latest first,
// filters, paging, bad requests.
func TestListPublishedEvents(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	var seqs []uint64
	for i, key := range []string{"a", "b", "a", "a"} {
		handler := ""
		if i == 2 {
			handler = "h-2"
		}
		seqs = append(seqs, publish(t, c, key, map[string]any{"i": float64(i)}, handler).Seq)
	}
	list := func(req *wfdv1.ListPublishedEventsRequest) []uint64 {
		t.Helper()
		var out []uint64
		for {
			res, err := c.ListPublishedEvents(ctxT(t), req)
			if err != nil {
				t.Fatalf("ListPublishedEvents(%v): %v", req, err)
			}
			for _, e := range res.Events {
				out = append(out, e.Seq)
			}
			if res.NextPageToken == "" {
				return out
			}
			req.PageToken = res.NextPageToken
		}
	}
	eq := func(what string, got []uint64, want ...uint64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: %v, want %v", what, got, want)
			}
		}
	}
	eq("all", list(&wfdv1.ListPublishedEventsRequest{}), seqs[3], seqs[2], seqs[1], seqs[0])
	eq("key a, pages of 1", list(&wfdv1.ListPublishedEventsRequest{Key: "a", PageSize: 1}), seqs[3], seqs[2], seqs[0])
	eq("handler", list(&wfdv1.ListPublishedEventsRequest{HandlerId: "h-2"}), seqs[2])
	eq("since the future", list(&wfdv1.ListPublishedEventsRequest{Since: timestamppb.New(time.Now().Add(time.Hour))}))

	res, err := c.ListPublishedEvents(ctxT(t), &wfdv1.ListPublishedEventsRequest{Key: "a", PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Events[0]
	if e.Key != "a" || e.EventId == "" || e.Data.Fields["i"].GetNumberValue() != 3 || e.PublishedAt == nil || e.PublishedBy != "" || e.HandlerId != "" {
		t.Fatalf("latest event of a = %v", e)
	}

	for _, tt := range []struct {
		req  *wfdv1.ListPublishedEventsRequest
		want string
	}{
		{&wfdv1.ListPublishedEventsRequest{PageToken: "garbage!"}, "page token"},
		{&wfdv1.ListPublishedEventsRequest{Key: "b", PageToken: res.NextPageToken}, "page token"},
		{&wfdv1.ListPublishedEventsRequest{PageSize: 1001}, "page_size"},
		{&wfdv1.ListPublishedEventsRequest{PageSize: -1}, "page_size"},
		{&wfdv1.ListPublishedEventsRequest{HandlerId: "bad id"}, "handler_id"},
	} {
		_, err := c.ListPublishedEvents(ctxT(t), tt.req)
		wantCode(t, err, connect.CodeInvalidArgument, tt.want)
	}
}

// TestPublishedBy: with authentication on, an event records who
// published it (the token's subject), whatever the request says; a
// publisher may list the log, and only an operator may delete.
func TestPublishedBy(t *testing.T) {
	ts := startAuthServer(t, newJWTIssuer(t), "")
	pub := ts.client(bearer("publisher-token"))
	publish(t, pub, "signed", map[string]any{"n": 1.0}, "")
	res, err := pub.ListPublishedEvents(ctxT(t), &wfdv1.ListPublishedEventsRequest{Key: "signed"})
	if err != nil || len(res.Events) != 1 {
		t.Fatalf("ListPublishedEvents = %v, %v", res, err)
	}
	if got := res.Events[0].PublishedBy; got != "publisher-user" {
		t.Fatalf("published_by = %q, want publisher-user", got)
	}
	_, err = pub.DeleteHandler(ctxT(t), &wfdv1.DeleteHandlerRequest{HandlerId: "any"})
	wantCode(t, err, connect.CodePermissionDenied, "")
	_, err = ts.client(bearer("operator-token")).DeleteHandler(ctxT(t), &wfdv1.DeleteHandlerRequest{HandlerId: "any"})
	wantCode(t, err, connect.CodeNotFound, "any")
}
