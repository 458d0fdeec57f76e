package server_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"

	"github.com/wfd-dev/wfd/engine"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// instant ends on its start: a handler that holds its slot for one run.
func instant(name string, c *engine.Concurrency) engine.Workflow {
	return engine.Workflow{Name: name, Concurrency: c, Steps: []engine.Step{{
		Name: "end", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
		Run: func(_ context.Context, sc *engine.StepContext, ev engine.Event) error {
			return sc.Send(engine.StopEvent, ev.Data)
		},
	}}}
}

// BenchmarkConcurrencyStart is one start of a handler that ends at once,
// over the API from 16 concurrent clients (the store without fsync):
// "unlimited" declares no limit, "roomy" a key with room for every start
// (the enqueue's commit and the release are the whole cost), "one" a key
// of one handler at a time per client (each start but the first waits in
// line and is admitted when the one before ends: the admission chain).
// Compare ns/op within one run.
func BenchmarkConcurrencyStart(b *testing.B) {
	for _, tc := range []struct {
		name string
		c    *engine.Concurrency
	}{
		{"unlimited", nil},
		{"roomy", &engine.Concurrency{Key: "customer", Max: 100000}},
		{"one", &engine.Concurrency{Key: "customer", Max: 1}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ts := startServer(b, serverConfig{workflows: []engine.Workflow{instant("instant", tc.c)}})
			api := ts.client(connect.WithGRPC())
			ctx := context.Background()
			b.SetParallelism(16)
			b.ReportAllocs()
			b.ResetTimer()
			var (
				mu     sync.Mutex
				last   []string
				client atomic.Int64
			)
			b.RunParallel(func(pb *testing.PB) {
				in := st(b, map[string]any{"customer": fmt.Sprint("c", client.Add(1))})
				var id string
				for pb.Next() {
					res, err := api.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "instant", Input: in})
					if err != nil {
						b.Error(err)
						return
					}
					id = res.GetHandler().GetHandlerId()
				}
				mu.Lock()
				last = append(last, id)
				mu.Unlock()
			})
			// The queued ones run after their start answers: the time
			// counts until the last of each client's ends.
			for _, id := range last {
				if id == "" {
					continue
				}
				testwait.For(b, id+" ended", func() bool {
					res, err := api.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id})
					return err == nil && res.GetHandler().GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED
				})
			}
		})
	}
}
