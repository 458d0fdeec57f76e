package engine_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/workflows"
)

// TestCompact releases most of many idle handlers: Compact rebuilds the
// registry only when it has fallen far below its peak, and the handlers
// left keep working.
func TestCompact(t *testing.T) {
	for _, tc := range []struct {
		name           string
		start, release int
		want           bool
	}{
		{"few handlers", 100, 90, false},
		{"most released", 2000, 1900, true},
		{"half released", 2000, 1000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &idleCounter{idle: make(chan struct{}, tc.start)}
			e := engine.New(engine.Options{Journal: j})
			engine.CompactAlways(e)
			if err := e.Register(workflows.Approval()); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			hs := make([]*engine.Handler, tc.start)
			for i := range hs {
				h, err := e.Start(ctx, "approval", nil, engine.StartOptions{})
				if err != nil {
					t.Fatal(err)
				}
				hs[i] = h
			}
			for range hs {
				<-j.idle
			}
			for _, h := range hs[:tc.release] {
				if _, err := h.Release(ctx); err != nil {
					t.Fatalf("Release: %v", err)
				}
				<-h.Done() // the acknowledgement may come before the handler leaves the registry
			}
			if got := e.Compact(); got != tc.want {
				t.Errorf("Compact() = %v, want %v", got, tc.want)
			}
			if e.Compact() {
				t.Error("a second Compact rebuilt the registry again")
			}
			if got, want := e.Live(), tc.start-tc.release; got != want {
				t.Errorf("Live() = %d, want %d", got, want)
			}
			approve := &structpb.Struct{Fields: map[string]*structpb.Value{"approved": structpb.NewBoolValue(true)}}
			for _, h := range hs[tc.release:] {
				if got, ok := e.Handler(h.ID()); !ok || got != h {
					t.Fatalf("Handler(%s) after Compact: %v, %v", h.ID(), got, ok)
				}
				if err := h.SendEvent(ctx, engine.Event{Type: workflows.ApprovalEvent, Data: approve}, engine.SendOptions{}); err != nil {
					t.Fatalf("SendEvent: %v", err)
				}
				if info, err := h.Wait(ctx); err != nil || info.Status != engine.StatusCompleted {
					t.Fatalf("Wait: %v, %v", info.Status, err)
				}
			}
		})
	}
}
