package server_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"
)

func run(t *testing.T, c wfdv1connect.WorkflowServiceClient, wf string, input map[string]any) *wfdv1.Handler {
	t.Helper()
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: wf, Input: st(t, input)})
	if err != nil {
		t.Fatalf("RunWorkflow(%s): %v", wf, err)
	}
	return res.Handler
}

func sendEv(t *testing.T, c wfdv1connect.WorkflowServiceClient, id, typ string, data map[string]any) (*wfdv1.Handler, error) {
	t.Helper()
	res, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: typ, Data: st(t, data)}})
	return res.GetHandler(), err
}

// kinds renders records compactly for assertions.
func kinds(recs []*wfdv1.Record) string {
	var out []string
	for _, r := range recs {
		switch k := r.Kind.(type) {
		case *wfdv1.Record_StepStateChanged:
			s := k.StepStateChanged
			state := "ended"
			if s.Running {
				state = "started"
			} else if s.Waiting {
				state = "parked"
			}
			out = append(out, fmt.Sprintf("%d:%s %s", r.Seq, s.Step, state))
		case *wfdv1.Record_EventWritten:
			out = append(out, fmt.Sprintf("%d:event %s", r.Seq, k.EventWritten.Type))
		case *wfdv1.Record_IdleChanged:
			out = append(out, fmt.Sprintf("%d:idle=%v", r.Seq, k.IdleChanged.Idle))
		case *wfdv1.Record_HandlerFinished:
			out = append(out, fmt.Sprintf("%d:%s", r.Seq, strings.TrimPrefix(k.HandlerFinished.Status.String(), "HANDLER_STATUS_")))
		case *wfdv1.Record_HandlerReleased:
			out = append(out, fmt.Sprintf("%d:released", r.Seq))
		case *wfdv1.Record_HandlerRestored:
			out = append(out, fmt.Sprintf("%d:restored", r.Seq))
		}
	}
	return strings.Join(out, " ")
}

func TestService(t *testing.T) {
	ts := startServer(t, serverConfig{})
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			c := ts.client(p.opts...)

			t.Run("ListWorkflows", func(t *testing.T) {
				res, err := c.ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{})
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, w := range res.Workflows {
					names = append(names, w.Name)
				}
				if !slices.Equal(names, []string{"approval", "batch", "deploy", "echo", "expense", "fanin", "job", "notebook", "order"}) {
					t.Fatalf("workflows %v", names)
				}
			})

			t.Run("echo", func(t *testing.T) {
				h := run(t, c, "echo", map[string]any{"x": "y"})
				if h.Status != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING && h.Status != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
					t.Fatalf("status %v", h.Status)
				}
				recs := collect(t, c, h.HandlerId, 0)
				if got := kinds(recs); got != "1:echo started 2:echo ended 3:COMPLETED" {
					t.Fatalf("stream %s", got)
				}
				res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: h.HandlerId})
				if err != nil {
					t.Fatal(err)
				}
				g := res.Handler
				if g.Status != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || g.Result.Fields["x"].GetStringValue() != "y" ||
					g.CompletedAt == nil || g.LastSeq != 3 || g.Residency != wfdv1.Residency_RESIDENCY_UNSPECIFIED || g.Workflow != "echo" {
					t.Fatalf("GetHandler %v", g)
				}
				_, err = sendEv(t, c, h.HandlerId, "anything", nil)
				wantCode(t, err, connect.CodeFailedPrecondition, "completed")
				_, err = c.CancelHandler(ctxT(t), &wfdv1.CancelHandlerRequest{HandlerId: h.HandlerId})
				wantCode(t, err, connect.CodeFailedPrecondition, "completed")
				_, err = c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: h.HandlerId})
				wantCode(t, err, connect.CodeFailedPrecondition, "completed")
			})

			t.Run("approval", func(t *testing.T) {
				h := run(t, c, "approval", map[string]any{"amount": 5.0})
				idle := waitIdle(t, c, h.HandlerId)
				if w := idle.Idle.GetWaiters(); len(w) != 1 || w[0].EventType != "approval" || w[0].Step != "decide" {
					t.Fatalf("waiters %v", w)
				}
				_, err := sendEv(t, c, h.HandlerId, "nonsense", nil)
				wantCode(t, err, connect.CodeInvalidArgument, `does not accept "nonsense"`)
				got, err := sendEv(t, c, h.HandlerId, "approval", map[string]any{"approved": true})
				if err != nil {
					t.Fatal(err)
				}
				if got.HandlerId != h.HandlerId {
					t.Fatalf("SendEvent returned %v", got)
				}
				recs := collect(t, c, h.HandlerId, 0)
				want := "1:decide started 2:event question 3:decide parked 4:idle=true 5:idle=false 6:decide started 7:decide ended 8:COMPLETED"
				if k := kinds(recs); k != want {
					t.Fatalf("stream %s\nwant   %s", k, want)
				}
			})

			t.Run("fanin", func(t *testing.T) {
				h := run(t, c, "fanin", nil)
				recs := collect(t, c, h.HandlerId, 0)
				last := recs[len(recs)-1].GetHandlerFinished()
				if last.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED ||
					fmt.Sprint(last.Result.Fields["results"].GetListValue().AsSlice()) != "[0 1 4]" {
					t.Fatalf("finished %v", last)
				}
			})

			t.Run("cancel", func(t *testing.T) {
				h := run(t, c, "approval", nil)
				waitIdle(t, c, h.HandlerId)
				res, err := c.CancelHandler(ctxT(t), &wfdv1.CancelHandlerRequest{HandlerId: h.HandlerId})
				if err != nil {
					t.Fatal(err)
				}
				if res.Handler.Status != wfdv1.HandlerStatus_HANDLER_STATUS_CANCELLED || res.Handler.Idle != nil {
					t.Fatalf("after cancel %v", res.Handler)
				}
				_, err = sendEv(t, c, h.HandlerId, "approval", nil)
				wantCode(t, err, connect.CodeFailedPrecondition, "cancelled")
			})

			t.Run("errors", func(t *testing.T) {
				ctx := ctxT(t)
				_, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "nope"})
				wantCode(t, err, connect.CodeNotFound, `unknown workflow: "nope"`)
				_, err = c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{})
				wantCode(t, err, connect.CodeInvalidArgument, "workflow is required")
				_, err = c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: "bad id!"})
				wantCode(t, err, connect.CodeInvalidArgument, "not allowed")
				_, err = c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: "missing"})
				wantCode(t, err, connect.CodeNotFound, "missing")
				_, err = c.GetHandler(ctx, &wfdv1.GetHandlerRequest{})
				wantCode(t, err, connect.CodeInvalidArgument, "handler_id is required")
				_, err = sendEv(t, c, "missing", "approval", nil)
				wantCode(t, err, connect.CodeNotFound, "missing")
				_, err = c.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: "x"})
				wantCode(t, err, connect.CodeInvalidArgument, "event is required")
				_, err = sendEv(t, c, "x", "", nil)
				wantCode(t, err, connect.CodeInvalidArgument, "event.type is required")
				_, err = c.CancelHandler(ctx, &wfdv1.CancelHandlerRequest{HandlerId: "missing"})
				wantCode(t, err, connect.CodeNotFound, "")
				_, err = c.ReleaseHandler(ctx, &wfdv1.ReleaseHandlerRequest{HandlerId: "missing"})
				wantCode(t, err, connect.CodeNotFound, "")
				_, err = c.ListHandlers(ctx, &wfdv1.ListHandlersRequest{PageSize: -1})
				wantCode(t, err, connect.CodeInvalidArgument, "page_size")
				_, err = c.ListHandlers(ctx, &wfdv1.ListHandlersRequest{Statuses: []wfdv1.HandlerStatus{42}})
				wantCode(t, err, connect.CodeInvalidArgument, "unknown status")
				_, err = c.ListHandlers(ctx, &wfdv1.ListHandlersRequest{IdleFor: durationpb.New(-time.Second)})
				wantCode(t, err, connect.CodeInvalidArgument, "idle_for")
				_, err = c.ListHandlers(ctx, &wfdv1.ListHandlersRequest{PageToken: "garbage"})
				wantCode(t, err, connect.CodeInvalidArgument, "")
				s, err := c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: "missing"})
				if err == nil {
					for s.Receive() {
					}
					err = s.Err()
				}
				wantCode(t, err, connect.CodeNotFound, "")
			})
		})
	}
}

func TestRunWorkflowIdempotent(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client(connect.WithGRPC())
	req := &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: "order-17", Input: st(t, map[string]any{"n": 1.0})}
	var wg sync.WaitGroup
	results := make([]*wfdv1.Handler, 8)
	errs := make([]error, 8)
	for i := range results {
		wg.Go(func() {
			res, err := c.RunWorkflow(ctxT(t), req)
			results[i], errs[i] = res.GetHandler(), err
		})
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil || results[i].HandlerId != "order-17" || results[i].Workflow != "approval" {
			t.Fatalf("call %d: %v %v", i, results[i], errs[i])
		}
	}
	list, err := c.ListHandlers(ctxT(t), &wfdv1.ListHandlersRequest{})
	if err != nil || len(list.Handlers) != 1 {
		t.Fatalf("ListHandlers %v %v: want exactly one handler", list, err)
	}
	_, err = c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: "order-17"})
	wantCode(t, err, connect.CodeAlreadyExists, `runs workflow "approval"`)
}

func TestListHandlers(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	var approvals, echoes []string
	for range 5 {
		h := run(t, c, "approval", nil)
		approvals = append(approvals, h.HandlerId)
		waitIdle(t, c, h.HandlerId)
	}
	for range 3 {
		h := run(t, c, "echo", nil)
		echoes = append(echoes, h.HandlerId)
		collect(t, c, h.HandlerId, 0)
	}
	if _, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: approvals[0]}); err != nil {
		t.Fatal(err)
	}
	ids := func(hs []*wfdv1.Handler) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.HandlerId)
		}
		return out
	}
	rev := func(s []string) []string { s = slices.Clone(s); slices.Reverse(s); return s }
	tests := []struct {
		name string
		req  *wfdv1.ListHandlersRequest
		want []string
	}{
		{"all newest first", &wfdv1.ListHandlersRequest{}, rev(append(slices.Clone(approvals), echoes...))},
		{"by workflow", &wfdv1.ListHandlersRequest{Workflow: "echo"}, rev(echoes)},
		{"completed", &wfdv1.ListHandlersRequest{Statuses: []wfdv1.HandlerStatus{wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED}}, rev(echoes)},
		{"idle", &wfdv1.ListHandlersRequest{IdleOnly: true}, rev(approvals)},
		{"idle for an hour", &wfdv1.ListHandlersRequest{IdleFor: durationpb.New(time.Hour)}, nil},
		{"idle for a moment", &wfdv1.ListHandlersRequest{IdleFor: durationpb.New(time.Nanosecond)}, rev(approvals)},
		{"released", &wfdv1.ListHandlersRequest{Residency: wfdv1.Residency_RESIDENCY_RELEASED}, approvals[:1]},
		{"active running", &wfdv1.ListHandlersRequest{Residency: wfdv1.Residency_RESIDENCY_ACTIVE,
			Statuses: []wfdv1.HandlerStatus{wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING}}, rev(approvals[1:])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.ListHandlers(ctxT(t), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(res.Handlers); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v\nwant %v", got, tt.want)
			}
		})
	}
	t.Run("paging", func(t *testing.T) {
		var got []string
		token := ""
		for page := 0; ; page++ {
			res, err := c.ListHandlers(ctxT(t), &wfdv1.ListHandlersRequest{PageSize: 3, PageToken: token})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Handlers) > 3 {
				t.Fatalf("page of %d", len(res.Handlers))
			}
			got = append(got, ids(res.Handlers)...)
			if token = res.NextPageToken; token == "" {
				break
			}
		}
		if want := rev(append(slices.Clone(approvals), echoes...)); !slices.Equal(got, want) {
			t.Fatalf("pages %v\nwant %v", got, want)
		}
	})
}

func TestStreamReplayResumeAndSubscribers(t *testing.T) {
	ts := startServer(t, serverConfig{heartbeat: 20 * time.Millisecond})
	c := ts.client(connect.WithGRPC())
	h := run(t, c, "approval", nil)
	waitIdle(t, c, h.HandlerId)

	// Two live subscribers from the start, one of them slow to start reading.
	type result struct {
		recs       []*wfdv1.Record
		heartbeats int
		err        error
	}
	results := make(chan result, 2)
	beat := make(chan struct{}, 2)
	for i := range 2 {
		s, err := c.StreamEvents(ctxT(t), &wfdv1.StreamEventsRequest{HandlerId: h.HandlerId, IncludeInternal: true})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer func() { _ = s.Close() }()
			if i == 1 {
				time.Sleep(50 * time.Millisecond)
			}
			var r result
			for s.Receive() {
				if rec := s.Msg().GetRecord(); rec != nil {
					r.recs = append(r.recs, rec)
				} else if s.Msg().GetHeartbeat() != nil {
					if r.heartbeats++; r.heartbeats == 1 {
						beat <- struct{}{}
					}
				}
			}
			r.err = s.Err()
			results <- r
		}()
	}
	select { // quiet: heartbeats flow
	case <-beat:
	case <-time.After(testwait.Timeout):
		t.Fatal("no heartbeat on a quiet stream")
	}
	if _, err := sendEv(t, c, h.HandlerId, "approval", map[string]any{"approved": false}); err != nil {
		t.Fatal(err)
	}
	a, b := <-results, <-results
	if a.err != nil || b.err != nil {
		t.Fatalf("stream errors %v %v", a.err, b.err)
	}
	if kinds(a.recs) != kinds(b.recs) || len(a.recs) != 8 {
		t.Fatalf("subscribers differ:\n%s\n%s", kinds(a.recs), kinds(b.recs))
	}
	for i := range a.recs {
		if !proto.Equal(a.recs[i], b.recs[i]) {
			t.Fatalf("record %d differs: %v / %v", i, a.recs[i], b.recs[i])
		}
	}
	if a.heartbeats+b.heartbeats == 0 {
		t.Fatal("no heartbeat on a quiet stream")
	}
	// Resume from a sequence number.
	tail := collect(t, c, h.HandlerId, 5)
	if kinds(tail) != "6:decide started 7:decide ended 8:COMPLETED" {
		t.Fatalf("resumed after 5: %s", kinds(tail))
	}
	if got := collect(t, c, h.HandlerId, 8); len(got) != 0 {
		t.Fatalf("after the terminal record: %s", kinds(got))
	}
}

func TestMessageLimits(t *testing.T) {
	ts := startServer(t, serverConfig{maxBytes: 64 << 10})
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			c := ts.client(p.opts...)
			big := map[string]any{"blob": strings.Repeat("x", 100<<10)}
			_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "echo", Input: st(t, big)})
			if code := connect.CodeOf(err); code != connect.CodeResourceExhausted && code != connect.CodeInvalidArgument {
				t.Fatalf("oversized request: %v", err)
			}
			// The server is fine afterwards.
			run(t, c, "echo", nil)
		})
	}
}

func TestUnavailableCarriesRetryHint(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	h := run(t, c, "approval", nil)
	waitIdle(t, c, h.HandlerId)
	if _, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: h.HandlerId}); err != nil {
		t.Fatal(err)
	}
	// The store goes away under the server: waking the handler cannot work.
	if err := ts.store.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := sendEv(t, c, h.HandlerId, "approval", map[string]any{"approved": true})
	wantCode(t, err, connect.CodeUnavailable, "")
	var ce *connect.Error
	if !errorsAs(err, &ce) {
		t.Fatal(err)
	}
	found := false
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if ri, ok := v.(*errdetails.RetryInfo); ok && ri.RetryDelay.AsDuration() > 0 {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("Unavailable without a RetryInfo detail: %v", err)
	}
}

func TestSendEventIdempotencyKey(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client()
	h := run(t, c, "counter", map[string]any{"want": 2.0})
	waitIdle(t, c, h.HandlerId)
	for i, key := range []string{"k1", "k1", "k2"} {
		_, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: h.HandlerId, IdempotencyKey: key,
			Event: &wfdv1.Event{Type: "inc", Data: st(t, map[string]any{"n": float64(i)})}})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			release(t, c, h.HandlerId) // the key survives a release
		}
	}
	recs := collect(t, c, h.HandlerId, 0)
	if g := got(recs); fmt.Sprint(g) != "[0 2]" {
		t.Fatalf("delivered %v", g)
	}
	_, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: h.HandlerId, IdempotencyKey: strings.Repeat("k", 200), Event: &wfdv1.Event{Type: "inc"}})
	wantCode(t, err, connect.CodeInvalidArgument, "idempotency_key")
}

func TestStreamEdges(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client(connect.WithGRPC())
	done := run(t, c, "echo", nil)
	collect(t, c, done.HandlerId, 0)
	res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: done.HandlerId})
	if err != nil || res.Handler.Result == nil {
		t.Fatalf("an empty result must be an empty object: %v %v", res, err)
	}
	s, err := c.StreamEvents(ctxT(t), &wfdv1.StreamEventsRequest{HandlerId: done.HandlerId, AfterSeq: 99, IncludeInternal: true})
	if err == nil {
		for s.Receive() {
		}
		err = s.Err()
	}
	wantCode(t, err, connect.CodeInvalidArgument, "beyond the last record")

	// A server shutting down tells its followers to come back, not that
	// they were cancelled.
	h := run(t, c, "approval", nil)
	waitIdle(t, c, h.HandlerId)
	s, err = c.StreamEvents(ctxT(t), &wfdv1.StreamEventsRequest{HandlerId: h.HandlerId, IncludeInternal: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4 && s.Receive(); i++ {
	}
	go ts.stop()
	for s.Receive() {
	}
	wantCode(t, s.Err(), connect.CodeUnavailable, "shutting down")
}

// TestRetryOfTheFinishingEvent: the answer that finished a handler, sent
// again with its key (a retry after a lost response), is acknowledged.
func TestRetryOfTheFinishingEvent(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	h := run(t, c, "approval", nil)
	waitIdle(t, c, h.HandlerId)
	req := &wfdv1.SendEventRequest{HandlerId: h.HandlerId, IdempotencyKey: "answer-1",
		Event: &wfdv1.Event{Type: "approval", Data: st(t, map[string]any{"approved": true})}}
	if _, err := c.SendEvent(ctxT(t), req); err != nil {
		t.Fatal(err)
	}
	collect(t, c, h.HandlerId, 0)
	res, err := c.SendEvent(ctxT(t), req)
	if err != nil || res.Handler.Status != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("retry of the finishing event: %v %v", res, err)
	}
	req.IdempotencyKey = "answer-2"
	_, err = c.SendEvent(ctxT(t), req)
	wantCode(t, err, connect.CodeFailedPrecondition, "is completed")
	_, err = c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: "nope"})
	wantCode(t, err, connect.CodeNotFound, `handler "nope" not found`)
}

// TestRetryWhileBusy: a retried event (same key) that the handler took is
// acknowledged even when the handler no longer accepts its type.
func TestRetryWhileBusy(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client()
	h := run(t, c, "waiting", map[string]any{"ms": 0.0})
	waitIdle(t, c, h.HandlerId)
	req := &wfdv1.SendEventRequest{HandlerId: h.HandlerId, IdempotencyKey: "go-1", Event: &wfdv1.Event{Type: "go"}}
	if _, err := c.SendEvent(ctxT(t), req); err != nil {
		t.Fatal(err)
	}
	collect(t, c, h.HandlerId, 0)
	if _, err := c.SendEvent(ctxT(t), req); err != nil {
		t.Fatalf("retry after the handler finished: %v", err)
	}
}
