package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
)

// asker waits for an "answer" (declared with a schema, not external), and
// takes "note" at any time (external, declared with a schema) and "poke"
// at any time (external, undeclared); it completes with the answer.
func asker() engine.Workflow {
	return engine.Workflow{
		Name:        "asker",
		InputSchema: []byte(`{"type": "object", "required": ["who"], "properties": {"who": {"type": "string"}, "n": {"type": "integer", "maximum": 10}}}`),
		External:    []string{"note", "poke"},
		Events: []engine.EventType{
			{Type: "answer", Description: "the answer", Schema: []byte(`{"required": ["ok"], "properties": {"ok": {"type": "boolean"}}}`)},
			{Type: "note", Schema: []byte(`{"required": ["text"], "properties": {"text": {"type": "string"}}}`)},
		},
		Steps: []engine.Step{
			step("ask", engine.StartEvent, []string{engine.StopEvent}, func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				ev, err := sc.WaitFor("answer", engine.WaitOptions{})
				if err != nil {
					return err
				}
				return sc.Send(engine.StopEvent, ev.Data)
			}),
			{Name: "noted", Accepts: []string{"note", "poke"}, Run: nop},
		},
	}
}

func TestRegisterRefusesBadSchemas(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "s.json")
	if err := os.WriteFile(local, []byte(`{"type": "string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(*engine.Workflow)
		want   []string // substrings of the error; none: valid
	}{
		{"valid", func(*engine.Workflow) {}, nil},
		{"no schemas at all", func(w *engine.Workflow) { w.InputSchema, w.Events = nil, nil }, nil},
		{"a declared type without a schema", func(w *engine.Workflow) { w.Events[0].Schema = nil }, nil},
		{"input schema not an object", func(w *engine.Workflow) { w.InputSchema = []byte(`[1]`) },
			[]string{`workflow "asker": the input schema is not a JSON object`}},
		{"input schema not JSON", func(w *engine.Workflow) { w.InputSchema = []byte(`{"type": `) },
			[]string{`workflow "asker": the input schema is not a JSON object`}},
		{"input schema with a bad keyword", func(w *engine.Workflow) { w.InputSchema = []byte(`{"type": "text"}`) },
			[]string{`workflow "asker": the input schema is not a valid JSON Schema: at '/type'`}},
		{"event schema with a dangling ref", func(w *engine.Workflow) { w.Events[0].Schema = []byte(`{"$ref": "#/$defs/nope"}`) },
			[]string{`workflow "asker": the schema of event type "answer" does not compile`}},
		{"event schema that reads a file", func(w *engine.Workflow) {
			w.Events[1].Schema = []byte(`{"$ref": "file://` + filepath.ToSlash(local) + `"}`)
		}, []string{`workflow "asker": the schema of event type "note" does not compile`}},
		{"every bad schema at once", func(w *engine.Workflow) {
			w.InputSchema = []byte(`true`)
			w.Events[0].Schema = []byte(`{"minimum": "0"}`)
		}, []string{"the input schema is not a JSON object", `the schema of event type "answer" is not a valid JSON Schema: at '/minimum'`}},
		{"reserved type", func(w *engine.Workflow) { w.Events[0].Type = engine.TaskEvent },
			[]string{`"wfd.task" cannot be a declared event type: types starting with "wfd." are sent by wfd itself`}},
		{"start", func(w *engine.Workflow) { w.Events[0].Type = engine.StartEvent }, []string{`"start" cannot be a declared event type`}},
		{"empty type", func(w *engine.Workflow) { w.Events[0].Type = "" }, []string{`event 0: "" cannot be a declared event type: it is empty`}},
		{"long type", func(w *engine.Workflow) { w.Events[0].Type = strings.Repeat("t", 300) }, []string{"300 bytes long, over the limit of 256"}},
		{"long external type", func(w *engine.Workflow) { w.External[0] = strings.Repeat("t", 300) }, []string{"cannot be an external event type: it is 300 bytes long"}},
		{"type declared twice", func(w *engine.Workflow) { w.Events[1].Type = "answer" }, []string{`event type "answer" is declared twice`}},
		{"description not UTF-8", func(w *engine.Workflow) { w.Events[0].Description = "\xff" }, []string{`event type "answer": `, "not valid UTF-8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := asker()
			tt.mutate(&w)
			err := engine.New(engine.Options{}).Register(w)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Register: %v", err)
				}
				return
			}
			if !errors.Is(err, engine.ErrInvalidWorkflow) {
				t.Fatalf("Register = %v, want ErrInvalidWorkflow", err)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Register = %v\nwant it to contain %q", err, want)
				}
			}
			if verr := w.Validate(); verr == nil || verr.Error() != err.Error() {
				t.Errorf("Validate = %v, not Register's error", verr)
			}
		})
	}
}

// TestWorkflowsKeepTheirSchemas: the definition Workflows returns holds the
// schemas as registered, a copy that a caller's later change to its bytes
// does not reach.
func TestWorkflowsKeepTheirSchemas(t *testing.T) {
	w := asker()
	want := string(w.Events[0].Schema)
	e, _ := newEngine(t, w)
	w.Events[0].Schema[0] = '['
	w.InputSchema[0] = '['
	got, ok := e.Workflow("asker")
	if !ok || string(got.Events[0].Schema) != want || got.InputSchema[0] != '{' || got.Events[0].Description != "the answer" {
		t.Fatalf("Workflow(asker) = %+v", got)
	}
	if _, err := e.Start(context.Background(), "asker", mustStruct(t, map[string]any{"who": "ada"}), engine.StartOptions{}); err != nil {
		t.Fatalf("Start after the caller changed its bytes: %v", err)
	}
}

func TestStartChecksInputSchema(t *testing.T) {
	checked := 0
	w := asker()
	w.CheckInput = func(in *structpb.Struct) error {
		checked++
		if in.GetFields()["who"].GetStringValue() == "nobody" {
			return errors.New(`"who" must be somebody`)
		}
		return nil
	}
	e, rec := newEngine(t, w)
	tests := []struct {
		name  string
		input map[string]any
		want  []string // substrings; none: starts
	}{
		{"valid", map[string]any{"who": "ada", "n": 3.0}, nil},
		{"missing field", map[string]any{"n": 3.0}, []string{`invalid input: workflow "asker": the input does not match the workflow's input schema: at '': missing property 'who'`}},
		{"wrong types", map[string]any{"who": 1.0, "n": 2.5}, []string{`at '/n': got number, want integer; at '/who': got number, want string`}},
		{"nil input is the empty object", nil, []string{"missing property 'who'"}},
		{"schema first, then CheckInput", map[string]any{"who": "nobody"}, []string{`invalid input: workflow "asker": "who" must be somebody`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := e.Live()
			h, err := e.Start(context.Background(), "asker", mustStruct(t, tt.input), engine.StartOptions{HandlerID: "h-" + tt.name})
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				rec.awaitIdle(t, h.ID(), 1)
				return
			}
			if !errors.Is(err, engine.ErrInvalidInput) || h != nil {
				t.Fatalf("Start = %v, %v; want ErrInvalidInput and no handler", h, err)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Start = %v\nwant it to contain %q", err, want)
				}
			}
			if e.Live() != live || len(rec.changesOf("h-"+tt.name)) != 0 {
				t.Fatalf("a refused input left a handler: live %d (was %d), changes %v", e.Live(), live, rec.changesOf("h-"+tt.name))
			}
		})
	}
	var se *engine.SchemaError
	_, err := e.Start(context.Background(), "asker", nil, engine.StartOptions{})
	if !errors.As(err, &se) || se.Workflow != "asker" || se.EventType != "" || !slices.Equal(se.Problems, []string{"at '': missing property 'who'"}) {
		t.Fatalf("Start(nil) = %#v", err)
	}
	if checked != 2 { // the valid input and "nobody": CheckInput runs after the schema
		t.Fatalf("CheckInput ran %d times, want 2", checked)
	}
}

// TestChildInputSchema: a child's input is checked like any: the parent's
// StartChild fails with the schema's complaint.
func TestChildInputSchema(t *testing.T) {
	parent := engine.Workflow{Name: "parent", Steps: []engine.Step{step("spawn", engine.StartEvent, []string{engine.StopEvent},
		func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			if _, err := sc.StartChild("asker", in.Data); err != nil {
				return err
			}
			return sc.Send(engine.StopEvent, nil)
		})}}
	e, _ := newEngine(t, parent, asker())
	info := wait(t, start(t, e, "parent", map[string]any{"who": 7.0}))
	if info.Status != engine.StatusFailed || !strings.Contains(info.Error, "at '/who': got number, want string") {
		t.Fatalf("parent ended %v: %q", info.Status, info.Error)
	}
}

func TestEventSchema(t *testing.T) {
	ctx := context.Background()
	e, rec := newEngine(t, asker())
	h := start(t, e, "asker", map[string]any{"who": "ada"})
	rec.awaitIdle(t, h.ID(), 1)

	refused := []struct {
		name, typ string
		data      map[string]any
		want      string
	}{
		{"waited for, missing field", "answer", map[string]any{}, `invalid event: workflow "asker": the data of event "answer" does not match its schema: at '': missing property 'ok'`},
		{"waited for, wrong type", "answer", map[string]any{"ok": "yes"}, `at '/ok': got string, want boolean`},
		{"waited for, no data", "answer", nil, `missing property 'ok'`},
		{"external", "note", map[string]any{"text": []any{"a"}}, `the data of event "note" does not match its schema: at '/text': got array, want string`},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			changes := len(rec.changesOf(h.ID()))
			err := h.SendEvent(ctx, engine.Event{Type: tt.typ, Data: mustStruct(t, tt.data)}, engine.SendOptions{IdempotencyKey: "k-" + tt.name})
			var se *engine.SchemaError
			if !errors.Is(err, engine.ErrInvalidEvent) || !errors.As(err, &se) || se.EventType != tt.typ || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("SendEvent = %v\nwant a SchemaError (ErrInvalidEvent) containing %q", err, tt.want)
			}
			if n := len(rec.changesOf(h.ID())); n != changes {
				t.Fatalf("a refused event made %d changes", n-changes)
			}
		})
	}
	// Undeclared types take any data; declared ones data that matches.
	send(t, h, "poke", map[string]any{"anything": 1.0})
	send(t, h, "note", map[string]any{"text": "hi"})
	rec.await(t, h.ID(), 2, func(r engine.Record) bool {
		return r.Kind == engine.RecordStepState && r.Step.Step == "noted" && !r.Step.Running
	})
	// The refused events' keys were not taken: the same key with good data is a new event.
	if err := h.SendEvent(ctx, engine.Event{Type: "answer", Data: mustStruct(t, map[string]any{"ok": true})},
		engine.SendOptions{IdempotencyKey: "k-waited for, wrong type"}); err != nil {
		t.Fatalf("a good answer: %v", err)
	}
	if info := wait(t, h); info.Status != engine.StatusCompleted || !info.Result.Fields["ok"].GetBoolValue() {
		t.Fatalf("final %+v", info)
	}
	// A finished handler says so first, whatever the data.
	if err := h.SendEvent(ctx, engine.Event{Type: "note"}, engine.SendOptions{}); !errors.Is(err, engine.ErrHandlerDone) {
		t.Fatalf("SendEvent to a finished handler = %v, want ErrHandlerDone", err)
	}
}

// TestEventSchemaAfterType: a declared type that the handler does not take
// now (no step waits for it) is refused for its type, whatever its data;
// once a step waits for it, for its data.
func TestEventSchemaAfterType(t *testing.T) {
	w := engine.Workflow{
		Name:     "later",
		External: []string{"go"},
		Events:   []engine.EventType{{Type: "answer", Schema: []byte(`{"required": ["ok"]}`)}},
		Steps: []engine.Step{
			step("begin", engine.StartEvent, nil, nop),
			step("wait", "go", []string{engine.StopEvent}, func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				ev, err := sc.WaitFor("answer", engine.WaitOptions{})
				if err != nil {
					return err
				}
				return sc.Send(engine.StopEvent, ev.Data)
			}),
		},
	}
	e, rec := newEngine(t, w)
	h := start(t, e, "later", nil)
	rec.awaitIdle(t, h.ID(), 1)
	var refused *engine.EventRefusedError
	if err := h.SendEvent(context.Background(), engine.Event{Type: "answer"}, engine.SendOptions{}); !errors.As(err, &refused) {
		t.Fatalf("SendEvent(answer) before anyone waits = %v, want an EventRefusedError", err)
	}
	send(t, h, "go", nil)
	rec.awaitIdle(t, h.ID(), 2)
	var se *engine.SchemaError
	if err := h.SendEvent(context.Background(), engine.Event{Type: "answer"}, engine.SendOptions{}); !errors.As(err, &se) {
		t.Fatalf("SendEvent(answer) while a step waits = %v, want a SchemaError", err)
	}
	send(t, h, "answer", map[string]any{"ok": 1.0})
	if info := wait(t, h); info.Status != engine.StatusCompleted {
		t.Fatalf("final %+v", info)
	}
}

// TestFromWfdSkipsSchemas: events wfd sends itself were checked where they
// entered wfd; a user's schema does not apply to them.
func TestFromWfdSkipsSchemas(t *testing.T) {
	e, rec := newEngine(t, asker())
	h := start(t, e, "asker", map[string]any{"who": "ada"})
	rec.awaitIdle(t, h.ID(), 1)
	bad := engine.Event{Type: "answer", Data: mustStruct(t, map[string]any{"ok": "not a bool"})}
	if err := h.SendEvent(context.Background(), bad, engine.SendOptions{}); !errors.Is(err, engine.ErrInvalidEvent) {
		t.Fatalf("from outside: %v", err)
	}
	if err := h.SendEvent(context.Background(), bad, engine.SendOptions{FromWfd: true}); err != nil {
		t.Fatalf("FromWfd: %v", err)
	}
	if info := wait(t, h); info.Status != engine.StatusCompleted || info.Result.Fields["ok"].GetStringValue() != "not a bool" {
		t.Fatalf("final %+v", info)
	}
}

// TestRestoreChecksEventSchema: Restore for an event its data refuses
// returns the SchemaError and restores nothing; for good data it restores.
func TestRestoreChecksEventSchema(t *testing.T) {
	ctx := context.Background()
	e, rec := newEngine(t, asker())
	h := start(t, e, "asker", map[string]any{"who": "ada"})
	rec.awaitIdle(t, h.ID(), 1)
	snap, err := h.Release(ctx)
	if err != nil {
		t.Fatal(err)
	}
	<-h.Done()

	bad := engine.Event{Type: "answer", Data: mustStruct(t, map[string]any{"ok": 1.0})}
	_, _, err = e.Restore(ctx, snap, engine.RestoreOptions{Accepting: &bad})
	var se *engine.SchemaError
	if !errors.As(err, &se) || !errors.Is(err, engine.ErrInvalidEvent) || !strings.Contains(err.Error(), "at '/ok': got number, want boolean") {
		t.Fatalf("Restore for bad data = %v", err)
	}
	if _, ok := e.Handler(h.ID()); ok || e.Live() != 0 {
		t.Fatal("a refused event restored the handler")
	}
	// An undeclared type nobody waits for is refused for its type first.
	poke := engine.Event{Type: "nobody-waits"}
	if _, _, err := e.Restore(ctx, snap, engine.RestoreOptions{Accepting: &poke}); !errors.Is(err, engine.ErrInvalidEvent) || errors.As(err, &se) && se.EventType == "nobody-waits" {
		t.Fatalf("Restore for an unknown type = %v", err)
	}
	good := engine.Event{Type: "answer", Data: mustStruct(t, map[string]any{"ok": true})}
	h2, _, err := e.Restore(ctx, snap, engine.RestoreOptions{Accepting: &good})
	if err != nil {
		t.Fatalf("Restore for good data: %v", err)
	}
	if err := h2.SendEvent(ctx, good, engine.SendOptions{}); err != nil {
		t.Fatal(err)
	}
	if info := wait(t, h2); info.Status != engine.StatusCompleted {
		t.Fatalf("final %+v", info)
	}
}
