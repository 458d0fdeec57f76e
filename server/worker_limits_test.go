package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
)

// runGate is a step body shared by several workers: it counts the runs in
// progress across all of them (and the most seen at once), records which
// worker took each run, and holds each run until the test releases one.
type runGate struct {
	mu      sync.Mutex
	cur     int
	max     int
	byName  map[string]int
	release chan struct{}
}

func newRunGate() *runGate {
	return &runGate{byName: map[string]int{}, release: make(chan struct{})}
}

// step is the step function of the worker called name.
func (g *runGate) step(name string) worker.StepFunc {
	return func(ctx context.Context, sc worker.Context, in engine.Event) error {
		g.mu.Lock()
		g.cur++
		g.max = max(g.max, g.cur)
		g.byName[name]++
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			g.cur--
			g.mu.Unlock()
		}()
		select {
		case <-g.release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return sc.Send("done", in.Data)
	}
}

func (g *runGate) running() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cur
}

// fanDef is a fan-out of width n through a step limited to limit runs
// at once: fan sends n items, work handles each (its code is the test's),
// gather collects the n results and completes.
func fanDef(name string, limit int) engine.Workflow {
	return engine.Workflow{Name: name, Steps: []engine.Step{
		{Name: "fan", Accepts: []string{engine.StartEvent}, Emits: []string{"item"}},
		{Name: "work", Accepts: []string{"item"}, Emits: []string{"done"}, Workers: limit},
		{Name: "gather", Accepts: []string{"done"}, Emits: []string{engine.StopEvent}},
	}}
}

func fanSteps(n int, work worker.StepFunc) map[string]worker.StepFunc {
	return map[string]worker.StepFunc{
		"fan": func(_ context.Context, sc worker.Context, _ engine.Event) error {
			for i := range n {
				if err := sc.Send("item", &structpb.Struct{Fields: map[string]*structpb.Value{"i": structpb.NewNumberValue(float64(i))}}); err != nil {
					return err
				}
			}
			return nil
		},
		"work": work,
		"gather": func(_ context.Context, sc worker.Context, in engine.Event) error {
			types := make([]string, n)
			for i := range types {
				types[i] = "done"
			}
			got, err := sc.Collect(in, types...)
			if err != nil || got == nil {
				return err
			}
			return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"n": structpb.NewNumberValue(float64(len(got)))}})
		},
	}
}

// TestWorkerLimitAcrossWorkers: a step's worker limit (Step.Workers, which
// bounds one handler's runs of the step) holds across all the workers
// serving the workflow, and the limit is also reached, so a scheduler that
// serialised everything would fail the Workers: 2 case. Each worker takes
// one run at a time, so runs held at once are on different workers: a limit
// enforced per worker instead would show 2 runs at once with Workers: 1,
// and with Workers: 2 both workers must take runs. (Which worker takes a
// run otherwise depends on timing, so the test asserts nothing about it.)
func TestWorkerLimitAcrossWorkers(t *testing.T) {
	const n = 20
	for _, limit := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", limit), func(t *testing.T) {
			ts := startServer(t, serverConfig{})
			c := ts.client()
			name := fmt.Sprintf("limited-remote-%d", limit)
			def := fanDef(name, limit)
			g := newRunGate()
			for _, w := range []string{"a", "b"} {
				startWorkerN(t, ts, w, 1, worker.Workflow{Definition: def, Run: fanSteps(n, g.step(w))})
			}
			workersServing(t, ts, name, 2)

			res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: name, Input: st(t, map[string]any{})})
			if err != nil {
				t.Fatal(err)
			}
			id := res.GetHandler().GetHandlerId()
			// Release the runs one at a time, each once the limit is
			// reached (or, at the end, once every remaining run is in).
			for left := n; left > 0; left-- {
				want := min(limit, left)
				testwait.For(t, fmt.Sprintf("%d runs in progress", want), func() bool { return g.running() >= want })
				g.release <- struct{}{}
			}
			var fin *wfdv1.HandlerFinished
			for _, r := range collect(t, c, id, 0) {
				if f := r.GetHandlerFinished(); f != nil {
					fin = f
				}
			}
			if fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || fin.GetResult().GetFields()["n"].GetNumberValue() != n {
				t.Fatalf("handler finished %v, want completed with n: %d", fin, n)
			}
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.max != limit {
				t.Fatalf("at most %d runs at once across the workers, want exactly the limit %d", g.max, limit)
			}
			if g.byName["a"]+g.byName["b"] != n || (limit == 2 && (g.byName["a"] == 0 || g.byName["b"] == 0)) {
				t.Fatalf("runs by worker %v: want %d in all (and with Workers: 2, on both workers)", g.byName, n)
			}
		})
	}
}
