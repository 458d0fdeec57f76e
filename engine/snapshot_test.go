package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/workflows"
)

func TestReleaseAndRestore(t *testing.T) {
	e1, rec1 := newEngine(t, workflows.Approval())
	h := start(t, e1, "approval", map[string]any{"n": 1.0})
	rec1.awaitIdle(t, h.ID(), 1)

	snap, err := h.Release(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	<-h.Done()
	if _, ok := e1.Handler(h.ID()); ok || e1.Live() != 0 {
		t.Fatal("released handler still live")
	}
	changes := rec1.changesOf(h.ID())
	if last := changes[len(changes)-1]; !last.Released || last.Idle == nil {
		t.Fatalf("last change Released=%v Idle=%v", last.Released, last.Idle)
	}
	if err := h.SendEvent(context.Background(), engine.Event{Type: "approval"}, engine.SendOptions{}); !errors.Is(err, engine.ErrReleased) {
		t.Fatalf("SendEvent to released handle = %v, want ErrReleased", err)
	}
	// The snapshot survives a trip through its wire format.
	raw, err := proto.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var back statev1.HandlerState
	if err := proto.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}

	e2, rec2 := newEngine(t, workflows.Approval())
	h2, _, err := e2.Restore(context.Background(), &back, engine.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := h2.Info(context.Background())
	if err != nil || info.Idle == nil || info.Seq != snap.Seq+1 {
		t.Fatalf("restored Info = %+v, %v; want idle at seq %d", info, err, snap.Seq+1)
	}
	send(t, h2, "approval", map[string]any{"approved": false})
	if info := wait(t, h2); info.Status != engine.StatusCompleted || info.Result.Fields["approved"].GetBoolValue() {
		t.Fatalf("got %+v", info)
	}
	after := rec2.of(h2.ID())
	if describe(after[0]) != fmt.Sprintf("%d restored", snap.Seq+1) || describe(after[1]) != fmt.Sprintf("%d busy", snap.Seq+2) {
		t.Fatalf("records after restore:\n%s", dump(after))
	}
	if before := rec1.of(h.ID()); describe(before[len(before)-1]) != fmt.Sprintf("%d released", snap.Seq) {
		t.Fatalf("records before release:\n%s", dump(before))
	}
}

func TestReleaseNeedsIdle(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	w := engine.Workflow{Name: "busy", Steps: []engine.Step{step("b", engine.StartEvent, []string{engine.StopEvent},
		func(context.Context, *engine.StepContext, engine.Event) error { <-hold; return nil })}}
	e, rec := newEngine(t, w, workflows.Echo())
	h := start(t, e, "busy", nil)
	rec.await(t, h.ID(), 1, func(r engine.Record) bool { return r.Kind == engine.RecordStepState })
	if _, err := h.Release(context.Background()); !errors.Is(err, engine.ErrNotIdle) {
		t.Fatalf("Release of a busy handler = %v, want ErrNotIdle", err)
	}
	done := start(t, e, "echo", nil)
	wait(t, done)
	if _, err := done.Release(context.Background()); !errors.Is(err, engine.ErrHandlerDone) {
		t.Fatalf("Release of a finished handler = %v, want ErrHandlerDone", err)
	}
}

// TestRestoreRerunsInProgress: a snapshot taken while a step runs restores
// with that run queued again (at-least-once).
func TestRestoreRerunsInProgress(t *testing.T) {
	hold := make(chan struct{})
	runs := make(chan string, 4)
	mk := func() engine.Workflow {
		return engine.Workflow{Name: "slow", Steps: []engine.Step{step("s", engine.StartEvent, []string{engine.StopEvent},
			func(ctx context.Context, sc *engine.StepContext, in engine.Event) error {
				runs <- in.ID
				select {
				case <-hold:
				case <-ctx.Done():
					return ctx.Err()
				}
				return sc.Send(engine.StopEvent, in.Data)
			})}}
	}
	e1, _ := newEngine(t, mk())
	h := start(t, e1, "slow", map[string]any{"k": "v"})
	first := <-runs
	snap, err := h.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(snap.Steps[0].InProgress); n != 1 {
		t.Fatalf("%d runs in progress in the snapshot", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := e1.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close with a step that will not finish = %v", err)
	}

	e2, _ := newEngine(t, mk())
	h2, _, err := e2.Restore(context.Background(), snap, engine.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again := <-runs; again != first {
		t.Fatalf("re-run got event %s, first run %s", again, first)
	}
	close(hold)
	if info := wait(t, h2); info.Status != engine.StatusCompleted || info.Result.Fields["k"].GetStringValue() != "v" {
		t.Fatalf("got %+v", info)
	}
}

func TestRestoreRejectsBadState(t *testing.T) {
	e, rec := newEngine(t, workflows.Approval(), workflows.Echo())
	h := start(t, e, "approval", nil)
	rec.awaitIdle(t, h.ID(), 1)
	good, err := h.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	finished := start(t, e, "echo", nil)
	wait(t, finished)
	done, _ := finished.Snapshot(context.Background())

	tests := []struct {
		name   string
		mutate func(*statev1.HandlerState) *statev1.HandlerState
		want   error
		msg    string
	}{
		{"version", func(s *statev1.HandlerState) *statev1.HandlerState { s.Version = 99; return s }, engine.ErrInvalidState, "format version 99"},
		{"unknown workflow", func(s *statev1.HandlerState) *statev1.HandlerState { s.Workflow = "gone"; return s }, engine.ErrUnknownWorkflow, `"gone"`},
		{"unknown step", func(s *statev1.HandlerState) *statev1.HandlerState { s.Steps[0].Name = "gone"; return s }, engine.ErrInvalidState, `no step "gone"`},
		{"no id", func(s *statev1.HandlerState) *statev1.HandlerState { s.HandlerId = ""; return s }, engine.ErrInvalidState, "no handler id"},
		{"bad status", func(s *statev1.HandlerState) *statev1.HandlerState { s.Status = 0; return s }, engine.ErrInvalidState, "status"},
		{"finished", func(*statev1.HandlerState) *statev1.HandlerState { return done }, engine.ErrHandlerDone, "completed"},
		{"live id", func(s *statev1.HandlerState) *statev1.HandlerState { return s }, engine.ErrHandlerExists, h.ID()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.mutate(proto.Clone(good).(*statev1.HandlerState))
			_, _, err := e.Restore(context.Background(), s, engine.RestoreOptions{})
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Restore = %v, want %v mentioning %q", err, tt.want, tt.msg)
			}
		})
	}
}

// TestWorkflowTimeoutSurvivesRestore: the deadline is absolute, so a restored
// handler fails when the original run would have. The second engine's clock
// is two hours ahead: with the deadline kept, the hour-long timeout has
// passed and the handler fails at once; a restarted timer would wait an hour.
func TestWorkflowTimeoutSurvivesRestore(t *testing.T) {
	w := workflows.Approval()
	w.Timeout = time.Hour
	e1, rec := newEngine(t, w)
	h := start(t, e1, "approval", nil)
	rec.awaitIdle(t, h.ID(), 1)
	snap, err := h.Release(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e2 := engine.New(engine.Options{Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	engine.CompactAlways(e2)
	if err := e2.Register(w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e2.Close(context.Background()) })
	h2, _, err := e2.Restore(context.Background(), snap, engine.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	info := wait(t, h2)
	if info.Status != engine.StatusFailed || !strings.Contains(info.Error, "workflow timed out") {
		t.Fatalf("got %v %q", info.Status, info.Error)
	}
}

func TestCloseIsGraceful(t *testing.T) {
	hold := make(chan struct{})
	w := engine.Workflow{Name: "g", Steps: []engine.Step{step("g", engine.StartEvent, []string{engine.StopEvent},
		func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			<-hold
			return sc.Send(engine.StopEvent, nil)
		})}}
	e, rec := newEngine(t, w)
	h := start(t, e, "g", nil)
	rec.await(t, h.ID(), 1, func(r engine.Record) bool { return r.Kind == engine.RecordStepState })
	closed := make(chan error)
	go func() { closed <- e.Close(context.Background()) }()
	time.Sleep(10 * time.Millisecond)
	close(hold)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if info := wait(t, h); info.Status != engine.StatusCompleted {
		t.Fatalf("run in progress at Close ended %v", info.Status)
	}
	if _, err := e.Start(context.Background(), "g", nil, engine.StartOptions{}); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("Start after Close = %v", err)
	}
}

// lastSnapshot is a Journal that keeps the snapshot of each change.
type lastSnapshot struct {
	mu   sync.Mutex
	snap *statev1.HandlerState
	idle chan struct{}
}

func (j *lastSnapshot) Append(c *engine.Change) {
	j.mu.Lock()
	j.snap = c.Snapshot()
	j.mu.Unlock()
	for _, r := range c.Records {
		if r.Kind == engine.RecordIdle && r.Idle != nil {
			j.idle <- struct{}{}
		}
	}
	c.Done(nil)
}

// TestFinishedSnapshot: the checkpoint of a finished handler keeps what can
// still be asked of it (status, the idempotency keys of its events) and
// drops what only a running handler needs.
func TestFinishedSnapshot(t *testing.T) {
	j := &lastSnapshot{idle: make(chan struct{}, 1)}
	e := engine.New(engine.Options{Journal: j})
	engine.CompactAlways(e)
	if err := e.Register(workflows.Approval()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	input := &structpb.Struct{Fields: map[string]*structpb.Value{"amount": structpb.NewNumberValue(3)}}
	h, err := e.Start(ctx, "approval", input, engine.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-j.idle
	j.mu.Lock()
	if s := j.snap; s.GetStart() == nil || len(s.GetSteps()) != 1 {
		t.Fatalf("an idle handler's snapshot lacks its input or steps: %v", s)
	}
	j.mu.Unlock()
	answer := engine.Event{Type: workflows.ApprovalEvent, Data: &structpb.Struct{Fields: map[string]*structpb.Value{"approved": structpb.NewBoolValue(true)}}}
	if err := h.SendEvent(ctx, answer, engine.SendOptions{IdempotencyKey: "answer-1"}); err != nil {
		t.Fatal(err)
	}
	if info, err := h.Wait(ctx); err != nil || info.Status != engine.StatusCompleted {
		t.Fatalf("Wait: %v %v", info.Status, err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.snap
	if s.GetStatus() != statev1.HandlerStatus_HANDLER_STATUS_COMPLETED || s.GetHandlerId() != h.ID() || s.GetCompletedAt() == nil {
		t.Errorf("finished snapshot: status %v, id %q, completed at %v", s.GetStatus(), s.GetHandlerId(), s.GetCompletedAt())
	}
	if !slices.Equal(s.GetEventKeys(), []string{"answer-1"}) {
		t.Errorf("finished snapshot's event keys %q, want [answer-1]", s.GetEventKeys())
	}
	if s.GetStart() != nil || len(s.GetSteps()) != 0 || s.GetResult() != nil {
		t.Errorf("finished snapshot keeps its input, steps or result: %v", s)
	}
}
