package server_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/workflows"
)

// declared is a workflow with an external type it declares, one it does
// not, and a waited-for type it declares without a schema.
func declared() engine.Workflow {
	w := workflows.Notebook()
	w.Name = "declared"
	w.InputSchema = nil
	w.External = append(w.External, "poke")
	w.Events = append(w.Events, engine.EventType{Type: "answer", Description: "waited for, any data"})
	w.Steps = append(w.Steps, engine.Step{Name: "poked", Accepts: []string{"poke"}, Run: func(context.Context, *engine.StepContext, engine.Event) error { return nil }})
	return w
}

// TestListWorkflowsSchemas: ListWorkflows returns each workflow's input
// schema and every event type it takes from outside, with its schema,
// description and whether it is accepted at any time, over gRPC and
// Connect JSON alike.
func TestListWorkflowsSchemas(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: append(workflows.All(), declared())})
	for name, c := range map[string]interface {
		ListWorkflows(context.Context, *wfdv1.ListWorkflowsRequest) (*wfdv1.ListWorkflowsResponse, error)
	}{"grpc": ts.client(connect.WithGRPC()), "json": ts.jsonClient()} {
		t.Run(name, func(t *testing.T) {
			res, err := c.ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			by := map[string]*wfdv1.Workflow{}
			for _, w := range res.Workflows {
				by[w.Name] = w
			}
			approval := by["approval"]
			if approval.GetInputSchema().GetFields()["type"].GetStringValue() != "object" {
				t.Errorf("approval's input schema %v", approval.GetInputSchema())
			}
			if et := approval.GetEventTypes(); len(et) != 1 || et[0].Type != "approval" || et[0].External || !strings.Contains(et[0].Description, `"approved"`) ||
				et[0].GetSchema().GetFields()["required"].GetListValue().GetValues()[0].GetStringValue() != "approved" ||
				et[0].GetSchema().GetFields()["properties"].GetStructValue().GetFields()["approved"].GetStructValue().GetFields()["type"].GetStringValue() != "boolean" {
				t.Errorf("approval's event types %v", et)
			}
			if len(approval.ExternalEventTypes) != 0 {
				t.Errorf("approval's external types %v", approval.ExternalEventTypes)
			}
			if et := by["notebook"].GetEventTypes(); len(et) != 1 || et[0].Type != "note" || !et[0].External || et[0].GetSchema() == nil {
				t.Errorf("notebook's event types %v", et)
			}
			if by["echo"].GetInputSchema() == nil || len(by["echo"].GetEventTypes()) != 0 {
				t.Errorf("echo %v", by["echo"])
			}
			if s := by["batch"].GetInputSchema().GetFields()["properties"].GetStructValue().GetFields()["n"].GetStructValue().GetFields(); s["type"].GetStringValue() != "integer" ||
				s["maximum"].GetNumberValue() != workflows.BatchMaxJobs {
				t.Errorf("batch's n %v", s)
			}
			// Declared or not, external or waited for: every outside type, sorted.
			d := by["declared"]
			var got []string
			for _, et := range d.GetEventTypes() {
				got = append(got, et.Type)
			}
			if d.GetInputSchema() != nil || !slices.Equal(got, []string{"answer", "note", "poke"}) {
				t.Fatalf("declared: input schema %v, event types %v", d.GetInputSchema(), d.GetEventTypes())
			}
			answer, note, poke := d.EventTypes[0], d.EventTypes[1], d.EventTypes[2]
			if answer.External || answer.Description != "waited for, any data" || answer.Schema != nil {
				t.Errorf("answer %v", answer)
			}
			if !note.External || note.Schema == nil || !poke.External || poke.Schema != nil || poke.Description != "" {
				t.Errorf("note %v, poke %v", note, poke)
			}
		})
	}
}

func TestRunWorkflowSchema(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	before := handlerCount(t, c)
	for _, tt := range []struct {
		workflow string
		input    map[string]any
		want     string
	}{
		{"order", nil, `invalid input: workflow "order": the input does not match the workflow's input schema: at '': missing property 'order_id'`},
		{"order", map[string]any{"order_id": ""}, `at '/order_id': minLength: got 0, want >= 1`},
		{"batch", map[string]any{"n": 2.5, "fail": []any{-1.0}, "timeout_s": "soon"}, `at '/fail/0': minimum: got -1, want >= 0; at '/n': got number, want integer; at '/timeout_s': got string, want number`},
		{"batch", map[string]any{"n": 1e9}, `at '/n': maximum: got 1e+09, want <= 1000`},
		{"expense", map[string]any{"approver": 7.0}, `workflow "expense": the input does not match the workflow's input schema: at '/approver': got number, want string`},
		{"job", map[string]any{"fail": "yes"}, `at '/fail': got string, want boolean`},
	} {
		id := "refused-" + tt.workflow
		_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: tt.workflow, Input: st(t, tt.input), HandlerId: id})
		wantCode(t, err, connect.CodeInvalidArgument, tt.want)
		if _, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("GetHandler of a refused handler: %v", err)
		}
	}
	// What the schema cannot say, CheckInput still does.
	_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "batch", Input: st(t, map[string]any{"n": 2.0, "fail": []any{5.0}})})
	wantCode(t, err, connect.CodeInvalidArgument, `workflow "batch": "fail" must list job indexes from 0 to n-1 (1), got 5`)
	if n := handlerCount(t, c); n != before {
		t.Fatalf("refused inputs created handlers: %d, was %d", n, before)
	}
	run(t, c, "order", map[string]any{"order_id": "A1", "note": "other fields are free"})
}

// TestSendEventSchema sends data that breaks a declared event type's
// schema to a handler in memory and to a released one: InvalidArgument
// naming the fields; nothing is stored, and the released handler is not
// loaded (one LoadHandler read, as for any refused event: the engine
// refuses before it restores). Good data then goes through.
func TestSendEventSchema(t *testing.T) {
	f := startFaulty(t, server.Options{Workflows: testWorkflows()})
	c := f.client
	for _, tt := range []struct {
		workflow, typ string
		bad           map[string]any
		want          string
		good          map[string]any
	}{
		{"approval", "approval", map[string]any{"approved": "yes"},
			`invalid event: workflow "approval": the data of event "approval" does not match its schema: at '/approved': got string, want boolean`,
			map[string]any{"approved": true}},
		{"approval", "approval", nil, `at '': missing property 'approved'`, map[string]any{"approved": false, "comment": "no"}},
		{"notebook", "note", map[string]any{"text": 1.0, "last": "yes"},
			`the data of event "note" does not match its schema: at '/last': got string, want boolean; at '/text': got number, want string`,
			map[string]any{"text": "done", "last": true}},
	} {
		t.Run(tt.workflow+" "+tt.want, func(t *testing.T) {
			h := run(t, c, tt.workflow, nil)
			idle := waitIdle(t, c, h.HandlerId)

			_, err := sendEv(t, c, h.HandlerId, tt.typ, tt.bad)
			wantCode(t, err, connect.CodeInvalidArgument, tt.want)
			if got := getHandler(t, c, h.HandlerId); got.LastSeq != idle.LastSeq || got.Idle == nil || got.Residency != wfdv1.Residency_RESIDENCY_ACTIVE {
				t.Fatalf("a refused event changed the live handler: %v", got)
			}

			released := release(t, c, h.HandlerId)
			rehydrations := stats(t, c).RehydrationsTotal
			reads := countReads(f.fs, h.HandlerId)
			_, err = sendEv(t, c, h.HandlerId, tt.typ, tt.bad)
			wantCode(t, err, connect.CodeInvalidArgument, tt.want)
			if got := reads.counts(); len(got) != 1 || got["LoadHandler"] != 1 {
				t.Fatalf("a refused event to a released handler read %v, want one LoadHandler", got)
			}
			if s := stats(t, c); s.RehydrationsTotal != rehydrations {
				t.Fatalf("a refused event loaded the handler: %d rehydrations, was %d", s.RehydrationsTotal, rehydrations)
			}
			if got := getHandler(t, c, h.HandlerId); got.LastSeq != released.LastSeq || got.Residency != wfdv1.Residency_RESIDENCY_RELEASED || got.Idle == nil {
				t.Fatalf("a refused event changed the released handler: %v", got)
			}

			if _, err := sendEv(t, c, h.HandlerId, tt.typ, tt.good); err != nil {
				t.Fatalf("good data: %v", err)
			}
			recs := collect(t, c, h.HandlerId, 0)
			if fin := recs[len(recs)-1].GetHandlerFinished(); fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
				t.Fatalf("the handler ended %v", recs[len(recs)-1])
			}
		})
	}
}

// TestNewRefusesBadSchema: a server does not start with a workflow whose
// schema does not compile, and says which.
func TestNewRefusesBadSchema(t *testing.T) {
	store, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	w := workflows.Approval()
	w.Events[0].Schema = []byte(`{"properties": {"approved": {"type": "bool"}}}`)
	srv, err := server.New(context.Background(), server.Options{Store: store, Workflows: []engine.Workflow{w}})
	if !errors.Is(err, engine.ErrInvalidWorkflow) || !strings.Contains(err.Error(), `workflow "approval": the schema of event type "approval" is not a valid JSON Schema: at '/properties/approved/type'`) {
		if srv != nil {
			_ = srv.Close(context.Background())
		}
		t.Fatalf("New = %v", err)
	}
}
