package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/workflows"
)

// The property: a workflow whose steps are written once against
// worker.Context behaves the same in process (worker.InProcess) and served
// by a Go worker. Both copies run the same generated script (the handler's
// input) driven by the same events; their streams must be equal record for
// record once what must differ (ids, times) is normalised.

// propTimer is the timeout of timed-out waits and sleeps. It is long enough
// for a run to park before it passes on a quiet machine; on a crowded one
// a deadline can pass before the park is applied, which then fires at
// once, with no idle record in between: a difference of timing, not of
// behaviour, so normalise leaves out the idle periods that wait only for
// timers.
const propTimer = 300 * time.Millisecond

// propDef is the generated workflow: main runs the script in input.ops,
// sending notes to noter as it goes and, at its end, the items gather
// collects (fan-in) before it completes.
func propDef(name string) engine.Workflow {
	return engine.Workflow{Name: name,
		Events: []engine.EventType{{Type: "ev", Description: "answers a wait; its data matches {i}"}},
		Steps: []engine.Step{
			{Name: "main", Accepts: []string{engine.StartEvent}, Emits: []string{"note", "a", "b"},
				Retry: engine.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond}},
			{Name: "noter", Accepts: []string{"note"}},
			{Name: "gather", Accepts: []string{"a", "b"}, Emits: []string{engine.StopEvent}},
		}}
}

// propSteps is propDef's code, written once for both copies.
func propSteps() map[string]worker.StepFunc {
	return map[string]worker.StepFunc{"main": propMain, "noter": propNoter, "gather": propGather}
}

// propInProcess is propDef named name with its code run in process.
func propInProcess(name string) engine.Workflow {
	w := propDef(name)
	for i := range w.Steps {
		w.Steps[i].Run = worker.InProcess(propSteps()[w.Steps[i].Name])
	}
	return w
}

func sv(m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		panic(err)
	}
	return s
}

func propMain(_ context.Context, sc worker.Context, in engine.Event) error {
	f := in.Data.GetFields()
	for i, o := range f["ops"].GetListValue().GetValues() {
		k := fmt.Sprint(i)
		switch op := o.GetStringValue(); op {
		case "write":
			sc.Write("w", sv(map[string]any{"i": i}))
		case "setget":
			if err := sc.Set("k"+k, structpb.NewNumberValue(float64(i))); err != nil {
				return err
			}
			v, ok := sc.Get("k" + k)
			_, missing := sc.Get("unset" + k)
			sc.Write("got", sv(map[string]any{"i": i, "v": v.AsInterface(), "ok": ok, "unset": missing}))
		case "once":
			v, err := sc.Once("m"+k, func() (*structpb.Value, error) {
				return structpb.NewStringValue(fmt.Sprintf("memo %d at attempt %d", i, sc.Attempt())), nil
			})
			if err != nil {
				return err
			}
			sc.Write("once", sv(map[string]any{"i": i, "v": v.AsInterface()}))
		case "send":
			// Sent once (a re-run passes the memo), and always followed by
			// a wait for an outside event, so noter runs while the handler
			// waits for the test, never beside another run of main.
			if _, err := sc.Once("s"+k, func() (*structpb.Value, error) {
				return structpb.NewNullValue(), sc.Send("note", sv(map[string]any{"i": i}))
			}); err != nil {
				return err
			}
		case "wait":
			ev, err := sc.WaitFor("ev", engine.WaitOptions{Match: sv(map[string]any{"i": i}), Timeout: time.Hour})
			if err != nil {
				return err
			}
			sc.Write("got-ev", ev.Data)
		case "timeout":
			_, err := sc.WaitFor("never", engine.WaitOptions{Timeout: propTimer})
			if !errors.Is(err, engine.ErrTimeout) {
				return fmt.Errorf("waiting for never: %w", err)
			}
			sc.Write("timed-out", sv(map[string]any{"i": i}))
		case "sleep":
			if err := sc.Sleep(propTimer); err != nil {
				return err
			}
		case "child":
			id, err := sc.StartChild("prop-child", sv(map[string]any{"n": i}))
			if err != nil {
				return err
			}
			kids, err := sc.WaitForChildren([]string{id}, 0)
			if err != nil {
				return err
			}
			sc.Write("child", sv(map[string]any{"completed": len(kids.Completed), "result": kids.Results[id].Result.AsMap()}))
		case "task":
			ans, err := sc.AskHuman(engine.Task{Title: "task " + k, Assignee: "ann"})
			if err != nil {
				return err
			}
			sc.Write("answered", sv(map[string]any{"answer": ans.Data.AsMap(), "by": ans.CompletedBy, "at": !ans.CompletedAt.IsZero()}))
		case "key":
			pub, err := sc.WaitForKey("key"+k, engine.KeyOptions{})
			if err != nil {
				return err
			}
			sc.Write("published", sv(map[string]any{"id": pub.ID, "key": pub.Key, "data": pub.Data.AsMap(), "for": pub.HandlerID, "at": !pub.At.IsZero()}))
		case "fail":
			if sc.Attempt() == 1 {
				sc.Write("doomed", nil) // dropped with the failed run
				return fmt.Errorf("op %d fails attempt 1", i)
			}
		default:
			return fmt.Errorf("unknown op %q", op)
		}
	}
	for j, typ := range f["items"].GetListValue().GetValues() {
		if err := sc.Send(typ.GetStringValue(), sv(map[string]any{"j": j, "items": f["items"].AsInterface()})); err != nil {
			return err
		}
	}
	return nil
}

func propNoter(_ context.Context, sc worker.Context, in engine.Event) error {
	sc.Write("noted", in.Data)
	return nil
}

// propGather collects main's items in the order of their types.
func propGather(_ context.Context, sc worker.Context, in engine.Event) error {
	var types []string
	for _, v := range in.Data.GetFields()["items"].GetListValue().GetValues() {
		types = append(types, v.GetStringValue())
	}
	got, err := sc.Collect(in, types...)
	if err != nil || got == nil {
		return err
	}
	var js []any
	for _, ev := range got {
		js = append(js, ev.Type, ev.Data.GetFields()["j"].GetNumberValue())
	}
	return sc.Send(engine.StopEvent, sv(map[string]any{"collected": js}))
}

// propChild is an in-process workflow both copies start as a child: it
// waits for "go" and completes with twice its input n.
func propChild() engine.Workflow {
	return engine.Workflow{Name: "prop-child", Events: []engine.EventType{{Type: "go"}},
		Steps: []engine.Step{{Name: "run", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
			Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
				if _, err := sc.WaitFor("go", engine.WaitOptions{}); err != nil {
					return err
				}
				return sc.Send(engine.StopEvent, sv(map[string]any{"n2": 2 * in.Data.GetFields()["n"].GetNumberValue()}))
			}}}}
}

// propScript generates a script: ops, with at most one failing op, each
// send followed by a wait; and the items for the fan-in.
func propScript(r *rand.Rand) map[string]any {
	kinds := []string{"write", "setget", "once", "send", "wait", "timeout", "sleep", "child", "task", "key", "fail"}
	var ops []any
	failed := false
	for range 3 + r.IntN(8) {
		op := kinds[r.IntN(len(kinds))]
		switch {
		case op == "fail" && failed:
			op = "write"
		case op == "fail":
			failed = true
		case op == "send":
			ops = append(ops, op)
			op = "wait"
		}
		ops = append(ops, op)
	}
	var items []any
	for range 1 + r.IntN(4) {
		items = append(items, []string{"a", "b"}[r.IntN(2)])
	}
	return map[string]any{"ops": ops, "items": items}
}

// drive answers a handler until it ends: each wait for "ev" with a decoy
// that does not match and then the matching event, each child with "go",
// each task with an answer, each wait for a key with an event published
// for the handler. Timers fire on their own.
func drive(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) {
	t.Helper()
	answered := map[string]bool{}
	testwait.Until(t, func() error {
		res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
		if err != nil {
			return err
		}
		h := res.GetHandler()
		if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
			return nil
		}
		for _, w := range h.GetIdle().GetWaiters() {
			if answered[w.GetWaiterId()] {
				continue
			}
			switch {
			case w.GetEventType() == "ev":
				for _, data := range []*structpb.Struct{sv(map[string]any{"i": -1, "decoy": true}), w.GetMatch()} {
					if _, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "ev", Data: data}}); err != nil {
						t.Fatal(err)
					}
				}
			case len(w.GetChildren()) > 0:
				for _, kid := range w.GetChildren() {
					waitIdle(t, c, kid)
					if _, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: kid, Event: &wfdv1.Event{Type: "go", Data: sv(nil)}}); err != nil {
						t.Fatal(err)
					}
				}
			case w.GetTask() != nil:
				if _, err := c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: w.GetTask().GetTaskId(),
					Answer: sv(map[string]any{"title": w.GetTask().GetTitle()}), CompletedBy: "ann"}); err != nil {
					t.Fatal(err)
				}
			case w.GetKey() != "":
				if _, err := c.PublishEvent(ctxT(t), &wfdv1.PublishEventRequest{Key: w.GetKey(), HandlerId: id,
					Data: sv(map[string]any{"key": w.GetKey()})}); err != nil {
					t.Fatal(err)
				}
			default:
				continue // a timer: it fires on its own
			}
			answered[w.GetWaiterId()] = true
		}
		return fmt.Errorf("handler %s still running", id)
	})
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// normalise renders records as JSON lines with what must differ between
// two handlers replaced: times dropped, ids (uuids) numbered in order of
// first appearance, and idle periods that wait only for timers (an idle
// record and the busy record after it) left out (see propTimer).
func normalise(t *testing.T, recs []*wfdv1.Record) []string {
	t.Helper()
	ids := map[string]string{}
	var out []string
	inTimerIdle := false
	for _, r := range recs {
		if ic := r.GetIdleChanged(); ic != nil {
			if ic.GetIdle() && timersOnly(ic.GetInfo()) {
				inTimerIdle = true
				continue
			}
			if !ic.GetIdle() && inTimerIdle {
				inTimerIdle = false
				continue
			}
		}
		b, err := protojson.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		dropTimes(m)
		b, err = json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, uuidRE.ReplaceAllStringFunc(string(b), func(id string) string {
			if ids[id] == "" {
				ids[id] = fmt.Sprintf("id%d", len(ids)+1)
			}
			return ids[id]
		}))
	}
	return out
}

// timersOnly says whether an idle handler waits only for timers (timed
// waits for the never-sent type and sleeps) and accepts nothing at any time.
func timersOnly(i *wfdv1.IdleInfo) bool {
	for _, w := range i.GetWaiters() {
		if w.GetDeadline() == nil || (w.GetEventType() != "" && w.GetEventType() != "never") || w.GetTask() != nil || w.GetKey() != "" || len(w.GetChildren()) > 0 {
			return false
		}
	}
	return len(i.GetWaiters()) > 0
}

// dropTimes removes the timestamps from a record's JSON form.
func dropTimes(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "time", "since", "deadline", "createdAt", "updatedAt", "completedAt":
				delete(v, k)
			default:
				dropTimes(x)
			}
		}
	case []any:
		for _, x := range v {
			dropTimes(x)
		}
	}
}

// TestWorkerPropertySameStreamInProcessAndRemote: for generated scripts
// (seeded; the seed is logged), the workflow in process and the same
// workflow served by a Go worker complete with the same result and the
// same stream, record for record. Every context operation is in the mix:
// writes, sends, waits with a match (after a decoy), a timed-out wait, a
// sleep, get/set, once, a child, a task, a published key, a failed attempt
// that is retried, and collect (fan-in).
func TestWorkerPropertySameStreamInProcessAndRemote(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: append(workflows.All(), propInProcess("prop-local"), propChild())})
	c := ts.client()
	startWorker(t, ts, "prop", worker.Workflow{Definition: propDef("prop-remote"), Run: propSteps()})
	workersServing(t, ts, "prop-remote", 1)

	base := uint64(time.Now().UnixNano())
	for n := range 20 {
		seed := base + uint64(n)
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			script := propScript(rand.New(rand.NewPCG(seed, 0)))
			t.Logf("seed %d: %v", seed, script)
			streams := map[string][]string{}
			for _, name := range []string{"prop-local", "prop-remote"} {
				res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: name, Input: sv(script)})
				if err != nil {
					t.Fatal(err)
				}
				id := res.GetHandler().GetHandlerId()
				drive(t, c, id)
				recs := collect(t, c, id, 0)
				if fin := recs[len(recs)-1].GetHandlerFinished(); fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
					t.Fatalf("%s: finished %v, want completed", name, fin)
				}
				streams[name] = normalise(t, recs)
			}
			local, remote := streams["prop-local"], streams["prop-remote"]
			for i := range max(len(local), len(remote)) {
				var l, r string
				if i < len(local) {
					l = local[i]
				}
				if i < len(remote) {
					r = remote[i]
				}
				if l != r {
					t.Fatalf("seed %d: streams differ at record %d:\n in process: %s\n remote:     %s\nin process:\n%s\nremote:\n%s",
						seed, i, l, r, strings.Join(local, "\n"), strings.Join(remote, "\n"))
				}
			}
		})
	}
}
