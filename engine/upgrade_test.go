package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
)

// expense is an expense workflow: "review" waits for "approve" (a wait
// inside the step) and then finishes with the version it ran. v2 adds a
// step "audit" and an optional input field; "v2-strict" requires a field
// the old inputs lack; "v3" drops "review" for "check".
func expense(version string) engine.Workflow {
	review := func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
		if _, err := sc.WaitFor("approve", engine.WaitOptions{}); err != nil {
			return err
		}
		return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"ran": structpb.NewStringValue(version)}})
	}
	w := engine.Workflow{Name: "expense", Version: version, Steps: []engine.Step{
		{Name: "review", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent}, Run: review},
	}, Events: []engine.EventType{{Type: "approve"}},
		InputSchema: []byte(`{"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}`)}
	switch version {
	case "v2":
		w.InputSchema = []byte(`{"type": "object", "properties": {"amount": {"type": "number"}, "note": {"type": "string"}}, "required": ["amount"]}`)
		w.Steps = append(w.Steps, engine.Step{Name: "audit", Accepts: []string{"audit"}, Run: nop})
		w.External = []string{"audit"}
	case "v2-strict":
		w.InputSchema = []byte(`{"type": "object", "required": ["amount", "currency"]}`)
	case "v3":
		w.Steps[0].Name = "check"
	}
	return w
}

// TestUpgrade: a parked handler moves to a version that can hold its state
// (recorded in its stream, durable, and it finishes on the new code), and
// is refused, unchanged, by versions that cannot, each with the reason.
func TestUpgrade(t *testing.T) {
	ctx := context.Background()
	e, rec := newEngine(t, expense("v1"))
	for _, v := range []string{"v2", "v2-strict", "v3"} {
		if err := e.Register(expense(v)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := e.Start(ctx, "expense", mustStruct(t, map[string]any{"amount": 42}), engine.StartOptions{Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	rec.awaitIdle(t, h.ID(), 1)
	snap, err := h.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		to, reason string
	}{
		{"v2-strict", "input schema"},
		{"v3", `step "review", which holds its work, is not in v3`},
	} {
		err := e.CheckUpgrade(snap, c.to)
		var refused *engine.UpgradeRefusedError
		if !errors.As(err, &refused) || !errors.Is(err, engine.ErrUpgradeRefused) || !strings.Contains(refused.Reason, c.reason) {
			t.Errorf("CheckUpgrade to %s: %v, want a refusal naming %q", c.to, err, c.reason)
		}
		if err := h.Upgrade(ctx, c.to); !errors.Is(err, engine.ErrUpgradeRefused) {
			t.Errorf("Upgrade to %s: %v, want ErrUpgradeRefused", c.to, err)
		}
	}
	if err := e.CheckUpgrade(snap, "v9"); !errors.Is(err, engine.ErrUnknownVersion) {
		t.Errorf("CheckUpgrade to an unknown version: %v", err)
	}
	if err := e.CheckUpgrade(snap, "v2"); err != nil {
		t.Fatalf("CheckUpgrade to v2: %v", err)
	}
	if err := h.Upgrade(ctx, "v2"); err != nil {
		t.Fatalf("Upgrade to v2: %v", err)
	}
	var upgraded *engine.Upgraded
	for _, c := range rec.changesOf(h.ID()) {
		for _, r := range c.Records {
			if r.Kind == engine.RecordUpgraded {
				upgraded = r.Upgraded
			}
		}
	}
	if upgraded == nil || upgraded.From != "v1" || upgraded.To != "v2" {
		t.Fatalf("the stream records the upgrade as %+v, want v1 → v2", upgraded)
	}
	if changes := rec.changesOf(h.ID()); changes[len(changes)-1].WorkflowVersion != "v2" {
		t.Fatalf("the last change says version %q, want v2", changes[len(changes)-1].WorkflowVersion)
	}
	// It restores as v2 and takes what only v2 accepts.
	snap = release(t, h)
	if snap.GetWorkflowVersion() != "v2" {
		t.Fatalf("checkpoint version %q, want v2", snap.GetWorkflowVersion())
	}
	h, _, err = e.Restore(ctx, snap, engine.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.SendEvent(ctx, engine.Event{Type: "audit"}, engine.SendOptions{}); err != nil {
		t.Fatalf("an event only v2 takes: %v", err)
	}
	if err := h.SendEvent(ctx, engine.Event{Type: "approve"}, engine.SendOptions{}); err != nil {
		t.Fatal(err)
	}
	if info := wait(t, h); info.Result.GetFields()["ran"].GetStringValue() != "v2" {
		t.Fatalf("finished with %v (%s), want the v2 code's result", info.Result, info.Error)
	}
	if err := e.CheckUpgrade(snap, "v1"); err != nil {
		t.Fatalf("CheckUpgrade of the idle checkpoint back to v1: %v", err)
	}
}

// TestUpgradeBusy: a handler with a run in progress is not moved; the
// caller is told to retry once it is idle.
func TestUpgradeBusy(t *testing.T) {
	ctx := context.Background()
	hold, release := make(chan struct{}), make(chan struct{})
	slow := expense("v1")
	slow.Steps[0].Run = func(context.Context, *engine.StepContext, engine.Event) error {
		close(hold)
		<-release
		return nil
	}
	e, _ := newEngine(t, slow)
	if err := e.Register(expense("v2")); err != nil {
		t.Fatal(err)
	}
	h, err := e.Start(ctx, "expense", mustStruct(t, map[string]any{"amount": 1}), engine.StartOptions{Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	<-hold
	if err := h.Upgrade(ctx, "v2"); !errors.Is(err, engine.ErrNotIdle) {
		t.Fatalf("Upgrade of a busy handler: %v, want ErrNotIdle", err)
	}
	close(release)
	if err := h.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreUpgradeTo: a checkpoint of a version no longer registered is
// restored on another version when its state allows it, with the move
// recorded; one that does not allow it is refused and nothing restored.
func TestRestoreUpgradeTo(t *testing.T) {
	ctx := context.Background()
	e, rec := newEngine(t, expense("v1"))
	h, err := e.Start(ctx, "expense", mustStruct(t, map[string]any{"amount": 3}), engine.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec.awaitIdle(t, h.ID(), 1)
	snap := release(t, h)

	e2, rec2 := newEngine(t, expense("v3"))
	if err := e2.Register(expense("v2")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e2.Restore(ctx, snap, engine.RestoreOptions{UpgradeTo: "v3"}); !errors.Is(err, engine.ErrUpgradeRefused) {
		t.Fatalf("restore onto v3, which lacks its step: %v, want ErrUpgradeRefused", err)
	}
	if _, ok := e2.Handler(snap.GetHandlerId()); ok {
		t.Fatal("a refused restore left the handler in memory")
	}
	h, _, err = e2.Restore(ctx, snap, engine.RestoreOptions{UpgradeTo: "v2"})
	if err != nil {
		t.Fatal(err)
	}
	var upgraded *engine.Upgraded
	for _, c := range rec2.changesOf(h.ID()) {
		for _, r := range c.Records {
			if r.Kind == engine.RecordUpgraded {
				upgraded = r.Upgraded
			}
		}
	}
	if upgraded == nil || upgraded.From != "v1" || upgraded.To != "v2" {
		t.Fatalf("recorded %+v before Restore returned, want v1 → v2", upgraded)
	}
	if err := h.SendEvent(ctx, engine.Event{Type: "approve"}, engine.SendOptions{}); err != nil {
		t.Fatal(err)
	}
	if info := wait(t, h); info.Result.GetFields()["ran"].GetStringValue() != "v2" {
		t.Fatalf("finished with %v, want v2's result", info.Result)
	}
}
