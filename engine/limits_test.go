package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/testlog"
)

// engineWith is newEngine with options (the recorder is the journal).
func engineWith(t *testing.T, opts engine.Options, wfs ...engine.Workflow) (*engine.Engine, *recorder) {
	t.Helper()
	rec := newRecorder()
	opts.Journal = rec
	e := engine.New(opts)
	// The tests run with idle data encoded (freeze.go) whatever the count
	// of handlers, as they did when CompactIdleAbove 0 meant always.
	engine.CompactAlways(e)
	for _, w := range wfs {
		if err := e.Register(w); err != nil {
			t.Fatalf("Register(%s): %v", w.Name, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Close(ctx)
	})
	return e, rec
}

// one is workflow "w": one step that runs fn for the start event and may
// send "stop" (and "x", which a second step takes).
func one(fn engine.StepFunc) engine.Workflow {
	return engine.Workflow{Name: "w", Steps: []engine.Step{
		{Name: "s", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent, "x"}, Run: fn},
		{Name: "t", Accepts: []string{"x"}, Run: nop},
	}}
}

func data(fields map[string]*structpb.Value) *structpb.Struct {
	return &structpb.Struct{Fields: fields}
}

func deep(levels int) *structpb.Struct {
	s := data(nil)
	for range levels - 1 {
		s = data(map[string]*structpb.Value{"a": structpb.NewStructValue(s)})
	}
	return s
}

// TestPayloadChecks: whatever a step emits, writes or stores that JSON
// cannot hold fails the run with an error naming the value (even when the
// step ignores the error), and none of it reaches the stream or the
// handler's store.
func TestPayloadChecks(t *testing.T) {
	nan := data(map[string]*structpb.Value{"x": structpb.NewNumberValue(math.NaN())})
	cases := []struct {
		name string
		run  engine.StepFunc
		want string
	}{
		{"result with NaN", func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			return sc.Send(engine.StopEvent, nan)
		}, `sends "stop": result.x: NaN is not allowed`},
		{"result with a nil value", func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			return sc.Send(engine.StopEvent, data(map[string]*structpb.Value{"index": in.Data.GetFields()["index"]}))
		}, `result.index: value has no kind`},
		{"sent event with -Infinity, error ignored", func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			_ = sc.Send("x", data(map[string]*structpb.Value{"l": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewNumberValue(math.Inf(-1))}})}))
			return nil
		}, `sends "x": data.l[0]: -Infinity is not allowed`},
		{"written event with Infinity", func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			sc.Write("progress", data(map[string]*structpb.Value{"x": structpb.NewNumberValue(math.Inf(1))}))
			return nil
		}, `writes "progress": data.x: Infinity is not allowed`},
		{"written event type not UTF-8", func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			sc.Write("\xff", nil)
			return nil
		}, `the event type is not valid UTF-8`},
		{"stored value with NaN, error ignored", func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			_ = sc.Set("k", structpb.NewNumberValue(math.NaN()))
			return sc.Send(engine.StopEvent, nil)
		}, `sets "k": value: NaN is not allowed`},
		{"memo with a kind-less value", func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			_, err := sc.Once("m", func() (*structpb.Value, error) { return &structpb.Value{}, nil })
			return err
		}, `sets "Once m": value: value has no kind`},
		{"string not UTF-8", func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			return sc.Send(engine.StopEvent, data(map[string]*structpb.Value{"s": structpb.NewStringValue("\xff")}))
		}, `result.s: string is not valid UTF-8`},
		{"nested too deep", func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			return sc.Send(engine.StopEvent, deep(engine.DefaultMaxPayloadDepth+1))
		}, `nested deeper than 32 levels`},
		{"child input with NaN", func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			_, err := sc.StartChild("leaf", nan)
			return err
		}, `starts a child: input.x: NaN is not allowed`},
		{"task schema with NaN", func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			_, err := sc.AskHuman(engine.Task{Title: "t", Schema: nan})
			return err
		}, `asks task "t": schema.x: NaN is not allowed`},
		{"wait match with NaN", func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			_, err := sc.WaitFor("go", engine.WaitOptions{Match: nan})
			return err
		}, `waits for "go": match.x: NaN is not allowed`},
		{"key too long", func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			_, err := sc.WaitForKey(strings.Repeat("k", 300), engine.KeyOptions{})
			return err
		}, `the key is 300 bytes long, over the limit of 256`},
	}
	leaf := engine.Workflow{Name: "leaf", Steps: []engine.Step{step("s", engine.StartEvent, []string{engine.StopEvent}, stop)}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, rec := engineWith(t, engine.Options{}, one(c.run), leaf)
			info := wait(t, start(t, e, "w", nil))
			if info.Status != engine.StatusFailed || !strings.Contains(info.Error, c.want) {
				t.Fatalf("handler ended %v with %q, want failed with %q", info.Status, info.Error, c.want)
			}
			for _, r := range rec.of(info.ID) {
				if r.Kind == engine.RecordEvent {
					t.Errorf("a refused event reached the stream: %s", describe(r))
				}
			}
		})
	}
}

func stop(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
	return sc.Send(engine.StopEvent, nil)
}

// TestBadInputRefused: Start and SendEvent refuse a payload JSON cannot
// hold, and a workflow's CheckInput refuses an input, before anything is
// created or queued.
func TestBadInputRefused(t *testing.T) {
	checked := engine.Workflow{Name: "checked", Steps: []engine.Step{step("s", engine.StartEvent, []string{engine.StopEvent}, stop)},
		CheckInput: func(in *structpb.Struct) error {
			if _, ok := in.GetFields()["n"]; !ok {
				return errors.New(`"n" is required`)
			}
			if in.GetFields()["panic"] != nil {
				panic("checker bug")
			}
			return nil
		}}
	waits := engine.Workflow{Name: "waits", External: []string{"go"}, Steps: []engine.Step{
		step("s", engine.StartEvent, nil, nop), step("g", "go", []string{engine.StopEvent}, stop)}}
	e, rec := engineWith(t, engine.Options{Limits: engine.Limits{MaxPayloadDepth: 4, MaxPayloadBytes: 512}}, checked, waits)
	ctx := context.Background()
	nan := data(map[string]*structpb.Value{"n": structpb.NewNumberValue(math.NaN())})
	for _, c := range []struct {
		name, wf string
		in       *structpb.Struct
		is       error
		want     string
	}{
		{"NaN", "checked", nan, engine.ErrInvalidPayload, "input.n: NaN is not allowed"},
		{"too deep", "checked", deep(5), engine.ErrInvalidPayload, "input.a.a.a.a: nested deeper than 4 levels"},
		{"too large", "checked", data(map[string]*structpb.Value{"n": structpb.NewStringValue(strings.Repeat("x", 600))}), engine.ErrInvalidPayload, "over the limit of 512"},
		{"not UTF-8", "checked", data(map[string]*structpb.Value{"bad": structpb.NewStringValue("\xff\xfe")}), engine.ErrInvalidPayload, "input.bad: string is not valid UTF-8"},
		{"refused by the workflow", "checked", nil, engine.ErrInvalidInput, `workflow "checked": "n" is required`},
		{"checker panics", "checked", mustStruct(t, map[string]any{"n": 1.0, "panic": true}), engine.ErrInvalidInput, "checking the input panicked: checker bug"},
	} {
		_, err := e.Start(ctx, c.wf, c.in, engine.StartOptions{HandlerID: "h-" + c.name})
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Start = %v, want %v with %q", c.name, err, c.is, c.want)
		}
		if len(rec.changesOf("h-"+c.name)) != 0 || e.Live() != 0 {
			t.Errorf("%s: a refused start created a handler", c.name)
		}
	}
	h := start(t, e, "waits", nil)
	rec.awaitIdle(t, h.ID(), 1)
	before := len(rec.changesOf(h.ID()))
	err := h.SendEvent(ctx, engine.Event{Type: "go", Data: data(map[string]*structpb.Value{"v": {}})}, engine.SendOptions{})
	if !errors.Is(err, engine.ErrInvalidPayload) || !strings.Contains(err.Error(), "event.data.v: value has no kind") {
		t.Fatalf("SendEvent = %v", err)
	}
	if got := len(rec.changesOf(h.ID())); got != before {
		t.Fatalf("a refused event changed the handler (%d changes, was %d)", got, before)
	}
}

// TestLimits runs each engine limit with a low setting: a step that goes
// past it fails its run with ErrLimit and a message naming the limit, and
// an event from outside past it is refused.
func TestLimits(t *testing.T) {
	t.Run("children", func(t *testing.T) {
		leaf := engine.Workflow{Name: "leaf", Steps: []engine.Step{step("s", engine.StartEvent, []string{engine.StopEvent}, stop)}}
		// Without the limit this step would start children forever.
		w := one(func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			for {
				if _, err := sc.StartChild("leaf", nil); err != nil {
					return err
				}
			}
		})
		e, _ := engineWith(t, engine.Options{Limits: engine.Limits{MaxChildren: 5}}, w, leaf)
		info := wait(t, start(t, e, "w", nil))
		if info.Status != engine.StatusFailed || !strings.Contains(info.Error, "has started 5 children, the limit (Limits.MaxChildren)") {
			t.Fatalf("got %v %q", info.Status, info.Error)
		}
	})
	t.Run("events one run sends", func(t *testing.T) {
		w := one(func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			for {
				if err := sc.Send("x", nil); err != nil {
					return err
				}
			}
		})
		e, _ := engineWith(t, engine.Options{Limits: engine.Limits{MaxQueuedEvents: 5}}, w)
		info := wait(t, start(t, e, "w", nil))
		if info.Status != engine.StatusFailed || !strings.Contains(info.Error, "sent and wrote 5 events, the limit (Limits.MaxQueuedEvents)") {
			t.Fatalf("got %v %q", info.Status, info.Error)
		}
	})
	t.Run("events queued", func(t *testing.T) {
		// Each "x" queues a run of two steps: 3 of them make 6 > 4.
		w := engine.Workflow{Name: "w", Steps: []engine.Step{
			step("s", engine.StartEvent, []string{"x", engine.StopEvent}, func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				for range 3 {
					if err := sc.Send("x", nil); err != nil {
						return err
					}
				}
				return nil
			}),
			step("a", "x", nil, nop), step("b", "x", nil, nop),
		}}
		e, rec := engineWith(t, engine.Options{Limits: engine.Limits{MaxQueuedEvents: 4}}, w)
		info := wait(t, start(t, e, "w", nil))
		if info.Status != engine.StatusFailed || !strings.Contains(info.Error, "holds 0 queued events; 6 more would pass the limit of 4") {
			t.Fatalf("got %v %q", info.Status, info.Error)
		}
		for _, r := range rec.of(info.ID) {
			if r.Kind == engine.RecordStepState && r.Step.Running && r.Step.Step != "s" {
				t.Fatalf("an event of the failed run was delivered: %s", describe(r))
			}
		}
	})
	t.Run("events from outside", func(t *testing.T) {
		started, release := make(chan struct{}, 1), make(chan struct{})
		w := engine.Workflow{Name: "w", External: []string{"job"}, Steps: []engine.Step{
			step("s", engine.StartEvent, nil, nop),
			step("j", "job", []string{engine.StopEvent}, func(context.Context, *engine.StepContext, engine.Event) error {
				select {
				case started <- struct{}{}:
				default:
				}
				<-release
				return nil
			}),
		}}
		e, _ := engineWith(t, engine.Options{Limits: engine.Limits{MaxQueuedEvents: 3}}, w)
		h := start(t, e, "w", nil)
		send(t, h, "job", nil)
		<-started // the first event runs; the next three queue
		for range 3 {
			send(t, h, "job", nil)
		}
		err := h.SendEvent(context.Background(), engine.Event{Type: "job"}, engine.SendOptions{})
		close(release)
		if !errors.Is(err, engine.ErrLimit) || !strings.Contains(err.Error(), "holds 3 queued events; 1 more would pass the limit of 3") {
			t.Fatalf("SendEvent past the limit = %v", err)
		}
	})
	t.Run("runs parked in a wait", func(t *testing.T) {
		// Each "q" parks a run, which keeps its input: the handler holds it.
		w := engine.Workflow{Name: "w", External: []string{"q"}, Steps: []engine.Step{
			step("s", engine.StartEvent, nil, nop),
			step("q", "q", []string{engine.StopEvent}, func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				_, err := sc.WaitFor("never", engine.WaitOptions{})
				return err
			}),
		}}
		e, rec := engineWith(t, engine.Options{Limits: engine.Limits{MaxQueuedEvents: 2}}, w)
		h := start(t, e, "w", nil)
		rec.awaitIdle(t, h.ID(), 1)
		for i := range 2 {
			send(t, h, "q", nil)
			rec.awaitIdle(t, h.ID(), i+2)
		}
		err := h.SendEvent(context.Background(), engine.Event{Type: "q"}, engine.SendOptions{})
		if !errors.Is(err, engine.ErrLimit) || !strings.Contains(err.Error(), "holds 2 queued events; 1 more would pass the limit of 2") {
			t.Fatalf("SendEvent past the limit = %v", err)
		}
	})
	t.Run("waits one run passes", func(t *testing.T) {
		// The run waits again after every event; it carries every earlier
		// wait's result.
		w := engine.Workflow{Name: "w", External: []string{"go"}, Steps: []engine.Step{
			step("s", engine.StartEvent, []string{engine.StopEvent}, func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				for {
					if _, err := sc.WaitFor("go", engine.WaitOptions{}); err != nil {
						return err
					}
				}
			}),
		}}
		e, rec := engineWith(t, engine.Options{Limits: engine.Limits{MaxQueuedEvents: 3}}, w)
		h := start(t, e, "w", nil)
		for i := range 3 {
			rec.awaitIdle(t, h.ID(), i+1)
			send(t, h, "go", nil)
		}
		info := wait(t, h)
		if info.Status != engine.StatusFailed || !strings.Contains(info.Error, "the run has passed 3 waits, the limit (Limits.MaxQueuedEvents)") {
			t.Fatalf("got %v %q", info.Status, info.Error)
		}
	})
	t.Run("record size", func(t *testing.T) {
		w := one(func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			sc.Write("big", data(map[string]*structpb.Value{"s": structpb.NewStringValue(strings.Repeat("x", 2000))}))
			return sc.Send(engine.StopEvent, nil)
		})
		e, _ := engineWith(t, engine.Options{Limits: engine.Limits{MaxRecordBytes: 1024}}, w)
		info := wait(t, start(t, e, "w", nil))
		if info.Status != engine.StatusFailed || !strings.Contains(info.Error, `writes "big": data: encodes to 2012 bytes, over the limit of 1024`) {
			t.Fatalf("got %v %q", info.Status, info.Error)
		}
	})
	t.Run("run output", func(t *testing.T) {
		// 20 events of ~900 bytes pass each limit but not their sum
		// (16 × MaxPayloadBytes).
		w := one(func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			for range 20 {
				sc.Write("p", data(map[string]*structpb.Value{"s": structpb.NewStringValue(strings.Repeat("x", 900))}))
			}
			return sc.Send(engine.StopEvent, nil)
		})
		e, _ := engineWith(t, engine.Options{Limits: engine.Limits{MaxPayloadBytes: 1024}}, w)
		info := wait(t, start(t, e, "w", nil))
		if info.Status != engine.StatusFailed || !strings.Contains(info.Error, "over the limit of 16384 (16 × Limits.MaxPayloadBytes)") {
			t.Fatalf("got %v %q", info.Status, info.Error)
		}
	})
	t.Run("store size", func(t *testing.T) {
		var mu sync.Mutex
		var stored int
		w := one(func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			v := structpb.NewStringValue(strings.Repeat("v", 100))
			// Replacing a value does not grow the store.
			for range 50 {
				if err := sc.Set("same", v); err != nil {
					return err
				}
			}
			for i := 0; ; i++ {
				if err := sc.Set("k"+strings.Repeat("i", i%10)+string(rune('a'+i/10)), v); err != nil {
					return err
				}
				mu.Lock()
				stored++
				mu.Unlock()
			}
		})
		e, _ := engineWith(t, engine.Options{Limits: engine.Limits{MaxStoreBytes: 1024}}, w)
		info := wait(t, start(t, e, "w", nil))
		if info.Status != engine.StatusFailed || !regexp.MustCompile(`would hold \d+ bytes, over the limit of 1024 \(Limits.MaxStoreBytes\)`).MatchString(info.Error) {
			t.Fatalf("got %v %q", info.Status, info.Error)
		}
		mu.Lock()
		defer mu.Unlock()
		if stored < 5 || stored > 10 {
			t.Fatalf("%d values of ~110 bytes fit in 1024 bytes besides the first", stored)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		got := engine.New(engine.Options{Limits: engine.Limits{MaxChildren: 7, MaxStoreBytes: -1}}).Limits()
		want := engine.Limits{MaxChildren: 7, MaxQueuedEvents: engine.DefaultMaxQueuedEvents, MaxRecordBytes: engine.DefaultMaxRecordBytes,
			MaxStoreBytes: engine.DefaultMaxStoreBytes, MaxPayloadDepth: engine.DefaultMaxPayloadDepth, MaxPayloadBytes: engine.DefaultMaxPayloadBytes}
		if got != want {
			t.Fatalf("Limits() = %+v, want %+v", got, want)
		}
	})
}

// TestPanicKeepsStackInLog: a panicking step's error, which clients see,
// says what panicked and carries an error id, but no stack or source
// path; the log has the stack under that id.
func TestPanicKeepsStackInLog(t *testing.T) {
	var logs testlog.Buffer
	w := one(func(context.Context, *engine.StepContext, engine.Event) error {
		var m map[string]int
		m["boom"]++ //nolint:staticcheck // SA5000: the nil-map write is the panic under test
		return nil
	})
	e, rec := engineWith(t, engine.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, w)
	info := wait(t, start(t, e, "w", nil))
	m := regexp.MustCompile(`^step "s" failed after 1 attempt\(s\): step "s" panicked: assignment to entry in nil map \(error id ([A-Z2-7]{12})\)$`).FindStringSubmatch(info.Error)
	if m == nil {
		t.Fatalf("handler error %q", info.Error)
	}
	for _, r := range rec.of(info.ID) {
		if r.Kind == engine.RecordStepState && r.Step.Error != "" && (strings.Contains(r.Step.Error, ".go:") || strings.Contains(r.Step.Error, "goroutine")) {
			t.Fatalf("the stream shows a stack: %q", r.Step.Error)
		}
	}
	if strings.Contains(info.Error, ".go:") || strings.Contains(info.Error, "goroutine") {
		t.Fatalf("the handler's error shows a stack: %q", info.Error)
	}
	log := logs.String()
	if !strings.Contains(log, "error_id="+m[1]) || !strings.Contains(log, "limits_test.go") {
		t.Fatalf("the log does not hold the stack under error id %s:\n%s", m[1], log)
	}
}

// TestErrorsFitTheStore: a step's error is recorded as valid UTF-8 of
// bounded length, however the step made it (protobuf refuses anything
// else, which would fail every checkpoint of the handler).
func TestErrorsFitTheStore(t *testing.T) {
	w := one(func(context.Context, *engine.StepContext, engine.Event) error {
		return errors.New("bad \xff bytes " + strings.Repeat("é", 10000))
	})
	e, rec := engineWith(t, engine.Options{}, w)
	info := wait(t, start(t, e, "w", nil))
	if !utf8.ValidString(info.Error) || len(info.Error) > 4200 || !strings.HasSuffix(info.Error, "… (truncated)") {
		t.Fatalf("handler error of %d bytes, valid UTF-8 %v: %.80q…", len(info.Error), utf8.ValidString(info.Error), info.Error)
	}
	for _, r := range rec.of(info.ID) {
		if r.Kind == engine.RecordStepState && (!utf8.ValidString(r.Step.Error) || len(r.Step.Error) > 4200) {
			t.Fatalf("step error of %d bytes on the stream", len(r.Step.Error))
		}
	}
}
