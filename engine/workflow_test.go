package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

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

// TestUnregister: a version that is not current can be dropped, and its
// handlers are then not restored (VersionMissingError); the current one
// only with the workflow's last version, which drops the workflow.
func TestUnregister(t *testing.T) {
	ctx := context.Background()
	e, rec := newEngine(t, versioned("v1", false))
	h := start(t, e, "versioned", nil)
	rec.awaitIdle(t, h.ID(), 1)
	snap := release(t, h)
	if err := e.Register(versioned("v2", false)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		err, want error
	}{
		{"the current version", e.Unregister("versioned", "v2"), engine.ErrWorkflowExists},
		{"an unknown version", e.Unregister("versioned", "v9"), engine.ErrUnknownVersion},
		{"an unknown workflow", e.Unregister("nope", "v1"), engine.ErrUnknownWorkflow},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("Unregister of %s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if err := e.Unregister("versioned", "v1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Restore(ctx, snap, engine.RestoreOptions{}); !errors.Is(err, engine.ErrUnknownVersion) {
		t.Fatalf("Restore of a handler of an unregistered version: %v", err)
	}
	if err := e.Unregister("versioned", "v2"); err != nil {
		t.Fatalf("Unregister of the last version: %v", err)
	}
	if _, ok := e.Workflow("versioned"); ok {
		t.Fatal("the workflow is still registered without versions")
	}
}
