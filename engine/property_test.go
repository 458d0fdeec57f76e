package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"

	"github.com/wfd-dev/wfd/engine"
)

// genStep is what one generated step does.
type genStep struct {
	write  bool // write a progress event to the stream
	wait   bool // wait for "x<i>" matching {"k": i}
	once   bool // record a side effect once
	fanout int  // events sent to the next step (collected there when > 1)
	decoy  bool // send a non-matching event before the matching one
}

type genWorkflow struct {
	steps []genStep
	// onceCalls counts side effects, to check that Once held across restores.
	onceCalls atomic.Int32
}

func generate(r *rand.Rand) *genWorkflow {
	g := &genWorkflow{steps: make([]genStep, 1+r.IntN(4))}
	for i := range g.steps {
		g.steps[i] = genStep{write: r.IntN(2) == 0, wait: r.IntN(2) == 0, once: r.IntN(3) == 0, fanout: 1 + r.IntN(3), decoy: r.IntN(2) == 0}
	}
	g.steps[len(g.steps)-1].fanout = 1
	return g
}

func num(v float64) *structpb.Value { return structpb.NewNumberValue(v) }

func (g *genWorkflow) workflow() engine.Workflow {
	w := engine.Workflow{Name: "gen"}
	for i, gs := range g.steps {
		accepts, emits := fmt.Sprintf("e%d", i), fmt.Sprintf("e%d", i+1)
		if i == 0 {
			accepts = engine.StartEvent
		}
		if i == len(g.steps)-1 {
			emits = engine.StopEvent
		}
		fanin := 1
		if i > 0 {
			fanin = g.steps[i-1].fanout
		}
		w.Steps = append(w.Steps, engine.Step{
			Name: fmt.Sprintf("s%d", i), Accepts: []string{accepts}, Emits: []string{emits},
			Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
				v := in.Data.GetFields()["v"].GetNumberValue()
				if fanin > 1 {
					types := make([]string, fanin)
					for k := range types {
						types[k] = accepts
					}
					got, err := sc.Collect(in, types...)
					if err != nil || got == nil {
						return err
					}
					v = 0
					for _, ev := range got {
						v += ev.Data.GetFields()["v"].GetNumberValue()
					}
				}
				if gs.once {
					memo, err := sc.Once("effect", func() (*structpb.Value, error) {
						g.onceCalls.Add(1)
						return num(float64(100 * (i + 1))), nil
					})
					if err != nil {
						return err
					}
					v += memo.GetNumberValue()
				}
				if gs.wait {
					match := &structpb.Struct{Fields: map[string]*structpb.Value{"k": num(float64(i))}}
					ev, err := sc.WaitFor(fmt.Sprintf("x%d", i), engine.WaitOptions{Match: match})
					if err != nil {
						return err
					}
					v += ev.Data.GetFields()["add"].GetNumberValue()
				}
				if gs.write {
					sc.Write("progress", &structpb.Struct{Fields: map[string]*structpb.Value{"step": num(float64(i)), "v": num(v)}})
				}
				for k := range gs.fanout {
					data := &structpb.Struct{Fields: map[string]*structpb.Value{"v": num(v + float64(k))}}
					if err := sc.Send(emits, data); err != nil {
						return err
					}
				}
				return nil
			},
		})
	}
	return w
}

// drive runs one handler to its end, answering every wait; with restore set
// it releases the handler at every idle point and restores it into a fresh
// engine. It returns the normalised stream and the final info.
func (g *genWorkflow) drive(t *testing.T, restore bool) ([]string, engine.Info) {
	t.Helper()
	e, rec := newEngine(t, g.workflow())
	h, err := e.Start(context.Background(), "gen", &structpb.Struct{Fields: map[string]*structpb.Value{"v": num(1)}}, engine.StartOptions{HandlerID: "h"})
	if err != nil {
		t.Fatal(err)
	}
	var stream []string
	seen := 0 // records of the current engine already taken
	for idles := 1; ; idles++ {
		rec.await(t, "h", 1, func(r engine.Record) bool {
			return r.Kind == engine.RecordTerminal || (isIdle(r) && r.Seq > uint64(len(stream)))
		})
		all := rec.of("h")
		for _, r := range all[seen:] {
			stream = append(stream, describe(r))
		}
		seen = len(all)
		last := all[len(all)-1]
		if last.Kind == engine.RecordTerminal {
			info := wait(t, h)
			return stream, info
		}
		if !isIdle(last) {
			t.Fatalf("stream stopped at %s", describe(last))
		}
		if restore {
			snap, err := h.Release(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			<-h.Done()
			for _, r := range rec.of("h")[seen:] {
				stream = append(stream, describe(r))
			}
			raw, _ := proto.Marshal(snap)
			snap = new(statev1.HandlerState)
			if err := proto.Unmarshal(raw, snap); err != nil {
				t.Fatal(err)
			}
			e, rec = newEngine(t, g.workflow())
			seen = 0
			if h, _, err = e.Restore(context.Background(), snap, engine.RestoreOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, w := range last.Idle.Waiters {
			var i int
			if _, err := fmt.Sscanf(w.EventType, "x%d", &i); err != nil {
				t.Fatalf("waiter %q: %v", w.EventType, err)
			}
			if g.steps[i].decoy {
				send(t, h, w.EventType, map[string]any{"k": -1.0, "add": 1000.0})
			}
			send(t, h, w.EventType, map[string]any{"k": float64(i), "add": float64(7 * (i + 1))})
		}
	}
}

func TestPropertySnapshotAtEveryIdlePoint(t *testing.T) {
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			g := generate(rand.New(rand.NewPCG(seed, 42)))
			want, wantInfo := g.drive(t, false)
			wantOnce := g.onceCalls.Swap(0)
			got, gotInfo := g.drive(t, true)
			got = withoutLifecycle(t, got)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("stream with restores:\n%s\nwithout:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if gotInfo.Status != engine.StatusCompleted || !proto.Equal(gotInfo.Result, wantInfo.Result) {
				t.Fatalf("result with restores %v %v (%s), without %v %v", gotInfo.Status, gotInfo.Result, gotInfo.Error, wantInfo.Status, wantInfo.Result)
			}
			if n := g.onceCalls.Load(); n != wantOnce {
				t.Fatalf("side effects with restores %d, without %d", n, wantOnce)
			}
		})
	}
}

// withoutLifecycle drops the released and restored records, which only the
// run with restores has, and renumbers the rest; it checks that each
// release is followed by a restore.
func withoutLifecycle(t *testing.T, stream []string) []string {
	t.Helper()
	var out []string
	pending := false
	for _, line := range stream {
		_, rest, _ := strings.Cut(line, " ")
		switch rest {
		case "released":
			pending = true
			continue
		case "restored":
			if !pending {
				t.Fatalf("restored without a release in\n%s", strings.Join(stream, "\n"))
			}
			pending = false
			continue
		}
		out = append(out, fmt.Sprintf("%d %s", len(out)+1, rest))
	}
	return out
}
