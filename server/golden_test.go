package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/wfd-dev/wfd/engine"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/server/testdata/goldenwf"
)

// TestGoldenStoreWakes opens a store written by an older wfd
// (testdata/approval-released.db, see testdata/README.md) and wakes the
// released approval handler it holds with its answer, through the API: the
// stored metadata, checkpoint and stream records of that version must stay
// readable.
func TestGoldenStoreWakes(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "approval-released.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "wfd.db"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, serverConfig{dir: dir})
	c := ts.client()
	const id = "golden-approval"

	res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
	if err != nil {
		t.Fatal(err)
	}
	h := res.Handler
	if h.Workflow != "approval" || h.Status != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING ||
		h.Residency != wfdv1.Residency_RESIDENCY_RELEASED || h.LastSeq != 5 {
		t.Fatalf("stored handler = %v", h)
	}
	if w := h.GetIdle().GetWaiters(); len(w) != 1 || w[0].Step != "decide" || w[0].EventType != "approval" {
		t.Fatalf("stored waiters = %v", w)
	}

	if _, err := sendEv(t, c, id, "approval", map[string]any{"approved": true, "comment": "still readable"}); err != nil {
		t.Fatalf("SendEvent to the stored handler: %v", err)
	}
	recs := collect(t, c, id, 0)
	const want = "1:decide started 2:event question 3:decide parked 4:idle=true 5:released " +
		"6:restored 7:idle=false 8:decide started 9:decide ended 10:COMPLETED"
	if got := kinds(recs); got != want {
		t.Fatalf("stream:\n got %s\nwant %s", got, want)
	}
	wantResult := st(t, map[string]any{"approved": true, "comment": "still readable",
		"request": map[string]any{"amount": 42.0, "requester": "ada"}})
	if got := recs[len(recs)-1].GetHandlerFinished().GetResult(); !proto.Equal(got, wantResult) {
		t.Fatalf("result = %v, want %v", got, wantResult)
	}
	res, err = c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
	if err != nil {
		t.Fatal(err)
	}
	if res.Handler.Status != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("after the answer: %v", res.Handler)
	}
}

// TestGoldenStoreRunFields opens a store written by wfd at commit fe775f8
// (testdata/notes-released.db, see testdata/README.md) whose two released
// handlers kept their outside event type and run deadline as the
// pseudo-waiters "~external/note" and "~timeout". Through the API: the
// type is listed as an outside event type (not as a waiter), an event of it
// wakes the first handler, and the second, once its deadline has passed
// on the server's clock, is woken by the deadline and times out.
func TestGoldenStoreRunFields(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "notes-released.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "wfd.db"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	// The handlers were created at 2026-11-23 21:59 UTC; the clock starts
	// an hour later and moves with real time, until the test jumps it past
	// the deadline (goldenwf.NotesTimeout).
	created := time.Date(2026, 11, 23, 21, 59, 37, 0, time.UTC)
	start := time.Now()
	var jump atomic.Int64
	now := func() time.Time { return created.Add(time.Hour + time.Since(start) + time.Duration(jump.Load())) }
	ts := startServer(t, serverConfig{dir: dir, workflows: []engine.Workflow{goldenwf.Notes()}, now: now})
	c := ts.client()

	for _, id := range []string{"golden-notes", "golden-notes-late"} {
		res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
		if err != nil {
			t.Fatal(err)
		}
		h := res.Handler
		if h.Status != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING || h.Residency != wfdv1.Residency_RESIDENCY_RELEASED ||
			len(h.GetIdle().GetWaiters()) != 0 || !slices.Equal(h.GetIdle().GetExternalEventTypes(), []string{"note"}) {
			t.Fatalf("stored handler %s = %v", id, h)
		}
	}

	h, err := sendEv(t, c, "golden-notes", "note", map[string]any{"last": true})
	if err != nil {
		t.Fatalf("SendEvent to the stored handler: %v", err)
	}
	if h.LastSeq == 0 {
		t.Fatalf("SendEvent answered %v", h)
	}
	waitStatus(t, c, "golden-notes", wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED)
	recs := collect(t, c, "golden-notes", 0)
	if got := recs[len(recs)-1].GetHandlerFinished().GetResult(); !proto.Equal(got, st(t, map[string]any{"notes": 2})) {
		t.Fatalf("result = %v, want two notes", got)
	}

	// Past the deadline, the scheduler wakes the other handler from the
	// store's timer index, and it times out.
	jump.Store(int64(goldenwf.NotesTimeout))
	late := waitStatus(t, c, "golden-notes-late", wfdv1.HandlerStatus_HANDLER_STATUS_FAILED)
	if !strings.Contains(late.Error, "timed out") {
		t.Fatalf("late handler failed with %q, want a workflow timeout", late.Error)
	}
}

// waitStatus waits until handler id has status want and returns it.
func waitStatus(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string, want wfdv1.HandlerStatus) *wfdv1.Handler {
	t.Helper()
	var h *wfdv1.Handler
	testwait.For(t, fmt.Sprintf("handler %s to be %v", id, want), func() bool {
		res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
		if err != nil {
			t.Fatal(err)
		}
		h = res.Handler
		return h.Status == want
	})
	return h
}
