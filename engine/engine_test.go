package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/workflows"
)

func TestEcho(t *testing.T) {
	e, rec := newEngine(t, workflows.Echo())
	h := start(t, e, "echo", map[string]any{"hello": "world"})
	info := wait(t, h)
	if info.Status != engine.StatusCompleted {
		t.Fatalf("status %v (%s)", info.Status, info.Error)
	}
	if !proto.Equal(info.Result, mustStruct(t, map[string]any{"hello": "world"})) {
		t.Fatalf("result %v", info.Result)
	}
	want := []string{
		`1 step echo w0 running=true in=start emitted=[] attempt=1 waiting=false err=""`,
		`2 step echo w0 running=false in=start emitted=[stop] attempt=1 waiting=false err=""`,
		`3 completed result=map[hello:world] error=""`,
	}
	assertStream(t, rec.of(h.ID()), want)
	if ch := rec.changesOf(h.ID()); !ch[0].Created || ch[len(ch)-1].Status != engine.StatusCompleted {
		t.Fatalf("changes: first Created=%v last status %v", ch[0].Created, ch[len(ch)-1].Status)
	}
	if err := h.SendEvent(context.Background(), engine.Event{Type: "x"}, engine.SendOptions{}); !errors.Is(err, engine.ErrHandlerDone) {
		t.Fatalf("SendEvent after completion = %v, want ErrHandlerDone", err)
	}
	if err := h.Cancel(context.Background()); !errors.Is(err, engine.ErrHandlerDone) {
		t.Fatalf("Cancel after completion = %v, want ErrHandlerDone", err)
	}
	if _, ok := e.Handler(h.ID()); ok {
		t.Fatal("finished handler still live")
	}
}

func assertStream(t *testing.T, recs []engine.Record, want []string) {
	t.Helper()
	var got []string
	for _, r := range recs {
		got = append(got, describe(r))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stream:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestApprovalWaitsInside(t *testing.T) {
	// Without its declared event schema, which refuses a malformed answer
	// at SendEvent (TestEventSchema), so that the step's own check runs.
	wf := workflows.Approval()
	wf.Events = nil
	e, rec := newEngine(t, wf)
	h := start(t, e, "approval", map[string]any{"amount": 42.0})
	idle := rec.awaitIdle(t, h.ID(), 1)
	if len(idle.Waiters) != 1 || idle.Waiters[0].EventType != "approval" || idle.Waiters[0].Step != "decide" {
		t.Fatalf("idle waiters %+v", idle.Waiters)
	}
	info, err := h.Info(context.Background())
	if err != nil || info.Idle == nil || info.Status != engine.StatusRunning {
		t.Fatalf("Info = %+v, %v; want running and idle", info, err)
	}

	// An event of a type nobody waits for and the workflow does not accept.
	err = h.SendEvent(context.Background(), engine.Event{Type: "nonsense"}, engine.SendOptions{})
	if !errors.Is(err, engine.ErrInvalidEvent) || !strings.Contains(err.Error(), `does not accept "nonsense"`) {
		t.Fatalf("SendEvent(nonsense) = %v", err)
	}
	for _, typ := range []string{"", engine.StartEvent, engine.StopEvent} {
		if err := h.SendEvent(context.Background(), engine.Event{Type: typ}, engine.SendOptions{}); !errors.Is(err, engine.ErrInvalidEvent) {
			t.Fatalf("SendEvent(%q) = %v, want ErrInvalidEvent", typ, err)
		}
	}

	// A malformed answer is reported on the stream and the step waits again.
	send(t, h, "approval", map[string]any{"approved": "yes"})
	rec.await(t, h.ID(), 1, func(r engine.Record) bool { return r.Kind == engine.RecordEvent && r.Event.Type == "invalid_answer" })
	rec.awaitIdle(t, h.ID(), 2)

	send(t, h, "approval", map[string]any{"approved": true, "comment": "ok"})
	info = wait(t, h)
	if info.Status != engine.StatusCompleted || !info.Result.Fields["approved"].GetBoolValue() || info.Result.Fields["comment"].GetStringValue() != "ok" {
		t.Fatalf("final %+v", info)
	}
	var written []string
	for _, r := range rec.of(h.ID()) {
		if r.Kind == engine.RecordEvent {
			written = append(written, r.Event.Type)
		}
	}
	if fmt.Sprint(written) != "[question invalid_answer]" {
		t.Fatalf("written %v, want one event per park", written)
	}
}

// TestAskThenAnswer is the other human-in-the-loop pattern: one step writes a
// question and ends; another accepts the answer from outside.
func TestAskThenAnswer(t *testing.T) {
	w := engine.Workflow{
		Name:     "ask",
		External: []string{"answer"},
		Steps: []engine.Step{
			step("ask", engine.StartEvent, nil, func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
				sc.Write("question", in.Data)
				return nil
			}),
			step("answer", "answer", []string{engine.StopEvent}, func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
				return sc.Send(engine.StopEvent, in.Data)
			}),
		},
	}
	e, rec := newEngine(t, w)
	h := start(t, e, "ask", map[string]any{"q": "name?"})
	idle := rec.awaitIdle(t, h.ID(), 1)
	if len(idle.Waiters) != 0 || len(idle.External) != 1 || idle.External[0] != "answer" {
		t.Fatalf("idle %+v, want no waiters and external [answer]", idle)
	}
	send(t, h, "answer", map[string]any{"name": "Ada"})
	if info := wait(t, h); info.Status != engine.StatusCompleted || info.Result.Fields["name"].GetStringValue() != "Ada" {
		t.Fatalf("final %+v", info)
	}
	want := []string{
		`1 step ask w0 running=true in=start emitted=[] attempt=1 waiting=false err=""`,
		`2 event 2 question map[q:name?]`,
		`3 step ask w0 running=false in=start emitted=[] attempt=1 waiting=false err=""`,
		`4 idle external=[answer]`,
		`5 busy`,
		`6 step answer w0 running=true in=answer emitted=[] attempt=1 waiting=false err=""`,
		`7 step answer w0 running=false in=answer emitted=[stop] attempt=1 waiting=false err=""`,
		`8 completed result=map[name:Ada] error=""`,
	}
	assertStream(t, rec.of(h.ID()), want)
}

func TestFanIn(t *testing.T) {
	e, rec := newEngine(t, workflows.FanIn())
	h := start(t, e, "fanin", nil)
	info := wait(t, h)
	if info.Status != engine.StatusCompleted {
		t.Fatalf("status %v: %s", info.Status, info.Error)
	}
	got := info.Result.Fields["results"].GetListValue().AsSlice()
	if fmt.Sprint(got) != "[0 1 4]" {
		t.Fatalf("results %v", got)
	}
	workers := map[int]bool{}
	for _, r := range rec.of(h.ID()) {
		if r.Kind == engine.RecordStepState && r.Step.Step == "square" {
			workers[r.Step.Worker] = true
		}
		if r.Kind == engine.RecordIdle {
			t.Fatalf("fanin never waits, but the stream has %s", describe(r))
		}
	}
	if len(workers) == 0 {
		t.Fatal("no square runs recorded")
	}
}

func TestWorkerLimit(t *testing.T) {
	var running, peak atomic.Int32
	release, entered := make(chan struct{}), make(chan struct{}, 6)
	w := engine.Workflow{Name: "limit", Steps: []engine.Step{
		step("split", engine.StartEvent, []string{"job"}, func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			for range 6 {
				if err := sc.Send("job", nil); err != nil {
					return err
				}
			}
			return nil
		}),
		{Name: "work", Accepts: []string{"job"}, Emits: []string{"did"}, Workers: 2, Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			n := running.Add(1)
			entered <- struct{}{}
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			<-release
			running.Add(-1)
			return sc.Send("did", nil)
		}},
		step("join", "did", []string{engine.StopEvent}, func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			got, err := sc.Collect(in, "did", "did", "did", "did", "did", "did")
			if err != nil || got == nil {
				return err
			}
			return sc.Send(engine.StopEvent, nil)
		}),
	}}
	e, _ := newEngine(t, w)
	h := start(t, e, "limit", nil)
	<-entered
	<-entered
	select {
	case <-entered:
		t.Fatal("a third run started while two were running")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	if info := wait(t, h); info.Status != engine.StatusCompleted {
		t.Fatalf("status %v: %s", info.Status, info.Error)
	}
	if p := peak.Load(); p != 2 {
		t.Fatalf("peak concurrency %d, want 2", p)
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name        string
		failures    int32
		maxAttempts int
		wantStatus  engine.Status
		wantErr     string
	}{
		{"succeeds on third attempt", 2, 3, engine.StatusCompleted, ""},
		{"exhausted", 5, 3, engine.StatusFailed, `step "flaky" failed after 3 attempt(s): boom 3`},
		{"no retry by default", 1, 0, engine.StatusFailed, `step "flaky" failed after 1 attempt(s): boom 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			backoff := 20 * time.Millisecond
			w := engine.Workflow{Name: "retry", Steps: []engine.Step{{
				Name: "flaky", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
				Retry: engine.RetryPolicy{MaxAttempts: tt.maxAttempts, InitialBackoff: backoff, Multiplier: 2},
				Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
					n := calls.Add(1)
					if int(n) != sc.Attempt() {
						return fmt.Errorf("attempt %d on call %d", sc.Attempt(), n)
					}
					if n <= tt.failures {
						return fmt.Errorf("boom %d", n)
					}
					return sc.Send(engine.StopEvent, nil)
				},
			}}}
			e, rec := newEngine(t, w)
			h := start(t, e, "retry", nil)
			info := wait(t, h)
			if info.Status != tt.wantStatus || info.Error != tt.wantErr {
				t.Fatalf("got %v %q, want %v %q", info.Status, info.Error, tt.wantStatus, tt.wantErr)
			}
			// Each retry starts no earlier than its backoff after the failure.
			var failedAt time.Time
			attempts := 0
			for _, r := range rec.of(h.ID()) {
				if r.Kind != engine.RecordStepState {
					continue
				}
				if r.Step.Running {
					attempts++
					if r.Step.Attempt != attempts {
						t.Fatalf("run %d has attempt %d", attempts, r.Step.Attempt)
					}
					if attempts > 1 {
						want := (engine.RetryPolicy{InitialBackoff: backoff, Multiplier: 2}).Backoff(attempts)
						if gap := r.Time.Sub(failedAt); gap < want {
							t.Fatalf("attempt %d started %v after the failure, backoff is %v", attempts, gap, want)
						}
					}
				} else if r.Step.Error != "" {
					failedAt = r.Time
				}
			}
		})
	}
}

func TestStepTimeout(t *testing.T) {
	for _, honours := range []bool{true, false} {
		t.Run(fmt.Sprintf("honours ctx %v", honours), func(t *testing.T) {
			stuck := make(chan struct{})
			t.Cleanup(func() { close(stuck) })
			w := engine.Workflow{Name: "slow", Steps: []engine.Step{{
				Name: "slow", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
				Timeout: 30 * time.Millisecond, Retry: engine.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond},
				Run: func(ctx context.Context, _ *engine.StepContext, _ engine.Event) error {
					if honours {
						<-ctx.Done()
						return ctx.Err()
					}
					<-stuck
					return nil
				},
			}}}
			e, rec := newEngine(t, w)
			h := start(t, e, "slow", nil)
			info := wait(t, h)
			if info.Status != engine.StatusFailed || !strings.Contains(info.Error, "failed after 2 attempt(s)") {
				t.Fatalf("got %v %q", info.Status, info.Error)
			}
			if !honours && !strings.Contains(info.Error, "step timed out after 30ms") {
				t.Fatalf("error %q does not name the timeout", info.Error)
			}
			if n := len(rec.await(t, h.ID(), 2, func(r engine.Record) bool { return r.Kind == engine.RecordStepState && r.Step.Error != "" })); n != 2 {
				t.Fatalf("%d failed runs", n)
			}
		})
	}
}

func TestStepPanicFailsTheRun(t *testing.T) {
	w := engine.Workflow{Name: "p", Steps: []engine.Step{step("p", engine.StartEvent, []string{engine.StopEvent},
		func(context.Context, *engine.StepContext, engine.Event) error { panic("kaboom") })}}
	e, _ := newEngine(t, w)
	info := wait(t, start(t, e, "p", nil))
	if info.Status != engine.StatusFailed || !strings.Contains(info.Error, `step "p" panicked: kaboom`) {
		t.Fatalf("got %v %q", info.Status, info.Error)
	}
}

func TestUndeclaredSendFails(t *testing.T) {
	w := engine.Workflow{Name: "u", Steps: []engine.Step{step("u", engine.StartEvent, []string{engine.StopEvent},
		func(_ context.Context, sc *engine.StepContext, _ engine.Event) error { return sc.Send("other", nil) })}}
	e, _ := newEngine(t, w)
	info := wait(t, start(t, e, "u", nil))
	if info.Status != engine.StatusFailed || !strings.Contains(info.Error, `sends "other"`) {
		t.Fatalf("got %v %q", info.Status, info.Error)
	}
}

func TestStalled(t *testing.T) {
	w := engine.Workflow{Name: "s", Steps: []engine.Step{
		step("a", engine.StartEvent, []string{"x"}, nop),
		step("b", "x", []string{engine.StopEvent}, nop),
	}}
	e, rec := newEngine(t, w)
	h := start(t, e, "s", nil)
	info := wait(t, h)
	if info.Status != engine.StatusFailed || !strings.Contains(info.Error, "stalled") {
		t.Fatalf("got %v %q", info.Status, info.Error)
	}
	for _, r := range rec.of(h.ID()) {
		if r.Kind == engine.RecordIdle {
			t.Fatalf("a stalled handler is never idle; stream has %s", describe(r))
		}
	}
}

func TestCancel(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		e, rec := newEngine(t, workflows.Approval())
		h := start(t, e, "approval", nil)
		rec.awaitIdle(t, h.ID(), 1)
		if err := h.Cancel(context.Background()); err != nil {
			t.Fatal(err)
		}
		if info := wait(t, h); info.Status != engine.StatusCancelled || info.Idle != nil {
			t.Fatalf("got %+v", info)
		}
		if err := h.SendEvent(context.Background(), engine.Event{Type: "approval"}, engine.SendOptions{}); !errors.Is(err, engine.ErrHandlerDone) {
			t.Fatalf("SendEvent after cancel = %v", err)
		}
	})
	t.Run("running step sees its context cancelled", func(t *testing.T) {
		cancelled := make(chan struct{})
		w := engine.Workflow{Name: "c", Steps: []engine.Step{step("c", engine.StartEvent, []string{engine.StopEvent},
			func(ctx context.Context, sc *engine.StepContext, _ engine.Event) error {
				<-ctx.Done()
				close(cancelled)
				return sc.Send(engine.StopEvent, nil) // dropped: the handler is over
			})}}
		e, rec := newEngine(t, w)
		h := start(t, e, "c", nil)
		rec.await(t, h.ID(), 1, func(r engine.Record) bool { return r.Kind == engine.RecordStepState && r.Step.Running })
		if err := h.Cancel(context.Background()); err != nil {
			t.Fatal(err)
		}
		<-cancelled
		if info := wait(t, h); info.Status != engine.StatusCancelled {
			t.Fatalf("got %v", info.Status)
		}
	})
}

func TestWaitMatchDeadlineAndSleep(t *testing.T) {
	w := engine.Workflow{Name: "w", Steps: []engine.Step{step("w", engine.StartEvent, []string{engine.StopEvent},
		func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			if err := sc.Sleep(10 * time.Millisecond); err != nil {
				return err
			}
			match := &structpb.Struct{Fields: map[string]*structpb.Value{"order": in.Data.Fields["order"]}}
			ev, err := sc.WaitFor("paid", engine.WaitOptions{Match: match, Timeout: time.Duration(in.Data.Fields["ms"].GetNumberValue()) * time.Millisecond})
			if errors.Is(err, engine.ErrTimeout) {
				return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"timedOut": structpb.NewBoolValue(true)}})
			}
			if err != nil {
				return err
			}
			return sc.Send(engine.StopEvent, ev.Data)
		})}}

	t.Run("matching event", func(t *testing.T) {
		e, rec := newEngine(t, w)
		h := start(t, e, "w", map[string]any{"order": "A", "ms": 0.0})
		first := rec.awaitIdle(t, h.ID(), 1)
		if len(first.Waiters) != 1 || first.Waiters[0].EventType != "" || first.Waiters[0].Deadline.IsZero() {
			t.Fatalf("sleep waiter %+v", first.Waiters)
		}
		idle := rec.awaitIdle(t, h.ID(), 2)
		if got := idle.Waiters[0]; got.EventType != "paid" || got.Match.Fields["order"].GetStringValue() != "A" || !got.Deadline.IsZero() {
			t.Fatalf("waiter %+v", got)
		}
		send(t, h, "paid", map[string]any{"order": "B"}) // does not match: stays idle
		send(t, h, "paid", map[string]any{"order": "A", "amount": 3.0})
		info := wait(t, h)
		if info.Status != engine.StatusCompleted || info.Result.Fields["amount"].GetNumberValue() != 3 {
			t.Fatalf("got %+v", info)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		e, _ := newEngine(t, w)
		h := start(t, e, "w", map[string]any{"order": "A", "ms": 20.0})
		info := wait(t, h)
		if info.Status != engine.StatusCompleted || !info.Result.Fields["timedOut"].GetBoolValue() {
			t.Fatalf("got %+v", info)
		}
	})
}

func TestOnceAndStore(t *testing.T) {
	var sideEffects atomic.Int32
	w := engine.Workflow{Name: "o", Steps: []engine.Step{step("o", engine.StartEvent, []string{engine.StopEvent},
		func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			v, err := sc.Once("charge", func() (*structpb.Value, error) {
				return structpb.NewNumberValue(float64(sideEffects.Add(1))), nil
			})
			if err != nil {
				return err
			}
			if err := sc.Set("charged", v); err != nil {
				return err
			}
			if _, err := sc.WaitFor("go", engine.WaitOptions{}); err != nil {
				return err
			}
			got, ok := sc.Get("charged")
			if !ok {
				return errors.New("stored value lost")
			}
			return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"charged": got}})
		})}}
	e, rec := newEngine(t, w)
	h := start(t, e, "o", nil)
	rec.awaitIdle(t, h.ID(), 1)
	snap, err := h.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Store["charged"].GetNumberValue() != 1 {
		t.Fatalf("store in snapshot: %v", snap.Store)
	}
	send(t, h, "go", nil)
	info := wait(t, h)
	if info.Status != engine.StatusCompleted || info.Result.Fields["charged"].GetNumberValue() != 1 || sideEffects.Load() != 1 {
		t.Fatalf("got %+v, side effects %d", info, sideEffects.Load())
	}
	final, _ := h.Snapshot(context.Background())
	for k := range final.Store {
		if k != "charged" {
			t.Fatalf("memo key %q kept after the run finished", k)
		}
	}
}

func TestWorkflowTimeout(t *testing.T) {
	w := workflows.Approval()
	w.Timeout = 50 * time.Millisecond
	e, _ := newEngine(t, w)
	h := start(t, e, "approval", nil)
	info := wait(t, h)
	if info.Status != engine.StatusFailed || !strings.Contains(info.Error, "workflow timed out after 50ms") {
		t.Fatalf("got %v %q", info.Status, info.Error)
	}
}

func TestHandlerIDs(t *testing.T) {
	e, rec := newEngine(t, workflows.Approval())
	h, err := e.Start(context.Background(), "approval", nil, engine.StartOptions{HandlerID: "mine"})
	if err != nil || h.ID() != "mine" {
		t.Fatalf("Start = %v, %v", h, err)
	}
	if _, err := e.Start(context.Background(), "approval", nil, engine.StartOptions{HandlerID: "mine"}); !errors.Is(err, engine.ErrHandlerExists) {
		t.Fatalf("second Start = %v, want ErrHandlerExists", err)
	}
	a := start(t, e, "approval", nil)
	time.Sleep(2 * time.Millisecond)
	b := start(t, e, "approval", nil)
	if !(a.ID() < b.ID()) {
		t.Fatalf("generated ids do not sort by creation: %s then %s", a.ID(), b.ID())
	}
	rec.awaitIdle(t, "mine", 1)
}

func TestIdempotencyKey(t *testing.T) {
	w := engine.Workflow{Name: "count", External: []string{"inc"}, Steps: []engine.Step{
		step("init", engine.StartEvent, nil, nop),
		step("count", "inc", []string{engine.StopEvent}, func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			sc.Write("got", in.Data)
			return nil
		}),
	}}
	e, rec := newEngine(t, w)
	h := start(t, e, "count", nil)
	rec.awaitIdle(t, h.ID(), 1)
	ctx := context.Background()
	for _, key := range []string{"a", "b", "a", "a", "b", "c"} {
		if err := h.SendEvent(ctx, engine.Event{Type: "inc", Data: mustStruct(t, map[string]any{"k": key})}, engine.SendOptions{IdempotencyKey: key}); err != nil {
			t.Fatal(err)
		}
	}
	// Keys survive a restore.
	rec.await(t, h.ID(), 3, func(r engine.Record) bool { return r.Kind == engine.RecordEvent })
	snap, err := h.Release(ctx)
	for errors.Is(err, engine.ErrNotIdle) {
		time.Sleep(time.Millisecond)
		snap, err = h.Release(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	e2, rec2 := newEngine(t, w)
	h2, _, err := e2.Restore(ctx, snap, engine.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h2.SendEvent(ctx, engine.Event{Type: "inc", Data: mustStruct(t, map[string]any{"k": "b"})}, engine.SendOptions{IdempotencyKey: "b"}); err != nil {
		t.Fatal(err)
	}
	if err := h2.SendEvent(ctx, engine.Event{Type: "inc", Data: mustStruct(t, map[string]any{"k": "d"})}, engine.SendOptions{IdempotencyKey: "d"}); err != nil {
		t.Fatal(err)
	}
	rec2.await(t, h2.ID(), 1, func(r engine.Record) bool { return r.Kind == engine.RecordEvent })
	var keys []string
	for _, r := range append(rec.of(h.ID()), rec2.of(h2.ID())...) {
		if r.Kind == engine.RecordEvent {
			keys = append(keys, r.Event.Data.Fields["k"].GetStringValue())
		}
	}
	if fmt.Sprint(keys) != "[a b c d]" {
		t.Fatalf("delivered %v, want each key once", keys)
	}
}

func TestLingerGathersQuickSteps(t *testing.T) {
	hold := make(chan struct{})
	slow := engine.Workflow{Name: "slow", Steps: []engine.Step{step("s", engine.StartEvent, []string{engine.StopEvent},
		func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			<-hold
			return sc.Send(engine.StopEvent, nil)
		})}}
	lingering := func(linger time.Duration) (*engine.Engine, *recorder) {
		rec := newRecorder()
		e := engine.New(engine.Options{Journal: rec, Linger: linger})
		for _, w := range []engine.Workflow{workflows.Echo(), slow} {
			if err := e.Register(w); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { _ = e.Close(context.Background()) })
		return e, rec
	}

	// A quick step: creation, start, end and completion in one change. The
	// linger is far longer than a busy machine takes to run the step; it
	// ends as soon as no run is in progress.
	e, rec := lingering(testwait.Timeout)
	h := start(t, e, "echo", nil)
	wait(t, h)
	if ch := rec.changesOf(h.ID()); len(ch) != 1 || len(ch[0].Records) != 3 || !ch[0].Created {
		t.Fatalf("%d changes for a quick handler, want 1 with 3 records", len(ch))
	}
	// A slow step: the start is held back at most the linger, then
	// handed over (and Start acknowledged) while the step still runs.
	e, rec = lingering(50 * time.Millisecond)
	t.Cleanup(func() { close(hold) }) // before the engine closes: cleanups run last first
	began := time.Now()
	h = start(t, e, "slow", nil)
	if took := time.Since(began); took < 40*time.Millisecond {
		t.Fatalf("Start returned after %v, before the linger ended", took)
	}
	if ch := rec.changesOf(h.ID()); len(ch) != 1 || len(ch[0].Records) != 1 {
		t.Fatalf("changes of a running slow step: %d", len(ch))
	}
}
