package server_test

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
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
