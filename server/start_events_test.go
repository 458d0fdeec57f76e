package server_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
)

func inc(t *testing.T, n int) *wfdv1.Event {
	t.Helper()
	return &wfdv1.Event{Type: "inc", Data: st(t, map[string]any{"n": float64(n)})}
}

// sendOrStart is a SendEvent that starts a counter wanting want if id
// does not exist yet.
func sendOrStart(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string, n int, key string, want int) (*wfdv1.SendEventResponse, error) {
	t.Helper()
	return c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{
		HandlerId: id, Event: inc(t, n), IdempotencyKey: key,
		Start: &wfdv1.StartIfMissing{Workflow: "counter", Input: st(t, map[string]any{"want": float64(want)})},
	})
}

// finishedCount waits for the handler to end and returns its stream's
// "got" numbers, checking that it completed.
func finishedCount(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) []int {
	t.Helper()
	recs := collect(t, c, id, 0)
	res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
	if err != nil {
		t.Fatal(err)
	}
	if res.Handler.Status != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("handler %s ended %v (%s)", id, res.Handler.Status, res.Handler.Error)
	}
	return got(recs)
}

// TestRunWorkflowWithEvents: RunWorkflow's events are delivered with the
// creation, in order; one the workflow would refuse refuses the call and
// creates nothing; a repeat with the same id delivers nothing again.
func TestRunWorkflowWithEvents(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			c := ts.client(p.opts...)
			id := "with-events-" + p.name
			req := &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: id, Input: st(t, map[string]any{"want": 3.0}), Events: []*wfdv1.Event{inc(t, 1), inc(t, 2)}}
			if _, err := c.RunWorkflow(ctxT(t), req); err != nil {
				t.Fatal(err)
			}
			// The repeat answers with the handler; its events are not
			// delivered again (the counter would end at 3 with [1 2 1]).
			res, err := c.RunWorkflow(ctxT(t), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Handler.HandlerId != id {
				t.Fatalf("repeat answered with %v", res.Handler)
			}
			if _, err := sendEv(t, c, id, "inc", map[string]any{"n": 3.0}); err != nil {
				t.Fatal(err)
			}
			if g := finishedCount(t, c, id); !slices.Equal(g, []int{1, 2, 3}) {
				t.Fatalf("stream got %v, want [1 2 3]", g)
			}

			for _, tc := range []struct {
				name   string
				events []*wfdv1.Event
				code   connect.Code
				msg    string
			}{
				{"not accepted", []*wfdv1.Event{inc(t, 1), {Type: "go"}}, connect.CodeInvalidArgument, `events[1]`},
				{"no type", []*wfdv1.Event{{}}, connect.CodeInvalidArgument, `events[0].type`},
				{"reserved", []*wfdv1.Event{{Type: "wfd.task"}}, connect.CodeInvalidArgument, `reserved`},
				{"too many", slices.Repeat([]*wfdv1.Event{inc(t, 1)}, 65), connect.CodeInvalidArgument, `at most 64`},
			} {
				bad := id + "-" + strings.ReplaceAll(tc.name, " ", "-")
				_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: bad, Events: tc.events})
				wantCode(t, err, tc.code, tc.msg)
				_, err = c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: bad})
				wantCode(t, err, connect.CodeNotFound, "")
			}
		})
	}
}

// TestSendEventStartIfMissing: SendEvent with start creates the handler
// with the event when there is none, delivers to it when there is one,
// and a retry with the same idempotency key delivers nothing again,
// whichever of its attempts started the handler.
func TestSendEventStartIfMissing(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client()

	res, err := sendOrStart(t, c, "sws-1", 1, "k1", 3)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Started || res.Handler.Workflow != "counter" {
		t.Fatalf("first call: started %v, handler %v", res.Started, res.Handler)
	}
	for _, call := range []struct {
		n   int
		key string
	}{{1, "k1"}, {2, "k2"}, {2, "k2"}, {3, ""}} {
		res, err := sendOrStart(t, c, "sws-1", call.n, call.key, 99)
		if err != nil {
			t.Fatal(err)
		}
		if res.Started {
			t.Fatalf("call %v started the handler again", call)
		}
	}
	if g := finishedCount(t, c, "sws-1"); !slices.Equal(g, []int{1, 2, 3}) {
		t.Fatalf("stream got %v, want [1 2 3] (retries delivered nothing, the input of later calls was ignored)", g)
	}
	// Finished: the event is refused as without start, and the retry of
	// an event it took is acknowledged.
	_, err = sendOrStart(t, c, "sws-1", 4, "k4", 1)
	wantCode(t, err, connect.CodeFailedPrecondition, "completed")
	if _, err := sendOrStart(t, c, "sws-1", 2, "k2", 1); err != nil {
		t.Fatalf("retry after the end: %v", err)
	}

	t.Run("released", func(t *testing.T) {
		if _, err := sendOrStart(t, c, "sws-rel", 1, "", 2); err != nil {
			t.Fatal(err)
		}
		waitIdle(t, c, "sws-rel")
		release(t, c, "sws-rel")
		res, err := sendOrStart(t, c, "sws-rel", 2, "", 2)
		if err != nil || res.Started {
			t.Fatalf("send to the released handler: started %v, %v", res.GetStarted(), err)
		}
		if g := finishedCount(t, c, "sws-rel"); !slices.Equal(g, []int{1, 2}) {
			t.Fatalf("stream got %v", g)
		}
	})

	t.Run("refused", func(t *testing.T) {
		run(t, c, "approval", nil) // an unrelated handler, to be sure nothing leaks
		h := run(t, c, "counter", map[string]any{"want": 5.0})
		_, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: h.HandlerId, Event: inc(t, 1), Start: &wfdv1.StartIfMissing{Workflow: "echo"}})
		wantCode(t, err, connect.CodeAlreadyExists, `runs workflow "counter"`)
		for _, tc := range []struct {
			name  string
			start *wfdv1.StartIfMissing
			event *wfdv1.Event
			code  connect.Code
			msg   string
		}{
			{"no workflow", &wfdv1.StartIfMissing{}, inc(t, 1), connect.CodeInvalidArgument, "start.workflow"},
			{"unknown workflow", &wfdv1.StartIfMissing{Workflow: "nope"}, inc(t, 1), connect.CodeNotFound, "nope"},
			{"unknown version", &wfdv1.StartIfMissing{Workflow: "counter", Version: "v9"}, inc(t, 1), connect.CodeNotFound, "v9"},
			{"not accepted", &wfdv1.StartIfMissing{Workflow: "counter"}, &wfdv1.Event{Type: "go"}, connect.CodeInvalidArgument, `"go"`},
		} {
			id := "sws-bad-" + strings.ReplaceAll(tc.name, " ", "-")
			_, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: id, Event: tc.event, Start: tc.start})
			wantCode(t, err, tc.code, tc.msg)
			_, err = c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
			wantCode(t, err, connect.CodeNotFound, "")
		}
	})
}

// TestSendEventStartIfMissingConcurrent: calls racing for one id create
// one handler, and each delivers its event exactly once.
func TestSendEventStartIfMissingConcurrent(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client()
	const callers = 16
	var wg sync.WaitGroup
	started := make(chan bool, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := sendOrStart(t, c, "sws-race", i, fmt.Sprintf("k%d", i), callers)
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
				return
			}
			started <- res.Started
		}()
	}
	wg.Wait()
	close(started)
	n := 0
	for s := range started {
		if s {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d calls say they started the handler, want 1", n)
	}
	g := finishedCount(t, c, "sws-race")
	slices.Sort(g)
	want := make([]int, callers)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(g, want) {
		t.Fatalf("stream got %v, want each of 0..%d once", g, callers-1)
	}
}
