package engine_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/workflows"
)

// picky accepts "zeta" and "alpha" from outside and parks its start step on
// a wait for "go".
func picky() engine.Workflow {
	return engine.Workflow{Name: "picky", External: []string{"zeta", "alpha"}, Steps: []engine.Step{
		{Name: "wait", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
			Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				if _, err := sc.WaitFor("go", engine.WaitOptions{}); err != nil {
					return err
				}
				return sc.Send(engine.StopEvent, nil)
			}},
		{Name: "note", Accepts: []string{"zeta", "alpha"}, Run: nop},
	}}
}

// TestEventRefusedError: an event the workflow does not accept from outside
// and no step waits for is an EventRefusedError, whose message names what
// the workflow accepts, sorted.
func TestEventRefusedError(t *testing.T) {
	e, rec := newEngine(t, picky())
	h := start(t, e, "picky", nil)
	rec.awaitIdle(t, h.ID(), 1)
	for _, typ := range []string{"zeta", "alpha", "go"} { // accepted from outside, waited for
		send(t, h, typ, nil)
	}
	h = start(t, e, "picky", nil)
	rec.awaitIdle(t, h.ID(), 1)
	err := h.SendEvent(context.Background(), engine.Event{Type: "nonsense"}, engine.SendOptions{})
	var refused *engine.EventRefusedError
	if !errors.As(err, &refused) || !errors.Is(err, engine.ErrInvalidEvent) {
		t.Fatalf("SendEvent(nonsense) = %v, want an EventRefusedError that is ErrInvalidEvent", err)
	}
	want := engine.EventRefusedError{HandlerID: h.ID(), Workflow: "picky", Type: "nonsense", Accepted: []string{"alpha", "zeta"}}
	if refused.HandlerID != want.HandlerID || refused.Workflow != want.Workflow || refused.Type != want.Type || !slices.Equal(refused.Accepted, want.Accepted) {
		t.Fatalf("refused %+v, want %+v", *refused, want)
	}
	msg := `invalid event: workflow "picky" does not accept "nonsense" from outside (it accepts "alpha", "zeta") and no step of handler ` +
		h.ID() + " waits for it"
	if err.Error() != msg {
		t.Fatalf("message %q\nwant    %q", err.Error(), msg)
	}
	if none := (&engine.EventRefusedError{HandlerID: "h", Workflow: "w", Type: "t"}).Error(); !strings.Contains(none, "(it accepts none)") {
		t.Fatalf("message without accepted types: %q", none)
	}
}

// TestReservedTypesNeedFromWfd: the "wfd." types enter a handler only when
// SendOptions.FromWfd says wfd sends them; otherwise they are refused
// whatever the handler's state, before anything else is checked.
func TestReservedTypesNeedFromWfd(t *testing.T) {
	e, rec := newEngine(t, workflows.Approval(), workflows.Echo())
	idle := start(t, e, "approval", nil)
	rec.awaitIdle(t, idle.ID(), 1)
	done := start(t, e, "echo", nil)
	wait(t, done)
	child := engine.ChildDoneEvent("c1", engine.ChildResult{Status: engine.StatusCompleted})
	for _, h := range []*engine.Handler{idle, done} {
		for _, typ := range []string{engine.TaskEvent, engine.KeyEvent, engine.ChildEvent} {
			err := h.SendEvent(context.Background(), engine.Event{Type: typ, Data: child.Data}, engine.SendOptions{})
			if !errors.Is(err, engine.ErrInvalidEvent) || !strings.Contains(err.Error(), "reserved") {
				t.Fatalf("SendEvent(%s) without FromWfd to %s = %v, want ErrInvalidEvent (reserved)", typ, h.Workflow(), err)
			}
		}
	}
	// From wfd, a child's end enters any running handler; its data is
	// sanitized (a NaN becomes null), not refused.
	nan := engine.ChildDoneEvent("c2", engine.ChildResult{Status: engine.StatusCompleted,
		Result: &structpb.Struct{Fields: map[string]*structpb.Value{"x": structpb.NewNumberValue(math.NaN())}}})
	if err := idle.SendEvent(context.Background(), nan, engine.SendOptions{FromWfd: true}); err != nil {
		t.Fatalf("SendEvent(child end, FromWfd) = %v", err)
	}
	if err := idle.SendEvent(context.Background(), nan, engine.SendOptions{}); !errors.Is(err, engine.ErrInvalidEvent) {
		t.Fatalf("SendEvent(child end with a NaN, not FromWfd) = %v, want ErrInvalidEvent", err)
	}
	send(t, idle, workflows.ApprovalEvent, map[string]any{"approved": true})
	wait(t, idle)
}

// TestCheckEvent: what SendEvent refuses of any event, asked without a
// handler.
func TestCheckEvent(t *testing.T) {
	e, _ := newEngine(t)
	nan := &structpb.Struct{Fields: map[string]*structpb.Value{"x": structpb.NewNumberValue(math.NaN())}}
	for _, tc := range []struct {
		name string
		ev   engine.Event
		opts engine.SendOptions
		want error
	}{
		{"plain", engine.Event{Type: "x"}, engine.SendOptions{}, nil},
		{"no type", engine.Event{}, engine.SendOptions{}, engine.ErrInvalidEvent},
		{"start", engine.Event{Type: engine.StartEvent}, engine.SendOptions{FromWfd: true}, engine.ErrInvalidEvent},
		{"stop", engine.Event{Type: engine.StopEvent}, engine.SendOptions{}, engine.ErrInvalidEvent},
		{"reserved", engine.Event{Type: engine.TaskEvent}, engine.SendOptions{}, engine.ErrInvalidEvent},
		{"reserved from wfd", engine.Event{Type: engine.TaskEvent}, engine.SendOptions{FromWfd: true}, nil},
		{"bad data", engine.Event{Type: "x", Data: nan}, engine.SendOptions{}, engine.ErrInvalidPayload},
		{"bad data from wfd", engine.Event{Type: engine.KeyEvent, Data: nan}, engine.SendOptions{FromWfd: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := e.CheckEvent(tc.ev, tc.opts)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("CheckEvent = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestHandlerDoneError: a finished handler's calls fail with a
// HandlerDoneError naming it and its status.
func TestHandlerDoneError(t *testing.T) {
	e, _ := newEngine(t, workflows.Echo())
	h := start(t, e, "echo", nil)
	wait(t, h)
	calls := map[string]func() error{
		"SendEvent": func() error { return h.SendEvent(context.Background(), engine.Event{Type: "x"}, engine.SendOptions{}) },
		"Cancel":    func() error { return h.Cancel(context.Background()) },
		"Release":   func() error { _, err := h.Release(context.Background()); return err },
	}
	for name, call := range calls {
		err := call()
		var done *engine.HandlerDoneError
		if !errors.As(err, &done) || !errors.Is(err, engine.ErrHandlerDone) || done.HandlerID != h.ID() || done.Status != engine.StatusCompleted {
			t.Fatalf("%s = %v, want a HandlerDoneError for %s, completed", name, err, h.ID())
		}
		if want := "handler is finished: handler " + h.ID() + " is completed"; err.Error() != want {
			t.Fatalf("%s: message %q, want %q", name, err.Error(), want)
		}
	}
}

// TestLingerZeroTakesDefault: Options.Linger 0 lingers DefaultLinger (a
// slow step's start is handed over no sooner), as server.Options.Linger 0
// does.
func TestLingerZeroTakesDefault(t *testing.T) {
	hold := make(chan struct{})
	slow := engine.Workflow{Name: "slow", Steps: []engine.Step{step("s", engine.StartEvent, []string{engine.StopEvent},
		func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			<-hold
			return sc.Send(engine.StopEvent, nil)
		})}}
	e, _ := engineWith(t, engine.Options{}, slow)
	t.Cleanup(func() { close(hold) }) // before the engine closes: cleanups run last first
	began := time.Now()
	start(t, e, "slow", nil)
	if took := time.Since(began); took < engine.DefaultLinger {
		t.Fatalf("Start returned after %v, before the default linger (%v) ended", took, engine.DefaultLinger)
	}
}
