package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/attrs"
	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// ordered declares search attributes; its step sets stage "open", then
// applies the data of each "update" event as an attribute update until
// one has "close": true.
func ordered() engine.Workflow {
	return engine.Workflow{
		Name:       "ordered",
		External:   []string{"update"},
		Attributes: attrs.Schema{"customer": attrs.String, "amount": attrs.Int, "stage": attrs.String, "tags": attrs.KeywordList, "due": attrs.Time},
		Steps: []engine.Step{
			{Name: "open", Accepts: []string{engine.StartEvent}, Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				return sc.SetAttributes(&structpb.Struct{Fields: map[string]*structpb.Value{"stage": structpb.NewStringValue("open")}})
			}},
			{Name: "update", Accepts: []string{"update"}, Emits: []string{engine.StopEvent}, Run: func(_ context.Context, sc *engine.StepContext, ev engine.Event) error {
				data := ev.Data
				closeIt := data.GetFields()["close"].GetBoolValue()
				delete(data.Fields, "close")
				if err := sc.SetAttributes(data); err != nil {
					return err
				}
				if closeIt {
					return sc.Send(engine.StopEvent, nil)
				}
				return nil
			}},
		},
	}
}

func listWhere(t *testing.T, c wfdv1connect.WorkflowServiceClient, workflow, where string) ([]*wfdv1.Handler, error) {
	t.Helper()
	res, err := c.ListHandlers(ctxT(t), &wfdv1.ListHandlersRequest{Workflow: workflow, Where: where})
	if err != nil {
		return nil, err
	}
	return res.Handlers, nil
}

func ids(hs []*wfdv1.Handler) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.HandlerId
	}
	return out
}

// TestSearchAttributes: attributes given at start and set by steps are on
// the handler (GetHandler, ListHandlers), survive a release, and
// ListHandlers' where filters and orders by them; the workflow lists its
// declarations.
func TestSearchAttributes(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: append(testWorkflows(), ordered())})
	c := ts.client()
	run := func(id string, a map[string]any) {
		t.Helper()
		if _, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "ordered", HandlerId: id, Attributes: st(t, a)}); err != nil {
			t.Fatalf("run %s: %v", id, err)
		}
	}
	run("o1", map[string]any{"customer": "acme", "amount": 50.0, "tags": []any{"eu"}})
	run("o2", map[string]any{"customer": "acme", "amount": 150.0, "due": "2025-07-01T09:00:00+02:00"})
	run("o3", map[string]any{"customer": "globex", "amount": 300.0})
	// The first step's update rides its run's change: once idle, stage is set.
	for _, id := range []string{"o1", "o2", "o3"} {
		testwait.For(t, id+" idle with stage open", func() bool {
			h := getHandler(t, c, id)
			return h.GetIdle() != nil && h.GetAttributes().GetFields()["stage"].GetStringValue() == "open"
		})
	}

	h := getHandler(t, c, "o2")
	if f := h.GetAttributes().GetFields(); f["customer"].GetStringValue() != "acme" || f["amount"].GetNumberValue() != 150 ||
		f["due"].GetStringValue() != "2025-07-01T07:00:00Z" {
		t.Fatalf("o2's attributes: %v", h.GetAttributes())
	}
	release(t, c, "o2")
	if _, err := sendEv(t, c, "o2", "update", map[string]any{"amount": 175.0, "tags": []any{"vip", "eu"}, "due": nil}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "o2's update after its release", func() bool {
		return getHandler(t, c, "o2").GetAttributes().GetFields()["amount"].GetNumberValue() == 175
	})
	if f := getHandler(t, c, "o2").GetAttributes().GetFields(); f["due"] != nil || f["customer"].GetStringValue() != "acme" || len(f["tags"].GetListValue().GetValues()) != 2 {
		t.Fatalf("o2 after its update: %v", f)
	}

	for _, tc := range []struct {
		where string
		want  []string
	}{
		{`customer = "acme"`, []string{"o2", "o1"}},
		{`customer = "acme" and amount > 100`, []string{"o2"}},
		{`amount >= 100 order by amount desc`, []string{"o3", "o2"}},
		{`tags contains "eu" order by amount`, []string{"o1", "o2"}},
		{`stage = "open" and status = running order by customer desc`, []string{"o3", "o2", "o1"}},
	} {
		hs, err := listWhere(t, c, "ordered", tc.where)
		if err != nil {
			t.Fatalf("%s: %v", tc.where, err)
		}
		if got := ids(hs); !slices.Equal(got, tc.want) {
			t.Fatalf("%s: got %v, want %v", tc.where, got, tc.want)
		}
	}

	// Closing o1 sets its last update with the run's end.
	if _, err := sendEv(t, c, "o1", "update", map[string]any{"stage": "closed", "close": true}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "o1 completed", func() bool { return getHandler(t, c, "o1").GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED })
	hs, err := listWhere(t, c, "ordered", `stage = "closed" and status = completed`)
	if err != nil || !slices.Equal(ids(hs), []string{"o1"}) {
		t.Fatalf("closed and completed: %v, %v", ids(hs), err)
	}

	// Signal-with-start gives the handler it starts its attributes.
	sres, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: "o4", Event: &wfdv1.Event{Type: "update", Data: st(t, map[string]any{"amount": 7.0})},
		Start: &wfdv1.StartIfMissing{Workflow: "ordered", Attributes: st(t, map[string]any{"customer": "initech"})}})
	if err != nil || !sres.Started {
		t.Fatalf("send-or-start: %v, %v", sres, err)
	}
	testwait.For(t, "o4's update", func() bool {
		f := getHandler(t, c, "o4").GetAttributes().GetFields()
		// (Its steps open and update run concurrently: each sets its own.)
		return f["customer"].GetStringValue() == "initech" && f["amount"].GetNumberValue() == 7 && f["stage"].GetStringValue() == "open"
	})

	res, err := c.ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{Name: "ordered"})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Workflows[0].GetSearchAttributes(); d["amount"] != "int" || d["tags"] != "keyword_list" || len(d) != 5 {
		t.Fatalf("declarations: %v", d)
	}
}

// TestSearchAttributesRefused: bad attributes refuse the start and store
// nothing; a malformed query names the position; a query no index
// answers, or one on attributes without a workflow, is refused.
func TestSearchAttributesRefused(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: append(testWorkflows(), ordered())})
	c := ts.client()
	for _, tc := range []struct {
		attrs map[string]any
		msg   string
	}{
		{map[string]any{"nope": "x"}, `"nope"`},
		{map[string]any{"amount": "120"}, `"amount"`},
		{map[string]any{"amount": 1.5}, `"amount"`},
		{map[string]any{"due": "yesterday"}, `"due"`},
		{map[string]any{"tags": []any{1.0}}, `"tags"`},
	} {
		_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "ordered", HandlerId: "bad", Attributes: st(t, tc.attrs)})
		wantCode(t, err, connect.CodeInvalidArgument, tc.msg)
	}
	if _, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: "bad"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("a refused start left a handler: %v", err)
	}
	for _, tc := range []struct {
		workflow, where, msg string
	}{
		{"ordered", `customer = `, "position 12"},
		{"ordered", `customer = "acme" and`, "position"},
		{"ordered", `nope = 1`, `unknown`},
		{"ordered", `amount = "x"`, "amount"},
		{"ordered", `customer != "acme"`, "index"},
		{"ordered", `customer = "acme" or amount > 1`, `"or"`},
		{"", `customer = "acme"`, "workflow"},
	} {
		_, err := listWhere(t, c, tc.workflow, tc.where)
		wantCode(t, err, connect.CodeInvalidArgument, tc.msg)
	}
	// A step's bad update fails its run; the handler keeps what it had.
	if _, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "ordered", HandlerId: "s1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sendEv(t, c, "s1", "update", map[string]any{"amount": "lots"}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "s1 failed", func() bool { return getHandler(t, c, "s1").GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_FAILED })
	if f := getHandler(t, c, "s1").GetAttributes().GetFields(); f["amount"] != nil {
		t.Fatalf("a refused update was stored: %v", f)
	}
}

// TestWorkerSetsAttributes: a worker-defined workflow declares search
// attributes in its registration; its step sets them over the wire
// (StepCall set_attributes) and they are listed by ListHandlers' where;
// an undeclared one fails the run.
func TestWorkerSetsAttributes(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	step := func(_ context.Context, sc worker.Context, ev engine.Event) error {
		if err := sc.SetAttributes(ev.Data); err != nil {
			return err
		}
		return sc.Send(engine.StopEvent, nil)
	}
	def := engine.Workflow{Name: "attrs-remote", Attributes: attrs.Schema{"customer": attrs.String, "amount": attrs.Int},
		Steps: []engine.Step{{Name: "tag", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent}}}}
	startWorker(t, ts, "attrs", worker.Workflow{Definition: def, Run: map[string]worker.StepFunc{"tag": step}})
	workersServing(t, ts, "attrs-remote", 1)

	for id, in := range map[string]map[string]any{
		"w1": {"customer": "acme", "amount": 5.0},
		"w2": {"customer": "acme", "amount": 500.0},
		"w3": {"customer": "acme", "nope": 1.0},
	} {
		if _, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "attrs-remote", HandlerId: id, Input: st(t, in)}); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]wfdv1.HandlerStatus{
		"w1": wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED, "w2": wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED, "w3": wfdv1.HandlerStatus_HANDLER_STATUS_FAILED,
	} {
		testwait.For(t, id+" ended", func() bool { return getHandler(t, c, id).GetStatus() == want })
	}
	hs, err := listWhere(t, c, "attrs-remote", `customer = "acme" and amount > 10`)
	if err != nil || !slices.Equal(ids(hs), []string{"w2"}) {
		t.Fatalf("listed %v, %v; want [w2]", ids(hs), err)
	}
	if h := getHandler(t, c, "w3"); len(h.GetAttributes().GetFields()) != 0 || !strings.Contains(h.GetError(), "nope") {
		t.Fatalf("w3: attributes %v, error %q", h.GetAttributes(), h.GetError())
	}
}
