package engine_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/workflows"
)

// idleCounter is a Journal that counts handlers that became idle.
type idleCounter struct{ idle chan struct{} }

func (j *idleCounter) Append(c *engine.Change) {
	for _, r := range c.Records {
		if r.Kind == engine.RecordIdle && r.Idle != nil {
			j.idle <- struct{}{}
		}
	}
	c.Done(nil)
}

// BenchmarkIdleFootprint reports the memory an idle approval handler keeps
// while it stays in memory (heap and goroutine stacks after a GC).
func BenchmarkIdleFootprint(b *testing.B) {
	const n = 10000
	for range b.N {
		j := &idleCounter{idle: make(chan struct{}, n)}
		e := engine.New(engine.Options{Journal: j})
		engine.CompactAlways(e)
		if err := e.Register(workflows.Approval()); err != nil {
			b.Fatal(err)
		}
		before := memInUse()
		ctx := context.Background()
		for range n {
			if _, err := e.Start(ctx, "approval", nil, engine.StartOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		for range n {
			<-j.idle
		}
		after := memInUse()
		b.ReportMetric(float64(after-before)/n, "bytes/idle-handler")
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_ = e.Close(ctx)
		cancel()
	}
}

func memInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}
