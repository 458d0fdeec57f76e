package engine_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/workflows"
	"google.golang.org/protobuf/types/known/structpb"
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
// while it stays in memory (heap and goroutine stacks after a GC), and the
// heap objects it keeps: each is marked by every garbage collection while
// the handler stays in memory. With an input, its data is kept encoded
// (freeze.go).
func BenchmarkIdleFootprint(b *testing.B) {
	for _, bc := range []struct {
		name  string
		input *structpb.Struct
	}{
		{"no input", nil},
		{"one field", &structpb.Struct{Fields: map[string]*structpb.Value{"bench": structpb.NewStringValue("park")}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const n = 10000
			for range b.N {
				j := &idleCounter{idle: make(chan struct{}, n)}
				e := engine.New(engine.Options{Journal: j})
				engine.CompactAlways(e)
				if err := e.Register(workflows.Approval()); err != nil {
					b.Fatal(err)
				}
				before, beforeObjects := memInUse()
				ctx := context.Background()
				for range n {
					if _, err := e.Start(ctx, "approval", bc.input, engine.StartOptions{}); err != nil {
						b.Fatal(err)
					}
				}
				for range n {
					<-j.idle
				}
				after, afterObjects := memInUse()
				b.ReportMetric(float64(after-before)/n, "bytes/idle-handler")
				b.ReportMetric(float64(afterObjects-beforeObjects)/n, "objects/idle-handler")
				ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				_ = e.Close(ctx)
				cancel()
			}
		})
	}
}

// memInUse is the heap and stack bytes in use, and the heap objects, after
// a collection.
func memInUse() (bytes, objects uint64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse, m.HeapObjects
}
