package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// versioned is a workflow that waits for "go" and then finishes with the
// version it ran as its result; v2 also declares a schema for its input.
func versioned(version string, withSchema bool) engine.Workflow {
	finish := func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
		return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"ran": structpb.NewStringValue(version)}})
	}
	w := engine.Workflow{Name: "versioned", Version: version, External: []string{"go"}, Steps: []engine.Step{
		step("init", engine.StartEvent, nil, nop),
		step("finish", "go", []string{engine.StopEvent}, finish),
	}}
	if withSchema {
		w.InputSchema = []byte(`{"type": "object", "properties": {"note": {"type": "string"}}}`)
	}
	return w
}

// release waits until h is idle and releases it, returning its checkpoint.
func release(t *testing.T, h *engine.Handler) *statev1.HandlerState {
	t.Helper()
	var snap *statev1.HandlerState
	testwait.For(t, "the handler released (it is idle)", func() bool {
		var err error
		snap, err = h.Release(context.Background())
		if err != nil && !errors.Is(err, engine.ErrNotIdle) {
			t.Fatal(err)
		}
		return err == nil
	})
	// The release is acknowledged before the handler leaves the registry:
	// a Restore of its checkpoint right away could find it still there.
	select {
	case <-h.Done():
	case <-time.After(testwait.Timeout):
		t.Fatalf("handler %s released but still in the registry after %v", h.ID(), testwait.Timeout)
	}
	return snap
}

// ran sends "go" to h and returns the version it finished with.
func ran(t *testing.T, h *engine.Handler) string {
	t.Helper()
	if err := h.SendEvent(context.Background(), engine.Event{Type: "go"}, engine.SendOptions{}); err != nil {
		t.Fatal(err)
	}
	info := wait(t, h)
	if info.Status != engine.StatusCompleted {
		t.Fatalf("status %v (%s)", info.Status, info.Error)
	}
	return info.Result.GetFields()["ran"].GetStringValue()
}

// TestVersionsPinHandlers: a handler runs the version it started on to its
// end, across a release and a restore, while the newest version
// registered is the one new handlers start on.
func TestVersionsPinHandlers(t *testing.T) {
	ctx := context.Background()
	e, rec := newEngine(t, versioned("v1", false))
	old := start(t, e, "versioned", nil)
	rec.awaitIdle(t, old.ID(), 1)
	snap := release(t, old)
	if got := snap.GetWorkflowVersion(); got != "v1" {
		t.Fatalf("checkpoint records version %q, want v1", got)
	}

	if err := e.Register(versioned("v2", true)); err != nil {
		t.Fatalf("registering a second version: %v", err)
	}
	if w, _ := e.Workflow("versioned"); w.Version != "v2" {
		t.Fatalf("current version %q, want v2", w.Version)
	}
	if defs, current := e.Versions("versioned"); len(defs) != 2 || defs[0].Version != "v1" || current != "v2" {
		t.Fatalf("Versions: %d, current %q", len(defs), current)
	}
	fresh := start(t, e, "versioned", nil)
	restored, _, err := e.Restore(ctx, snap, engine.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ran(t, restored); got != "v1" {
		t.Fatalf("the restored handler ran %s, want v1 (the version it started on)", got)
	}
	if got := ran(t, fresh); got != "v2" {
		t.Fatalf("a new handler ran %s, want v2", got)
	}
	// Every change says which version its handler runs (the store keeps
	// it with the handler's metadata).
	for id, want := range map[string]string{old.ID(): "v1", fresh.ID(): "v2"} {
		for _, c := range rec.changesOf(id) {
			if c.WorkflowVersion != want {
				t.Fatalf("a change of %s says version %q, want %s", id, c.WorkflowVersion, want)
			}
		}
	}

	// A start may name a version; the current one may change.
	h, err := e.Start(ctx, "versioned", nil, engine.StartOptions{Version: "v1"})
	if err != nil || ran(t, h) != "v1" {
		t.Fatalf("Start with Version v1: %v", err)
	}
	if err := e.SetCurrent("versioned", "v1"); err != nil {
		t.Fatal(err)
	}
	if got := ran(t, start(t, e, "versioned", nil)); got != "v1" {
		t.Fatalf("after SetCurrent v1 a new handler ran %s", got)
	}
}

// TestVersionMissing: a handler whose version is not registered is not
// restored, and says so with ErrUnknownVersion, which is not
// ErrUnknownWorkflow (the handler waits for its version; it does not
// fail). A checkpoint from before versions runs the version registered
// first.
func TestVersionMissing(t *testing.T) {
	ctx := context.Background()
	e, rec := newEngine(t, versioned("v1", false))
	h := start(t, e, "versioned", nil)
	rec.awaitIdle(t, h.ID(), 1)
	snap := release(t, h)

	e2, _ := newEngine(t, versioned("v2", true))
	_, _, err := e2.Restore(ctx, snap, engine.RestoreOptions{})
	var missing *engine.VersionMissingError
	if !errors.As(err, &missing) || !errors.Is(err, engine.ErrUnknownVersion) || errors.Is(err, engine.ErrUnknownWorkflow) {
		t.Fatalf("Restore of a v1 handler where only v2 is registered: %v", err)
	}
	if missing.HandlerID != h.ID() || missing.Workflow != "versioned" || missing.Version != "v1" {
		t.Fatalf("VersionMissingError %+v", missing)
	}

	snap.WorkflowVersion = "" // written before workflows had versions
	restored, _, err := e2.Restore(ctx, snap, engine.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ran(t, restored); got != "v2" {
		t.Fatalf("a checkpoint without a version ran %s, want the version registered first, v2", got)
	}

	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"the same version again", e2.Register(versioned("v2", true)), engine.ErrWorkflowExists},
		{"SetCurrent of an unknown version", e2.SetCurrent("versioned", "v9"), engine.ErrUnknownVersion},
		{"SetCurrent of an unknown workflow", e2.SetCurrent("nope", "v1"), engine.ErrUnknownWorkflow},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if _, err := e2.Start(ctx, "versioned", nil, engine.StartOptions{Version: "v9"}); !errors.Is(err, engine.ErrUnknownVersion) {
		t.Errorf("Start of an unknown version: %v", err)
	}
}

// TestDefinitionHash: a version is named by what the definition declares,
// not by how it is written: descriptions, schema formatting and explicit
// defaults do not make a new version; a step more does.
func TestDefinitionHash(t *testing.T) {
	base := versioned("", true)
	hash := func(w engine.Workflow) string { return engine.DefinitionHash(&w) }
	same := map[string]func(w *engine.Workflow){
		"a description": func(w *engine.Workflow) { w.Description = "other words" },
		"a schema reformatted": func(w *engine.Workflow) {
			w.InputSchema = []byte(`{"properties":{"note":{"type":"string"}},"type":"object"}`)
		},
		"Workers 1 (the default)": func(w *engine.Workflow) { w.Steps[0].Workers = 1 },
	}
	for name, change := range same {
		w := versioned("", true)
		change(&w)
		if hash(w) != hash(base) {
			t.Errorf("%s made a new version", name)
		}
	}
	other := map[string]func(w *engine.Workflow){
		"a step more": func(w *engine.Workflow) {
			w.Steps = append(w.Steps, step("more", "later", nil, nop))
			w.External = append(w.External, "later")
		},
		"another schema":   func(w *engine.Workflow) { w.InputSchema = []byte(`{"type": "object"}`) },
		"a step's timeout": func(w *engine.Workflow) { w.Steps[1].Timeout = time.Minute },
	}
	for name, change := range other {
		w := versioned("", true)
		change(&w)
		if hash(w) == hash(base) {
			t.Errorf("%s kept the version", name)
		}
	}
	// Registered without a version, a workflow is named by its hash.
	e, _ := newEngine(t, base)
	if w, _ := e.Workflow("versioned"); w.Version != hash(base) {
		t.Fatalf("version %q, want the hash %q", w.Version, hash(base))
	}
}
