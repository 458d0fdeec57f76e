package server_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/faultstore"
	"github.com/wfd-dev/wfd/server"
)

// perCustomer runs at most max handlers per input customer at once (or,
// with rate, starts rate per per): its first step writes "began", its
// second ends the handler on a "go" event, so a handler holds its slot
// while it waits for "go".
func perCustomer(name string, c engine.Concurrency) engine.Workflow {
	return engine.Workflow{
		Name:        name,
		External:    []string{"go"},
		Concurrency: &c,
		Steps: []engine.Step{
			{Name: "begin", Accepts: []string{engine.StartEvent}, Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				sc.Write("began", nil)
				return nil
			}},
			{Name: "finish", Accepts: []string{"go"}, Emits: []string{engine.StopEvent}, Run: func(_ context.Context, sc *engine.StepContext, ev engine.Event) error {
				return sc.Send(engine.StopEvent, ev.Data)
			}},
		},
	}
}

// waitSlot waits until handler id has status st and, for a queued one,
// is at position pos.
func waitSlot(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string, st wfdv1.HandlerStatus, pos uint32) *wfdv1.Handler {
	t.Helper()
	var h *wfdv1.Handler
	testwait.Until(t, func() error {
		h = getHandler(t, c, id)
		if h.GetStatus() != st || h.GetSlot().GetPosition() != pos {
			return fmt.Errorf("%s: %v at %d, want %v at %d", id, h.GetStatus(), h.GetSlot().GetPosition(), st, pos)
		}
		return nil
	})
	return h
}

// recordsTo reads handler id's stream up to record last.
func recordsTo(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string, last uint64) []*wfdv1.Record {
	t.Helper()
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	s, err := c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: id, IncludeInternal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	var out []*wfdv1.Record
	for len(out) == 0 || out[len(out)-1].GetSeq() < last {
		if !s.Receive() {
			t.Fatalf("stream of %s ended at %d records: %v", id, len(out), s.Err())
		}
		if r := s.Msg().GetRecord(); r != nil {
			out = append(out, r)
		}
	}
	return out
}

func sendGo(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string, n float64) {
	t.Helper()
	_, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "go", Data: st(t, map[string]any{"n": n})}})
	if err != nil {
		t.Fatalf("go to %s: %v", id, err)
	}
}

func startFor(t *testing.T, c wfdv1connect.WorkflowServiceClient, workflow, id, customer string) *wfdv1.Handler {
	t.Helper()
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: workflow, HandlerId: id, Input: st(t, map[string]any{"customer": customer})})
	if err != nil {
		t.Fatalf("start %s: %v", id, err)
	}
	return res.Handler
}

// TestConcurrencyKeys: a workflow of at most two running handlers per
// customer runs two of acme's and queues the next in order, with their
// positions, while another customer's runs; an event to a queued handler
// is held until it is admitted; a handler that ends admits the queue's
// head; a queued handler cancelled leaves the queue; the queue and the
// order survive a restart; the stream records the admission.
func TestConcurrencyKeys(t *testing.T) {
	dir := t.TempDir()
	wfs := append(testWorkflows(), perCustomer("limited", engine.Concurrency{Key: "customer", Max: 2}))
	ts := startServer(t, serverConfig{dir: dir, workflows: wfs})
	c := ts.client()
	running, queued := wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING, wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED
	for i, id := range []string{"a1", "a2", "a3", "a4", "a5"} {
		h := startFor(t, c, "limited", id, "acme")
		want := running
		if i >= 2 {
			want = queued
		}
		if h.GetStatus() != want || h.GetSlot().GetKey() != "acme" || h.GetSlot().GetQueued() != (i >= 2) {
			t.Fatalf("start %s: %v slot %v, want %v", id, h.GetStatus(), h.GetSlot(), want)
		}
	}
	startFor(t, c, "limited", "b1", "bigco")
	waitSlot(t, c, "b1", running, 0)
	for i, id := range []string{"a3", "a4", "a5"} {
		h := waitSlot(t, c, id, queued, uint32(i+1))
		if !h.GetIdle().GetQueued() {
			t.Fatalf("%s: idle %v, want idle waiting for a slot", id, h.GetIdle())
		}
	}
	// Queued handlers leave memory: nothing of them runs until admitted.
	for _, id := range []string{"a3", "a4", "a5"} {
		testwait.For(t, id+" released", func() bool {
			return getHandler(t, c, id).GetResidency() == wfdv1.Residency_RESIDENCY_RELEASED
		})
	}
	// Nothing of a queued handler runs, and an event it takes is held.
	sendGo(t, c, "a4", 4)
	h4 := getHandler(t, c, "a4")
	if h4.GetStatus() != queued {
		t.Fatalf("a4 after an event: %v, want queued", h4.GetStatus())
	}
	if recs := recordsTo(t, c, "a4", h4.GetLastSeq()); slices.ContainsFunc(recs, func(r *wfdv1.Record) bool { return r.GetStepStateChanged() != nil }) {
		t.Fatalf("a queued handler ran a step: %v", recs)
	}
	// Listing by status tells them apart.
	list := func(st wfdv1.HandlerStatus) []string {
		res, err := c.ListHandlers(ctxT(t), &wfdv1.ListHandlersRequest{Workflow: "limited", Statuses: []wfdv1.HandlerStatus{st}})
		if err != nil {
			t.Fatal(err)
		}
		out := ids(res.Handlers)
		slices.Sort(out)
		return out
	}
	if got := list(queued); !slices.Equal(got, []string{"a3", "a4", "a5"}) {
		t.Fatalf("queued: %v", got)
	}
	if got := list(running); !slices.Equal(got, []string{"a1", "a2", "b1"}) {
		t.Fatalf("running: %v", got)
	}
	// The metrics count them.
	fams := scrape(t, ts.addr)
	if q, n := value(fams, "wfd_concurrency_queued", "workflow=limited"), value(fams, "wfd_concurrency_starts_total", "outcome=queued"); q != 3 || n != 3 {
		t.Fatalf("metrics: %v queued now, %v queued starts; want 3 and 3", q, n)
	}
	// a5 is cancelled while it waits: it leaves the queue.
	if _, err := c.CancelHandler(ctxT(t), &wfdv1.CancelHandlerRequest{HandlerId: "a5"}); err != nil {
		t.Fatal(err)
	}
	// A restart keeps the queue.
	ts.stop()
	ts = startServer(t, serverConfig{dir: dir, workflows: wfs})
	c = ts.client()
	waitSlot(t, c, "a3", queued, 1)
	waitSlot(t, c, "a4", queued, 2)
	// a1 ends: a3 is admitted and runs; a2 ends: a4 is admitted, runs its
	// start and the "go" it held, and ends.
	sendGo(t, c, "a1", 1)
	waitSlot(t, c, "a3", running, 0)
	waitSlot(t, c, "a4", queued, 1)
	sendGo(t, c, "a2", 2)
	h := waitSlot(t, c, "a4", wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED, 0)
	if h.GetResult().GetFields()["n"].GetNumberValue() != 4 {
		t.Fatalf("a4 ended with %v, want the held event's n 4", h.GetResult())
	}
	recs := collect(t, c, "a4", 0)
	admitted := slices.IndexFunc(recs, func(r *wfdv1.Record) bool { return r.GetHandlerAdmitted() != nil })
	// The look back: queued before the admission, running at it.
	for _, tc := range []struct {
		seq  uint64
		want wfdv1.HandlerStatus
	}{{recs[0].GetSeq(), queued}, {recs[admitted].GetSeq(), running}} {
		res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: "a4", AtSeq: tc.seq})
		if err != nil || res.GetAt().GetStatus() != tc.want {
			t.Fatalf("a4 at %d: %v, %v; want %v", tc.seq, res.GetAt().GetStatus(), err, tc.want)
		}
	}
	ran := slices.IndexFunc(recs, func(r *wfdv1.Record) bool { return r.GetStepStateChanged() != nil })
	if admitted < 0 || ran < admitted {
		t.Fatalf("a4's stream: admitted at %d, first step run at %d: %v", admitted, ran, recs)
	}
	if h := getHandler(t, c, "a5"); h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_CANCELLED {
		t.Fatalf("a5: %v", h.GetStatus())
	}
	// The workflow lists its limit.
	res, err := c.ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.GetWorkflows(), func(w *wfdv1.Workflow) bool { return w.GetName() == "limited" })
	if cc := res.GetWorkflows()[i].GetConcurrency(); cc.GetKey() != "customer" || cc.GetMax() != 2 {
		t.Fatalf("limited's concurrency: %v", cc)
	}
}

// TestConcurrencyRefusedAndRate: a workflow that refuses over its limit
// answers RESOURCE_EXHAUSTED and stores nothing; an input without the key
// is INVALID_ARGUMENT; a rate of two a second admits the third start once
// the second has passed.
func TestConcurrencyRefusedAndRate(t *testing.T) {
	wfs := append(testWorkflows(),
		perCustomer("refusing", engine.Concurrency{Key: "customer", Max: 1, Refuse: true}),
		perCustomer("rated", engine.Concurrency{Key: "customer", Rate: 2, Per: time.Second}))
	ts := startServer(t, serverConfig{workflows: wfs})
	c := ts.client()
	startFor(t, c, "refusing", "r1", "acme")
	_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "refusing", HandlerId: "r2", Input: st(t, map[string]any{"customer": "acme"})})
	wantCode(t, err, connect.CodeResourceExhausted, `key "acme"`)
	if _, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: "r2"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("a refused start: GetHandler = %v, want NotFound", err)
	}
	startFor(t, c, "refusing", "r3", "other") // another key has room
	_, err = c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "refusing", Input: &structpb.Struct{}})
	wantCode(t, err, connect.CodeInvalidArgument, `no field "customer"`)
	sendGo(t, c, "r1", 1)
	waitSlot(t, c, "r1", wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED, 0)
	testwait.Until(t, func() error { // r1's slot is freed after its end commits
		_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "refusing", HandlerId: "r4", Input: st(t, map[string]any{"customer": "acme"})})
		return err
	})

	for _, id := range []string{"q1", "q2", "q3"} {
		startFor(t, c, "rated", id, "acme")
	}
	// q3 waits for the rate, then is admitted by the sweep, without a
	// handler of its key ending.
	if h := getHandler(t, c, "q3"); h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED && h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
		t.Fatalf("q3: %v", h.GetStatus())
	}
	waitSlot(t, c, "q3", wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING, 0)
}

// TestWorkerConcurrency: a Go worker's workflow declares its limit (the
// definition carries it over the wire): the second handler of a key is
// queued and runs its held event once the first ends.
func TestWorkerConcurrency(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	finish := func(_ context.Context, sc worker.Context, ev engine.Event) error {
		return sc.Send(engine.StopEvent, ev.Data)
	}
	def := perCustomer("limited-remote", engine.Concurrency{Key: "customer", Max: 1})
	for i := range def.Steps {
		def.Steps[i].Run = nil
	}
	startWorker(t, ts, "limits", worker.Workflow{Definition: def, Run: map[string]worker.StepFunc{
		"begin":  func(context.Context, worker.Context, engine.Event) error { return nil },
		"finish": finish,
	}})
	workersServing(t, ts, "limited-remote", 1)
	startFor(t, c, "limited-remote", "g1", "acme")
	if h := startFor(t, c, "limited-remote", "g2", "acme"); h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED {
		t.Fatalf("g2: %v, want queued", h.GetStatus())
	}
	sendGo(t, c, "g2", 2)
	sendGo(t, c, "g1", 1)
	h := waitSlot(t, c, "g2", wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED, 0)
	if h.GetResult().GetFields()["n"].GetNumberValue() != 2 {
		t.Fatalf("g2 ended with %v", h.GetResult())
	}
}

// TestConcurrencySlotOfEndedHandlerFreed: a handler ends but its slot's
// release fails (the store refuses it: as if the server died in between),
// so the next one stays queued; after a restart, the start-up reconcile
// frees the ended handler's slot and admits it.
func TestConcurrencySlotOfEndedHandlerFreed(t *testing.T) {
	dir := t.TempDir()
	wfs := append(testWorkflows(), perCustomer("limited", engine.Concurrency{Key: "customer", Max: 1}))
	var releases atomic.Int64
	ts := startServer(t, serverConfig{dir: dir, workflows: wfs, options: func(o *server.Options) {
		fs := faultstore.New(o.Store)
		fs.Update(func(f *faultstore.Funcs) {
			f.UpdateSlotsFunc = func(ctx context.Context, k persistence.SlotKey, c persistence.SlotChange) (persistence.SlotResult, error) {
				if c.Release != "" {
					releases.Add(1)
					return persistence.SlotResult{}, fmt.Errorf("%w: the test refuses releases", persistence.ErrUnavailable)
				}
				return fs.Inner().UpdateSlots(ctx, k, c)
			}
		})
		o.Store = fs
	}})
	c := ts.client()
	startFor(t, c, "limited", "e1", "acme")
	startFor(t, c, "limited", "e2", "acme")
	sendGo(t, c, "e1", 1)
	waitSlot(t, c, "e1", wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED, 0)
	testwait.For(t, "the release tried", func() bool { return releases.Load() > 0 })
	waitSlot(t, c, "e2", wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED, 1)
	ts.stop()

	ts = startServer(t, serverConfig{dir: dir, workflows: wfs})
	waitSlot(t, ts.client(), "e2", wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING, 0)
}
