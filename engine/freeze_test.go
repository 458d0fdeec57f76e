package engine_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/workflows"
)

// TestIdleKeepsData parks approval handlers (an idle handler keeps its
// events' data encoded) and checks that snapshots and the resumed run see
// the input as it was given.
func TestIdleKeepsData(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input *structpb.Struct
	}{
		{"no input", nil},
		{"one field", &structpb.Struct{Fields: map[string]*structpb.Value{"bench": structpb.NewStringValue("park")}}},
		{"nested", mustStruct(t, map[string]any{"amount": 12.5, "who": map[string]any{"name": "ada", "tags": []any{"a", true, nil}}})},
		// Not valid UTF-8, so it cannot be encoded: it stays decoded.
		{"invalid utf-8", &structpb.Struct{Fields: map[string]*structpb.Value{"bad": structpb.NewStringValue("\xff\xfe")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &idleCounter{idle: make(chan struct{}, 4)}
			e := engine.New(engine.Options{Journal: j})
			if err := e.Register(workflows.Approval()); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			want := proto.Clone(tc.input).(*structpb.Struct)
			if want == nil {
				want = &structpb.Struct{}
			}
			h, err := e.Start(ctx, "approval", tc.input, engine.StartOptions{})
			if err != nil {
				t.Fatal(err)
			}
			<-j.idle
			for range 2 { // a snapshot wakes the handler; it parks again
				snap, err := h.Snapshot(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !proto.Equal(snap.GetStart().GetData(), want) {
					t.Fatalf("snapshot's start data %v, want %v", snap.GetStart().GetData(), want)
				}
				if w := snap.GetSteps()[0].GetWaiters(); len(w) != 1 || !proto.Equal(w[0].GetResume().GetEvent().GetData(), want) {
					t.Fatalf("snapshot's waiter %v, want one resuming with %v", w, want)
				}
			}
			approve := &structpb.Struct{Fields: map[string]*structpb.Value{"approved": structpb.NewBoolValue(true)}}
			if err := h.SendEvent(ctx, engine.Event{Type: workflows.ApprovalEvent, Data: approve}); err != nil {
				t.Fatal(err)
			}
			info, err := h.Wait(ctx)
			if err != nil || info.Status != engine.StatusCompleted {
				t.Fatalf("Wait: %v, %v", info.Status, err)
			}
			if got := info.Result.GetFields()["request"].GetStructValue(); !proto.Equal(got, want) {
				t.Errorf("the resumed run saw input %v, want %v", got, want)
			}
		})
	}
}
