package workflows_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/workflows"
)

// TestExamplesDeclareSchemas: every example registers, with an input
// schema, and declares the event types clients send it.
func TestExamplesDeclareSchemas(t *testing.T) {
	e := engine.New(engine.Options{})
	for _, w := range workflows.All() {
		if err := e.Register(w); err != nil {
			t.Fatalf("Register(%s): %v", w.Name, err)
		}
		if len(w.InputSchema) == 0 {
			t.Errorf("%s has no input schema", w.Name)
		}
	}
	for name, want := range map[string]string{"approval": workflows.ApprovalEvent, "notebook": workflows.NoteEvent} {
		w, _ := e.Workflow(name)
		if len(w.Events) != 1 || w.Events[0].Type != want || len(w.Events[0].Schema) == 0 || w.Events[0].Description == "" {
			t.Errorf("%s declares %+v", name, w.Events)
		}
	}
}

func obj(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestInputs: what the examples' input schemas refuse, and what CheckInput
// still refuses where a schema cannot say it.
func TestInputs(t *testing.T) {
	e := engine.New(engine.Options{})
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	for _, w := range workflows.All() {
		if err := e.Register(w); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		workflow string
		input    map[string]any
		want     string // "" starts
	}{
		{"echo", map[string]any{"anything": []any{1.0, "x"}}, ""},
		{"order", map[string]any{}, "missing property 'order_id'"},
		{"order", map[string]any{"order_id": "A1"}, ""},
		{"expense", map[string]any{"approver": "", "deadline_s": -1.0}, "at '/approver': minLength: got 0, want >= 1; at '/deadline_s': minimum: got -1, want >= 0"},
		{"batch", map[string]any{"n": 1001.0}, "at '/n': maximum: got 1001, want <= 1000"},
		{"batch", map[string]any{"n": 2.0, "fail": []any{1.5}}, "at '/fail/0': got number, want integer"},
		{"batch", map[string]any{"n": 2.0, "fail": []any{2.0}}, `"fail" must list job indexes from 0 to n-1 (1), got 2`},
		{"batch", map[string]any{"n": 0.0}, ""},
		{"job", map[string]any{"wait": 3.0}, "at '/wait': got number, want string"},
		{"job", map[string]any{"wait": strings.Repeat("é", 150)}, `"wait" must be a non-empty string of at most 200 bytes`},
	} {
		_, err := e.Start(context.Background(), tt.workflow, obj(t, tt.input), engine.StartOptions{})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %v: %v", tt.workflow, tt.input, err)
		case tt.want != "" && (!errors.Is(err, engine.ErrInvalidInput) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %v: %v, want ErrInvalidInput with %q", tt.workflow, tt.input, err, tt.want)
		}
	}
}

// TestNotebook: notes are taken at any time, each written back with the
// count; the last completes the handler; a note its schema refuses is not.
func TestNotebook(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e := engine.New(engine.Options{})
	if err := e.Register(workflows.Notebook()); err != nil {
		t.Fatal(err)
	}
	h, err := e.Start(ctx, "notebook", nil, engine.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, note := range []map[string]any{{"text": "a"}, {"text": "b"}} {
		if err := h.SendEvent(ctx, engine.Event{Type: workflows.NoteEvent, Data: obj(t, note)}, engine.SendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var se *engine.SchemaError
	if err := h.SendEvent(ctx, engine.Event{Type: workflows.NoteEvent, Data: obj(t, map[string]any{"last": true})}, engine.SendOptions{}); !errors.As(err, &se) {
		t.Fatalf("a note without text: %v", err)
	}
	if err := h.SendEvent(ctx, engine.Event{Type: workflows.NoteEvent, Data: obj(t, map[string]any{"text": "c", "last": true})}, engine.SendOptions{}); err != nil {
		t.Fatal(err)
	}
	info, err := h.Wait(ctx)
	if err != nil || info.Status != engine.StatusCompleted || info.Result.GetFields()["notes"].GetNumberValue() != 3 {
		t.Fatalf("notebook ended %+v, %v", info, err)
	}
}
