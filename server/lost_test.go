package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/faultstore"
	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/workflows"
)

// A handler whose change cannot be committed leaves memory without it and
// is loaded again from its last durable checkpoint: these tests break the
// store under a change and check that nothing of what the handler did
// after its last durable change reaches the store or the clients.

// errDiskFull is the error of a store that cannot commit.
var errDiskFull = fmt.Errorf("%w: bolt: write /var/lib/wfd/wfd.db: %w", persistence.ErrUnavailable, syscall.ENOSPC)

// failWrites makes every Write fail as on a full disk; it returns the
// count of the Writes refused since.
func failWrites(fs *faultstore.Store) *atomic.Int64 {
	var refused atomic.Int64
	fs.Update(func(fn *faultstore.Funcs) {
		fn.WriteFunc = func(context.Context, ...persistence.Change) error {
			refused.Add(1)
			return errDiskFull
		}
	})
	return &refused
}

// opens is a gate that steps wait on (or on their run's context, which
// ends when their handler leaves memory); passed counts the runs it let
// through. A test opens it when it ends at the latest (t.Cleanup after
// the server started: cleanups run last first, and a server that stops
// must not wait for runs held at the gate).
type opens struct {
	ch     chan struct{}
	once   sync.Once
	passed atomic.Int32
}

func (o *opens) open() { o.once.Do(func() { close(o.ch) }) }

// wait returns nil once the gate is open, or ctx's error if the run is
// cancelled first.
func (o *opens) wait(ctx context.Context) error {
	select {
	case <-o.ch:
		o.passed.Add(1)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// gated waits for a "go" event (so it is idle until one comes), then
// waits for the gate and completes with the event's data.
func gated(o *opens) engine.Workflow {
	return engine.Workflow{Name: "gated", Steps: []engine.Step{{
		Name: "hold", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
		Run: func(ctx context.Context, sc *engine.StepContext, _ engine.Event) error {
			ev, err := sc.WaitFor("go", engine.WaitOptions{})
			if err != nil {
				return err
			}
			if err := o.wait(ctx); err != nil {
				return err
			}
			return sc.Send(engine.StopEvent, ev.Data)
		},
	}}}
}

// slowStart runs one step that waits for the gate, so the handler is busy
// (a run in progress) until the gate opens.
func slowStart(o *opens) engine.Workflow {
	return engine.Workflow{Name: "slow-start", Steps: []engine.Step{{
		Name: "work", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
		Run: func(ctx context.Context, sc *engine.StepContext, _ engine.Event) error {
			if err := o.wait(ctx); err != nil {
				return err
			}
			return sc.Send(engine.StopEvent, nil)
		},
	}}}
}

// chain waits for "go", then runs "second" and "third"; third reports its
// handler to reached and waits for the gate. With Options.Linger off, once
// third is reached the handler has handed the journal (at least) the
// change that ran "wait" after "go" and the one that ended it and started
// "second": two changes after its last idle one.
func chain(o *opens, reached func(id string)) engine.Workflow {
	return engine.Workflow{Name: "chain", Steps: []engine.Step{
		{Name: "wait", Accepts: []string{engine.StartEvent}, Emits: []string{"second"},
			Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				if _, err := sc.WaitFor("go", engine.WaitOptions{}); err != nil {
					return err
				}
				return sc.Send("second", nil)
			}},
		{Name: "second", Accepts: []string{"second"}, Emits: []string{"third"},
			Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error { return sc.Send("third", nil) }},
		{Name: "third", Accepts: []string{"third"}, Emits: []string{engine.StopEvent},
			Run: func(ctx context.Context, sc *engine.StepContext, _ engine.Event) error {
				reached(sc.HandlerID())
				if err := o.wait(ctx); err != nil {
					return err
				}
				return sc.Send(engine.StopEvent, nil)
			}},
	}}
}

// consecutive fails t unless the records are numbered 1, 2, 3, ... with
// no gap, and returns them as kinds renders them.
func consecutive(t *testing.T, recs []*wfdv1.Record) string {
	t.Helper()
	for i, r := range recs {
		if r.Seq != uint64(i+1) {
			t.Fatalf("record %d has seq %d: the stream has a gap: %s", i+1, r.Seq, kinds(recs))
		}
	}
	return kinds(recs)
}

// inMemory waits until the server holds n handlers in memory, and n idle
// ones at most.
func inMemory(t *testing.T, c wfdv1connect.WorkflowServiceClient, n int64) {
	t.Helper()
	testwait.Until(t, func() error {
		s := stats(t, c)
		if s.HandlersActive != n || s.HandlersIdleInMemory > n {
			return fmt.Errorf("%d handlers in memory (%d idle), want %d", s.HandlersActive, s.HandlersIdleInMemory, n)
		}
		return nil
	})
}

// firstAfter reports whether changes hold handler id's change that starts
// its stream after seq (its first change since then).
func firstAfter(changes []persistence.Change, id string, seq uint64) bool {
	for _, ch := range changes {
		if ch.Handler.ID == id && len(ch.Records) > 0 && ch.Records[0].Seq == seq+1 {
			return true
		}
	}
	return false
}

// TestRunRetriedAfterFailedCommit: RunWorkflow with a handler id while the
// store cannot commit answers Unavailable, and the handler it began leaves
// memory: once the store commits, the same call creates it (not
// AlreadyExists), and its stream starts at 1 with no gap and completes.
func TestRunRetriedAfterFailedCommit(t *testing.T) {
	ctx := ctxT(t)
	f := startFaulty(t, server.Options{Workflows: testWorkflows()})
	c := f.client
	req := &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: "ghost"}
	failWrites(f.fs)
	_, err := c.RunWorkflow(ctx, req)
	wantCode(t, err, connect.CodeUnavailable, "")
	f.fs.Reset()

	res, err := c.RunWorkflow(ctx, req)
	if err != nil {
		t.Fatalf("the same RunWorkflow once the store commits: %v", err)
	}
	h := getHandler(t, c, "ghost")
	if h.HandlerId != "ghost" || h.Workflow != "approval" || h.Status != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING ||
		!h.CreatedAt.AsTime().Equal(res.Handler.CreatedAt.AsTime()) {
		t.Fatalf("GetHandler %v, RunWorkflow answered %v", h, res.Handler)
	}
	waitIdle(t, c, "ghost")
	if _, err := sendEv(t, c, "ghost", "approval", map[string]any{"approved": true}); err != nil {
		t.Fatal(err)
	}
	if k := consecutive(t, collect(t, c, "ghost", 0)); !strings.HasPrefix(k, "1:decide started") || strings.Count(k, "COMPLETED") != 1 ||
		!strings.HasSuffix(k, "COMPLETED") {
		t.Fatalf("stream: %s", k)
	}
	inMemory(t, c, 0)
}

// TestRunWithoutIDAfterFailedCommit: RunWorkflow without an id while the
// store cannot commit leaves no handler behind, in memory or in the store;
// a retry once the store commits makes exactly one.
func TestRunWithoutIDAfterFailedCommit(t *testing.T) {
	ctx := ctxT(t)
	f := startFaulty(t, server.Options{Workflows: testWorkflows()})
	c := f.client
	req := &wfdv1.RunWorkflowRequest{Workflow: "approval"}
	listed := func() []*wfdv1.Handler {
		t.Helper()
		res, err := c.ListHandlers(ctx, &wfdv1.ListHandlersRequest{Workflow: "approval"})
		if err != nil {
			t.Fatal(err)
		}
		return res.Handlers
	}

	failWrites(f.fs)
	_, err := c.RunWorkflow(ctx, req)
	wantCode(t, err, connect.CodeUnavailable, "")
	inMemory(t, c, 0)
	if hs := listed(); len(hs) != 0 {
		t.Fatalf("stored after a failed RunWorkflow: %v", hs)
	}

	f.fs.Reset()
	res, err := c.RunWorkflow(ctx, req)
	if err != nil {
		t.Fatalf("RunWorkflow once the store commits: %v", err)
	}
	waitIdle(t, c, res.Handler.HandlerId)
	if hs := listed(); len(hs) != 1 || hs[0].HandlerId != res.Handler.HandlerId {
		t.Fatalf("stored: %v, want only %s", hs, res.Handler.HandlerId)
	}
	inMemory(t, c, 1)
}

// TestSendEventRetriedAfterFailedCommit: an event to an idle handler in
// memory whose commit fails answers Unavailable, and the handler, which
// took the event in memory and began a run, leaves memory without it:
// the store keeps its last durable state, the run's end is never stored,
// and the retried event is taken once, with a stream that has no gap.
func TestSendEventRetriedAfterFailedCommit(t *testing.T) {
	o := &opens{ch: make(chan struct{})}
	f := startFaulty(t, server.Options{Workflows: []engine.Workflow{gated(o)}})
	t.Cleanup(o.open)
	c := f.client
	h := run(t, c, "gated", nil)
	before := waitIdle(t, c, h.HandlerId)

	failWrites(f.fs)
	_, err := sendEv(t, c, h.HandlerId, "go", map[string]any{"n": 1.0})
	wantCode(t, err, connect.CodeUnavailable, "")
	// It leaves memory (its run ends with it) while the store still fails.
	inMemory(t, c, 0)
	f.fs.Reset()
	o.open()
	if after := getHandler(t, c, h.HandlerId); !proto.Equal(after, before) {
		t.Fatalf("stored after the failed event:\n%v\nwant its last durable state\n%v", after, before)
	}

	if _, err := sendEv(t, c, h.HandlerId, "go", map[string]any{"n": 2.0}); err != nil {
		t.Fatalf("the event again once the store commits: %v", err)
	}
	recs := collect(t, c, h.HandlerId, 0)
	if k := consecutive(t, recs); strings.Count(k, "hold ended") != 1 || !strings.HasSuffix(k, "COMPLETED") {
		t.Fatalf("stream: %s", k)
	}
	if n := recs[len(recs)-1].GetHandlerFinished().GetResult().GetFields()["n"].GetNumberValue(); n != 2 {
		t.Fatalf("completed with the event n=%v, want the retried one (2)", n)
	}
	if n := o.passed.Load(); n != 1 {
		t.Fatalf("the step went past its wait %d times, want 1", n)
	}
}

// TestRefusedChangeReloadsHandler: the store refuses one handler's change
// in a commit it shares with others. The journal writes the changes one by
// one: the others commit, the refused one's caller gets InvalidArgument,
// and the later change of the same handler in that commit is not written.
// The handler leaves memory and the next call loads it from its last
// durable state.
func TestRefusedChangeReloadsHandler(t *testing.T) {
	ctx := ctxT(t)
	o := &opens{ch: make(chan struct{})}
	arrived := newArrivals()
	f := startFaulty(t, server.Options{Workflows: []engine.Workflow{workflows.Echo(), chain(o, arrived.reached)}, Linger: lingerOff})
	t.Cleanup(o.open)
	c := f.client
	var ids []string
	for range 3 {
		h := run(t, c, "chain", nil)
		waitIdle(t, c, h.HandlerId)
		ids = append(ids, h.HandlerId)
	}
	x, others := ids[0], ids[1:]
	before := getHandler(t, c, x)

	hold := newGate(t)
	var writes writeLog
	refused := fmt.Errorf("bolt: write: %w: handler %q: waiter key longer than 1024 bytes", persistence.ErrInvalid, x)
	f.fs.Update(func(fn *faultstore.Funcs) {
		fn.WriteFunc = func(ctx context.Context, changes ...persistence.Change) error {
			writes.add(changes)
			hold.wait()
			if firstAfter(changes, x, before.LastSeq) {
				return refused
			}
			return f.fs.Inner().Write(ctx, changes...)
		}
	})
	// A held commit: the events' changes queue behind it and share the
	// next one.
	blocker := runAll(ctx, c, "echo", "blocker")
	waitClosed(t, ctx, hold.entered, "the first commit")
	sent := map[string]chan error{}
	for _, id := range ids {
		sent[id] = make(chan error, 1)
		go func() {
			_, err := c.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "go"}})
			sent[id] <- err
		}()
	}
	arrived.wait(t, ctx, ids...)
	hold.open()
	if err := blocker.err("blocker"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, <-sent[x], connect.CodeInvalidArgument, "waiter key longer than 1024 bytes")
	for _, id := range others {
		if err := <-sent[id]; err != nil {
			t.Fatalf("SendEvent to %s, which shared the refused commit: %v", id, err)
		}
	}
	// The path under test ran: x's change was refused in a shared commit
	// that also held x's next change.
	shared := false
	for _, changes := range writes.all() {
		n := 0
		for _, id := range changes {
			if id == x {
				n++
			}
		}
		shared = shared || n >= 2 && len(changes) > n
	}
	if !shared {
		t.Fatalf("no commit held two changes of %s and others' (commits: %v)", x, writes.all())
	}
	if after := getHandler(t, c, x); !proto.Equal(after, before) {
		t.Fatalf("stored after the refused change:\n%v\nwant its last durable state\n%v", after, before)
	}

	o.open()
	f.fs.Reset()
	for _, id := range others {
		if k := consecutive(t, collect(t, c, id, 0)); !strings.HasSuffix(k, "COMPLETED") {
			t.Fatalf("stream of %s: %s", id, k)
		}
	}
	if _, err := sendEv(t, c, x, "go", nil); err != nil {
		t.Fatalf("the event again to the refused handler: %v", err)
	}
	// Loaded again after its last durable record.
	k := consecutive(t, collect(t, c, x, 0))
	if !strings.Contains(k, fmt.Sprintf(" %d:restored ", before.LastSeq+1)) || strings.Count(k, "COMPLETED") != 1 || !strings.HasSuffix(k, "COMPLETED") {
		t.Fatalf("stream of the refused handler: %s", k)
	}
}

// TestChangesAfterFailedCommitAreDropped: one commit fails (a transient
// I/O error) while the handler it held goes on in memory and hands the
// journal more changes; those must not be committed after it, even though
// the store commits again: the store keeps the handler's last durable
// state, and the next call loads it from there.
func TestChangesAfterFailedCommitAreDropped(t *testing.T) {
	ctx := ctxT(t)
	o := &opens{ch: make(chan struct{})}
	arrived := newArrivals()
	f := startFaulty(t, server.Options{Workflows: []engine.Workflow{workflows.Echo(), chain(o, arrived.reached)}, Linger: lingerOff})
	t.Cleanup(o.open)
	c := f.client
	h := run(t, c, "chain", nil)
	x := h.HandlerId
	before := waitIdle(t, c, x)

	hold := newGate(t)
	var once sync.Once
	f.fs.Update(func(fn *faultstore.Funcs) {
		fn.WriteFunc = func(ctx context.Context, changes ...persistence.Change) error {
			failed := false
			if firstAfter(changes, x, before.LastSeq) {
				once.Do(func() { failed = true })
			}
			if failed {
				hold.wait()
				return fmt.Errorf("%w: bolt: write: %w", persistence.ErrUnavailable, syscall.EIO)
			}
			return f.fs.Inner().Write(ctx, changes...)
		}
	})
	sent := make(chan error, 1)
	go func() { _, err := sendEv(t, c, x, "go", nil); sent <- err }()
	waitClosed(t, ctx, hold.entered, "the commit of the event")
	arrived.wait(t, ctx, x) // x's next change is queued behind the held commit
	hold.open()
	wantCode(t, <-sent, connect.CodeUnavailable, "")
	// A commit queued after x's next change: once it is acknowledged, the
	// journal is done with that change.
	run(t, c, "echo", nil)
	if after := getHandler(t, c, x); !proto.Equal(after, before) {
		t.Fatalf("stored after the failed commit:\n%v\nwant its last durable state\n%v", after, before)
	}

	o.open()
	if _, err := sendEv(t, c, x, "go", nil); err != nil {
		t.Fatalf("the event again: %v", err)
	}
	if k := consecutive(t, collect(t, c, x, 0)); strings.Count(k, "COMPLETED") != 1 || !strings.HasSuffix(k, "COMPLETED") {
		t.Fatalf("stream: %s", k)
	}
}

// TestLostBusyHandlerResumes: a handler whose run was in progress at its
// last durable change loses its next change to a full disk; once the
// store commits again the server loads it by itself, its run runs again
// (at least once, as after a crash) and it completes, with a stream that
// has no gap. No call is needed to wake it.
func TestLostBusyHandlerResumes(t *testing.T) {
	o := &opens{ch: make(chan struct{})}
	f := startFaulty(t, server.Options{Workflows: []engine.Workflow{slowStart(o)}})
	t.Cleanup(o.open)
	c := f.client
	h := run(t, c, "slow-start", nil) // acknowledged with its run in progress

	refused := failWrites(f.fs)
	o.open() // the run ends; the change that says so cannot be committed
	// Not only out of memory (a finished handler leaves it before its
	// commit): its commit refused.
	testwait.For(t, "the run's end refused by the store", func() bool { return refused.Load() > 0 })
	inMemory(t, c, 0)
	f.fs.Reset()

	recs := collect(t, c, h.HandlerId, 0)
	if k := consecutive(t, recs); k != "1:work started 2:restored 3:work started 4:work ended 5:COMPLETED" {
		t.Fatalf("stream: %s", k)
	}
	if got := getHandler(t, c, h.HandlerId); got.Status != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("handler: %v", got)
	}
}
