package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"

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
// Once the old version is no longer registered its handlers wait,
// Unavailable, neither restored on the new version nor failed.
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

	// A release without v1: its last handler waits for it.
	ts = startServer(t, serverConfig{dir: dir, workflows: []engine.Workflow{pinned("v2")}})
	c = ts.client()
	_, err = finishPinned(t, c, "left")
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeUnavailable || !strings.Contains(ce.Message(), "pinned@v1") {
		t.Fatalf("an event to a handler of a version not registered: %v, want Unavailable naming pinned@v1", err)
	}
	h, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: "left"})
	if err != nil {
		t.Fatal(err)
	}
	if h.GetHandler().GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING || h.GetHandler().GetWorkflowVersion() != "v1" {
		t.Fatalf("the waiting handler is %v on version %q, want running on v1", h.GetHandler().GetStatus(), h.GetHandler().GetWorkflowVersion())
	}
}
