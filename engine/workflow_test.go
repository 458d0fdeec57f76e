package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
)

func nop(context.Context, *engine.StepContext, engine.Event) error { return nil }

func TestValidate(t *testing.T) {
	ok := func() engine.Workflow {
		return engine.Workflow{Name: "w", Steps: []engine.Step{
			step("a", engine.StartEvent, []string{"x"}, nop),
			step("b", "x", []string{engine.StopEvent}, nop),
		}}
	}
	tests := []struct {
		name   string
		mutate func(*engine.Workflow)
		want   string // substring of the error; "" means valid
	}{
		{"valid", func(*engine.Workflow) {}, ""},
		{"no name", func(w *engine.Workflow) { w.Name = "" }, "workflow has no name"},
		{"no steps", func(w *engine.Workflow) { w.Steps = nil }, `workflow "w" has no steps`},
		{"duplicate step", func(w *engine.Workflow) { w.Steps[1].Name = "a" }, `duplicate step name "a"`},
		{"unnamed step", func(w *engine.Workflow) { w.Steps[1].Name = "" }, "step 1 has no name"},
		{"no run", func(w *engine.Workflow) { w.Steps[0].Run = nil }, `step "a" has no Run function`},
		{"accepts nothing", func(w *engine.Workflow) { w.Steps[1].Accepts = nil }, `step "b" accepts no event type`},
		{"nobody accepts start", func(w *engine.Workflow) { w.Steps[0].Accepts = []string{"x"} }, `no step accepts the "start" event`},
		{"nobody emits stop", func(w *engine.Workflow) { w.Steps[1].Emits = nil }, `no step emits the "stop" event`},
		{"accepted type without producer", func(w *engine.Workflow) { w.Steps[1].Accepts = []string{"y"} },
			`step "b" accepts "y", which no step emits and the workflow does not accept from outside`},
		{"external type has a producer", func(w *engine.Workflow) {
			w.Steps[1].Accepts = []string{"y"}
			w.External = []string{"y"}
		}, ""},
		{"accepts stop", func(w *engine.Workflow) { w.Steps[1].Accepts = []string{engine.StopEvent} }, `accepts "stop"`},
		{"emits start", func(w *engine.Workflow) { w.Steps[1].Emits = append(w.Steps[1].Emits, engine.StartEvent) }, `emits "start"`},
		{"external reserved", func(w *engine.Workflow) { w.External = []string{engine.StartEvent} }, `"start" cannot be an external event type`},
		{"negative workers", func(w *engine.Workflow) { w.Steps[0].Workers = -1 }, "negative worker limit"},
		{"negative timeout", func(w *engine.Workflow) { w.Steps[0].Timeout = -1 }, "negative timeout"},
		{"negative retry", func(w *engine.Workflow) { w.Steps[0].Retry.MaxAttempts = -1 }, "negative retry setting"},
		{"negative workflow timeout", func(w *engine.Workflow) { w.Timeout = -1 }, "negative timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := ok()
			tt.mutate(&w)
			err := w.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want error containing %q", err, tt.want)
			}
			if !errors.Is(err, engine.ErrInvalidWorkflow) {
				t.Fatalf("error %v is not ErrInvalidWorkflow", err)
			}
			if rerr := engine.New(engine.Options{}).Register(w); rerr == nil {
				t.Fatal("Register accepted an invalid workflow")
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	w := engine.Workflow{Name: "w", Steps: []engine.Step{{Name: "a"}, {Name: "a"}}}
	err := w.Validate()
	for _, want := range []string{"duplicate step name", "has no Run function", "accepts no event type", `no step accepts the "start" event`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to mention %q", err, want)
		}
	}
}

func TestRegister(t *testing.T) {
	e := engine.New(engine.Options{})
	w := engine.Workflow{Name: "w", Steps: []engine.Step{step("a", engine.StartEvent, []string{engine.StopEvent}, nop)}}
	if err := e.Register(w); err != nil {
		t.Fatal(err)
	}
	if err := e.Register(w); !errors.Is(err, engine.ErrWorkflowExists) {
		t.Fatalf("second Register = %v, want ErrWorkflowExists", err)
	}
	if _, err := e.Start(context.Background(), "nope", nil, engine.StartOptions{}); !errors.Is(err, engine.ErrUnknownWorkflow) {
		t.Fatalf("Start(unknown) = %v, want ErrUnknownWorkflow", err)
	}
	if got := e.Workflows(); len(got) != 1 || got[0].Name != "w" || got[0].Steps[0].Workers != 1 {
		t.Fatalf("Workflows = %+v", got)
	}
}

func TestRetryBackoff(t *testing.T) {
	p := engine.RetryPolicy{MaxAttempts: 5, InitialBackoff: 10, MaxBackoff: 35, Multiplier: 2}
	for attempt, want := range map[int]int{2: 10, 3: 20, 4: 35, 5: 35} {
		if got := p.Backoff(attempt); int(got) != want {
			t.Errorf("Backoff(%d) = %d, want %d", attempt, got, want)
		}
	}
}

// TestReplace: Replace needs a registered name; handlers started before
// keep the definition they started with, those started after run the new.
func TestReplace(t *testing.T) {
	def := func(v float64) engine.Workflow {
		return engine.Workflow{Name: "swap", Description: fmt.Sprint(v), Steps: []engine.Step{step("s", engine.StartEvent, []string{engine.StopEvent},
			func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				if _, err := sc.WaitFor("go", engine.WaitOptions{}); err != nil {
					return err
				}
				return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"v": structpb.NewNumberValue(v)}})
			})}}
	}
	e, _ := newEngine(t, def(1))
	if err := e.Replace(engine.Workflow{Name: "nope", Steps: def(1).Steps}); !errors.Is(err, engine.ErrUnknownWorkflow) {
		t.Fatalf("Replace of an unknown workflow: %v", err)
	}
	old := start(t, e, "swap", map[string]any{})
	if err := e.Replace(def(2)); err != nil {
		t.Fatal(err)
	}
	if w, _ := e.Workflow("swap"); w.Description != "2" {
		t.Fatalf("registered description %q, want 2", w.Description)
	}
	fresh := start(t, e, "swap", map[string]any{})
	for h, want := range map[*engine.Handler]float64{old: 1, fresh: 2} {
		if err := h.SendEvent(context.Background(), engine.Event{Type: "go"}, engine.SendOptions{}); err != nil {
			t.Fatal(err)
		}
		if info := wait(t, h); info.Result.GetFields()["v"].GetNumberValue() != want {
			t.Errorf("handler %s finished with %v, want v=%v", h.ID(), info.Result, want)
		}
	}
}
