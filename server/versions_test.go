package server_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/workflows"

	"github.com/wfd-dev/wfd/engine"
)

// pinned is a built-in workflow that waits for "go" and finishes with the
// version it ran; v2 also declares a schema for its input.
func pinned(version string) engine.Workflow {
	w := engine.Workflow{Name: "pinned", Version: version, External: []string{"go"}, Steps: []engine.Step{
		{Name: "init", Accepts: []string{engine.StartEvent}, Run: func(context.Context, *engine.StepContext, engine.Event) error { return nil }},
		{Name: "finish", Accepts: []string{"go"}, Emits: []string{engine.StopEvent}, Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"ran": structpb.NewStringValue(version)}})
		}},
	}}
	if version == "v2" {
		w.InputSchema = []byte(`{"type": "object", "properties": {"note": {"type": "string"}}}`)
	}
	return w
}

func runPinned(t *testing.T, c wfdv1connect.WorkflowServiceClient, id, version string) (*wfdv1.Handler, error) {
	t.Helper()
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "pinned", HandlerId: id, Version: version})
	if err != nil {
		return nil, err
	}
	return res.GetHandler(), nil
}

// finishPinned sends "go" and returns the version the handler finished on.
func finishPinned(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) (string, error) {
	t.Helper()
	res, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "go", Data: &structpb.Struct{}},
		Wait: durationpb.New(time.Minute)})
	if err != nil {
		return "", err
	}
	h := res.GetHandler()
	if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("%s: %v after go (%s)", id, h.GetStatus(), h.GetError())
	}
	return h.GetResult().GetFields()["ran"].GetStringValue(), nil
}

// TestBuiltInWorkflowVersionsAcrossRestarts: a Go program that changes a
// built-in workflow between releases and registers both versions keeps
// the handlers of the old one on it (released or idle when it stopped),
// while new handlers start on the new one unless a call names a version.
// A release that drops the old version while handlers need it refuses to
// start, naming them, unless told to fail them.
func TestBuiltInWorkflowVersionsAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir, workflows: []engine.Workflow{pinned("v1")}})
	c := ts.client()
	for _, id := range []string{"released", "idle", "left"} {
		h, err := runPinned(t, c, id, "")
		if err != nil {
			t.Fatal(err)
		}
		if h.GetWorkflowVersion() != "v1" {
			t.Fatalf("%s runs version %q, want v1", id, h.GetWorkflowVersion())
		}
		waitIdle(t, c, id)
	}
	if _, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: "released"}); err != nil {
		t.Fatal(err)
	}
	ts.stop()

	// The next release registers v1 and v2.
	ts = startServer(t, serverConfig{dir: dir, workflows: []engine.Workflow{pinned("v1"), pinned("v2")}})
	c = ts.client()
	wfs, err := c.ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wfs.GetWorkflows() {
		if w.GetName() == "pinned" && w.GetVersion() != "v2" {
			t.Fatalf("ListWorkflows: current version %q, want v2", w.GetVersion())
		}
	}
	if h, err := runPinned(t, c, "new", ""); err != nil || h.GetWorkflowVersion() != "v2" {
		t.Fatalf("a new handler: %v, version %q, want v2", err, h.GetWorkflowVersion())
	}
	if h, err := runPinned(t, c, "old-on-purpose", "v1"); err != nil || h.GetWorkflowVersion() != "v1" {
		t.Fatalf("a handler started on v1 by name: %v, version %q", err, h.GetWorkflowVersion())
	}
	if _, err := runPinned(t, c, "nowhere", "v9"); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("RunWorkflow of version v9: %v, want NotFound", err)
	}
	for id, want := range map[string]string{"released": "v1", "idle": "v1", "new": "v2", "old-on-purpose": "v1"} {
		if got, err := finishPinned(t, c, id); err != nil || got != want {
			t.Fatalf("%s ran %q (%v), want %s", id, got, err, want)
		}
	}
	ts.stop()

	// A release without v1 does not start while a handler needs v1, and
	// says which; told to, it fails them or moves them to v2.
	ts = startServer(t, serverConfig{dir: dir, workflows: []engine.Workflow{pinned("v1"), pinned("v2")}})
	if _, err := runPinned(t, ts.client(), "to-fail", "v1"); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, ts.client(), "to-fail")
	ts.stop()
	err = startErr(t, dir, server.Options{Workflows: []engine.Workflow{pinned("v2")}})
	if err == nil || !strings.Contains(err.Error(), "pinned@v1 is not registered, and 2 running handlers need it (") ||
		!strings.Contains(err.Error(), "left") || !strings.Contains(err.Error(), "to-fail") {
		t.Fatalf("start-up without v1: %v, want a refusal naming left and to-fail", err)
	}
	ts = startServer(t, serverConfig{dir: dir, workflows: []engine.Workflow{pinned("v1"), pinned("v2")}})
	if _, err := ts.client().CancelHandler(ctxT(t), &wfdv1.CancelHandlerRequest{HandlerId: "left"}); err != nil {
		t.Fatal(err)
	}
	if _, err := runPinned(t, ts.client(), "left-too", "v1"); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, ts.client(), "left-too")
	ts.stop()
	ts = startServer(t, serverConfig{dir: dir, workflows: []engine.Workflow{pinned("v2")}, options: func(o *server.Options) {
		o.DroppedVersions = server.DroppedFail
	}})
	c = ts.client()
	h, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: "to-fail"})
	if err != nil {
		t.Fatal(err)
	}
	if h.GetHandler().GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_FAILED || !strings.Contains(h.GetHandler().GetError(), "pinned@v1 is no longer registered") {
		t.Fatalf("with DroppedFail: %v (%s), want failed for its dropped version", h.GetHandler().GetStatus(), h.GetHandler().GetError())
	}
	ts.stop()
}

// TestDroppedVersionUpgradedAtStartUp: told to, a start-up without a
// version moves its handlers to the current version, which they then
// finish on; a handler the current version cannot carry refuses the
// start, with the reason.
func TestDroppedVersionUpgradedAtStartUp(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir, workflows: []engine.Workflow{pinned("v1")}})
	for _, id := range []string{"moves", "stays"} {
		res, err := ts.client().RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "pinned", HandlerId: id,
			Input: st(t, map[string]any{"note": map[bool]any{true: "words", false: 7.0}[id == "moves"]})})
		if err != nil {
			t.Fatal(err)
		}
		waitIdle(t, ts.client(), res.GetHandler().GetHandlerId())
	}
	ts.stop()

	upgrade := func(o *server.Options) { o.DroppedVersions = server.DroppedUpgrade }
	o := server.Options{Workflows: []engine.Workflow{pinned("v2")}}
	upgrade(&o)
	err := startErr(t, dir, o)
	if err == nil || !strings.Contains(err.Error(), "stays cannot move to v2: its input does not match the input schema of v2") {
		t.Fatalf("start-up moving a handler v2 cannot carry: %v", err)
	}
	// (The refused start moved "moves" already: each move is its own commit.)
	ts = startServer(t, serverConfig{dir: dir, workflows: []engine.Workflow{pinned("v1"), pinned("v2")}})
	if _, err := ts.client().CancelHandler(ctxT(t), &wfdv1.CancelHandlerRequest{HandlerId: "stays"}); err != nil {
		t.Fatal(err)
	}
	ts.stop()
	ts = startServer(t, serverConfig{dir: dir, workflows: []engine.Workflow{pinned("v2")}, options: upgrade})
	c := ts.client()
	if got, err := finishPinned(t, c, "moves"); err != nil || got != "v2" {
		t.Fatalf("the moved handler finished on %q (%v), want v2", got, err)
	}
	upgraded := false
	for _, r := range collect(t, c, "moves", 0) {
		upgraded = upgraded || r.GetHandlerUpgraded().GetToVersion() == "v2"
	}
	if !upgraded {
		t.Fatal("the moved handler's stream does not say it was upgraded")
	}
}

// startErr is the error of a server.New over the store in dir, with
// opts (the server it made, if any, is closed).
func startErr(t *testing.T, dir string, opts server.Options) error {
	t.Helper()
	store, err := bolt.Open(filepath.Join(dir, "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	opts.Store = store
	srv, err := server.New(context.Background(), opts)
	if err == nil {
		_ = srv.Close(context.Background())
	}
	return err
}

// TestStartupDoesNotScanVersions: start-up's check for running handlers
// of unregistered versions asks the store which versions run
// (RunningVersions, a few index keys a version) and never counts the
// handlers (CountVersions scans an index entry for each, which with a
// million released handlers mapped most of the store file into the
// process).
func TestStartupDoesNotScanVersions(t *testing.T) {
	f := startFaulty(t, server.Options{Workflows: []engine.Workflow{workflows.Approval()}})
	if got := f.fs.Calls.RunningVersions.Load(); got == 0 {
		t.Fatal("start-up did not ask the store which versions run")
	}
	if got := f.fs.Calls.CountVersions.Load(); got != 0 {
		t.Fatalf("start-up counted the handlers by version %d times, want none", got)
	}
}
