package engine_test

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/engine"
)

// chain is a 3-step workflow of trivial steps: a → b → c → stop.
func chain() engine.Workflow {
	pass := func(emit string) engine.StepFunc {
		return func(_ context.Context, sc *engine.StepContext, in engine.Event) error { return sc.Send(emit, in.Data) }
	}
	return engine.Workflow{Name: "chain", Steps: []engine.Step{
		step("a", engine.StartEvent, []string{"ab"}, pass("ab")),
		step("b", "ab", []string{"bc"}, pass("bc")),
		step("c", "bc", []string{engine.StopEvent}, pass(engine.StopEvent)),
	}}
}

// cycle runs a → b → c → a until the event ids pass limit, so one handler
// makes many step transitions and the benchmark sees their steady cost.
func cycle(limit int) engine.Workflow {
	pass := func(emit string) engine.StepFunc {
		return func(_ context.Context, sc *engine.StepContext, in engine.Event) error { return sc.Send(emit, nil) }
	}
	return engine.Workflow{Name: "cycle", Steps: []engine.Step{
		{Name: "a", Accepts: []string{engine.StartEvent, "ca"}, Emits: []string{"ab"}, Run: pass("ab")},
		step("b", "ab", []string{"bc"}, pass("bc")),
		step("c", "bc", []string{"ca", engine.StopEvent}, func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			if n, _ := strconv.Atoi(in.ID); n >= limit {
				return sc.Send(engine.StopEvent, nil)
			}
			return sc.Send("ca", nil)
		}),
	}}
}

// BenchmarkStepTransitions: many long-lived handlers cycle through three
// trivial steps in memory. One op is one step execution.
func BenchmarkStepTransitions(b *testing.B) {
	handlers := 4 * runtime.GOMAXPROCS(0)
	per := max(b.N/handlers, 3)
	e := engine.New(engine.Options{})
	engine.CompactAlways(e)
	if err := e.Register(cycle(per)); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range handlers {
		wg.Go(func() {
			h, err := e.Start(ctx, "cycle", nil, engine.StartOptions{})
			if err != nil {
				b.Error(err)
				return
			}
			if info, _ := h.Wait(ctx); info.Status != engine.StatusCompleted {
				b.Errorf("status %v: %s", info.Status, info.Error)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	steps := float64(handlers * per)
	b.ReportMetric(steps/time.Since(start).Seconds(), "steps/s")
}

// BenchmarkHandlers: start-to-completion of the 3-step chain, 64 handlers in
// flight. One op is one handler (three step executions).
func BenchmarkHandlers(b *testing.B) {
	e := engine.New(engine.Options{})
	engine.CompactAlways(e)
	if err := e.Register(chain()); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(32)
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h, err := e.Start(ctx, "chain", nil, engine.StartOptions{})
			if err != nil {
				b.Error(err)
				return
			}
			if info, _ := h.Wait(ctx); info.Status != engine.StatusCompleted {
				b.Errorf("status %v", info.Status)
			}
		}
	})
	b.ReportMetric(float64(3*b.N)/time.Since(start).Seconds(), "steps/s")
}
