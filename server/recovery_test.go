package server_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/workflows"
)

func TestRestartResumesRunningHandlers(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir})
	c := ts.client()
	var ids []string
	for range 4 {
		h := run(t, c, "approval", nil)
		waitIdle(t, c, h.HandlerId)
		ids = append(ids, h.HandlerId)
	}
	done := run(t, c, "echo", nil)
	collect(t, c, done.HandlerId, 0)
	ts.stop()

	ts = startServer(t, serverConfig{dir: dir})
	c = ts.client(connect.WithGRPC())
	for _, id := range ids {
		h, err := sendEv(t, c, id, "approval", map[string]any{"approved": true})
		if err != nil {
			t.Fatalf("SendEvent after restart: %v", err)
		}
		recs := collect(t, c, id, 0)
		if k := kinds(recs); !strings.Contains(k, "restored") || !strings.HasSuffix(k, "COMPLETED") {
			t.Fatalf("stream of %s after restart: %s", h.HandlerId, k)
		}
	}
	res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: done.HandlerId})
	if err != nil || res.Handler.Status != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("finished handler after restart: %v %v", res, err)
	}
}

func TestCorruptSnapshotFailsOnlyThatHandler(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir})
	c := ts.client()
	bad := run(t, c, "approval", nil)
	good := run(t, c, "approval", nil)
	waitIdle(t, c, bad.HandlerId)
	waitIdle(t, c, good.HandlerId)
	ts.stop()

	// Overwrite one snapshot with garbage, keeping its metadata.
	store, err := bolt.Open(filepath.Join(dir, "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	meta, err := store.GetHandler(context.Background(), bad.HandlerId)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Write(context.Background(), persistence.Change{Handler: meta, Snapshot: []byte("\xff\xffnot a snapshot")}); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	ts = startServer(t, serverConfig{dir: dir})
	c = ts.client()
	// Idle handlers stay in the store after a restart; waking this one
	// finds the corrupt snapshot.
	_, err = sendEv(t, c, bad.HandlerId, "approval", nil)
	wantCode(t, err, connect.CodeFailedPrecondition, "cannot decode its checkpoint")
	res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: bad.HandlerId})
	if err != nil {
		t.Fatal(err)
	}
	if h := res.Handler; h.Status != wfdv1.HandlerStatus_HANDLER_STATUS_FAILED || !strings.Contains(h.Error, "cannot decode its checkpoint") {
		t.Fatalf("corrupt handler: %v", h)
	}
	if k := kinds(collect(t, c, bad.HandlerId, 0)); !strings.HasSuffix(k, "FAILED") {
		t.Fatalf("corrupt handler's stream does not end: %s", k)
	}
	_, err = sendEv(t, c, bad.HandlerId, "approval", nil)
	wantCode(t, err, connect.CodeFailedPrecondition, "failed")
	if _, err := sendEv(t, c, good.HandlerId, "approval", map[string]any{"approved": true}); err != nil {
		t.Fatalf("the other handler: %v", err)
	}
}

func TestUnregisteredWorkflowFailsHandler(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir})
	c := ts.client()
	h := run(t, c, "approval", nil)
	waitIdle(t, c, h.HandlerId)
	ts.stop()

	ts = startServer(t, serverConfig{dir: dir, workflows: []engine.Workflow{workflows.Echo()}})
	_, err := sendEv(t, ts.client(), h.HandlerId, "approval", nil)
	wantCode(t, err, connect.CodeFailedPrecondition, "unknown workflow")
	res, err := ts.client().GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: h.HandlerId})
	if err != nil {
		t.Fatal(err)
	}
	if res.Handler.Status != wfdv1.HandlerStatus_HANDLER_STATUS_FAILED || !strings.Contains(res.Handler.Error, `unknown workflow: "approval"`) {
		t.Fatalf("handler of a workflow no longer registered: %v", res.Handler)
	}
}
