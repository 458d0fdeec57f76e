package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/workflows"
)

// TestGoldenCheckpoint restores a checkpoint written by an older wfd
// (testdata/handlerstate-v1.golden: a released approval handler, see
// server/testdata/README.md) and completes it: every checkpoint of format
// version 1 must stay readable, field for field.
func TestGoldenCheckpoint(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "handlerstate-v1.golden"))
	if err != nil {
		t.Fatal(err)
	}
	var snap, known statev1.HandlerState
	if err := proto.Unmarshal(raw, &snap); err != nil {
		t.Fatal(err)
	}
	// Every field the old format wrote is one this version knows.
	if err := (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(raw, &known); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&snap, &known) {
		t.Fatalf("the checkpoint has fields this version does not know:\n%v", &snap)
	}
	if snap.Version != 1 || snap.HandlerId != "golden-approval" || snap.Workflow != "approval" ||
		snap.Status != statev1.HandlerStatus_HANDLER_STATUS_RUNNING || snap.Seq != 5 ||
		snap.Start.GetData().GetFields()["requester"].GetStringValue() != "ada" || snap.IdleSince == nil {
		t.Fatalf("decoded checkpoint = %v", &snap)
	}
	if s := snap.Steps; len(s) != 1 || s[0].Name != "decide" || len(s[0].Waiters) != 1 || s[0].Waiters[0].EventType != "approval" ||
		s[0].Waiters[0].Resume.GetEvent().GetType() != engine.StartEvent {
		t.Fatalf("decoded steps = %v", s)
	}

	e, rec := newEngine(t, workflows.Approval())
	h, _, err := e.Restore(context.Background(), &snap, engine.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := h.Info(context.Background())
	if err != nil || info.Idle == nil || len(info.Idle.Waiters) != 1 || info.Seq != 6 {
		t.Fatalf("restored Info = %+v, %v; want idle on one waiter at seq 6", info, err)
	}
	send(t, h, workflows.ApprovalEvent, map[string]any{"approved": true, "comment": "ok"})
	info = wait(t, h)
	if info.Status != engine.StatusCompleted || !info.Result.Fields["approved"].GetBoolValue() ||
		info.Result.Fields["request"].GetStructValue().GetFields()["amount"].GetNumberValue() != 42 {
		t.Fatalf("after the answer: %+v", info)
	}
	if recs := rec.of(h.ID()); describe(recs[0]) != "6 restored" || describe(recs[1]) != "7 busy" {
		t.Fatalf("records after restore:\n%s", dump(recs))
	}
}
