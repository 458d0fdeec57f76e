package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/workflows"
)

// late sleeps before it waits for its key, so an event can be published
// after the start and before the wait.
func late() engine.Workflow {
	return engine.Workflow{Name: "late", Steps: []engine.Step{{Name: "s", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
		Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			if err := sc.Sleep(300 * time.Millisecond); err != nil {
				return err
			}
			p, err := sc.WaitForKey(in.Data.Fields["key"].GetStringValue(), engine.KeyOptions{})
			if err != nil {
				return err
			}
			return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"data": structpb.NewStructValue(p.Data)}})
		}}}}
}

func publish(t *testing.T, c interface {
	PublishEvent(context.Context, *wfdv1.PublishEventRequest) (*wfdv1.PublishEventResponse, error)
}, key string, data map[string]any, handler string) *wfdv1.PublishEventResponse {
	t.Helper()
	res, err := c.PublishEvent(ctxT(t), &wfdv1.PublishEventRequest{Key: key, Data: st(t, data), HandlerId: handler})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestPublishedEvents(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: append(workflows.All(), late())})
	c := ts.client()

	// Published before the wait (after the start): taken at once.
	h := run(t, c, "late", map[string]any{"key": "k1"})
	if res := publish(t, c, "k1", map[string]any{"n": 1.0}, ""); res.Woken != 0 || res.Seq == 0 || res.EventId == "" {
		t.Fatalf("publish with nobody waiting: %v", res)
	}
	recs := collect(t, c, h.HandlerId, 0)
	if fin := recs[len(recs)-1].GetHandlerFinished(); fin.GetResult().Fields["data"].GetStructValue().Fields["n"].GetNumberValue() != 1 {
		t.Fatalf("finished %v", fin)
	}

	// Published after the wait: the order is woken, even released.
	o := run(t, c, "order", map[string]any{"order_id": "A1"})
	waitIdle(t, c, o.HandlerId)
	release(t, c, o.HandlerId)
	// An event before the handler started does not count.
	old := run(t, c, "order", map[string]any{"order_id": "A2"})
	waitIdle(t, c, old.HandlerId)
	if res := publish(t, c, workflows.PaymentKey("A1"), map[string]any{"amount": 9.5}, ""); res.Woken != 1 {
		t.Fatalf("woken %d, want 1", res.Woken)
	}
	recs = collect(t, c, o.HandlerId, 0)
	if fin := recs[len(recs)-1].GetHandlerFinished(); fin.GetResult().Fields["payment"].GetStructValue().Fields["amount"].GetNumberValue() != 9.5 {
		t.Fatalf("finished %v", fin)
	}
	// Addressed to another handler: not delivered.
	if res := publish(t, c, workflows.PaymentKey("A2"), nil, o.HandlerId); res.Woken != 0 {
		t.Fatalf("an event for another handler woke %d", res.Woken)
	}
	if res := publish(t, c, workflows.PaymentKey("A2"), nil, old.HandlerId); res.Woken != 1 {
		t.Fatalf("an event for this handler woke %d", res.Woken)
	}
	// Across a restart: a released order is woken by a publication, and a
	// publication before the restart is still found by a later wait.
	dir := ts.dir
	later := run(t, c, "order", map[string]any{"order_id": "R1"})
	waitIdle(t, c, later.HandlerId)
	release(t, c, later.HandlerId)
	ts.stop()
	ts = startServer(t, serverConfig{dir: dir, workflows: append(workflows.All(), late())})
	c = ts.client()
	if res := publish(t, c, workflows.PaymentKey("R1"), map[string]any{"after": "restart"}, ""); res.Woken != 1 {
		t.Fatalf("woken after restart: %d", res.Woken)
	}
	if k := kinds(collect(t, c, later.HandlerId, 0)); !strings.HasSuffix(k, "COMPLETED") {
		t.Fatalf("stream after restart: %s", k)
	}

	// Idempotent by event id.
	a, err := c.PublishEvent(ctxT(t), &wfdv1.PublishEventRequest{Key: "x", EventId: "ev-1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.PublishEvent(ctxT(t), &wfdv1.PublishEventRequest{Key: "x", EventId: "ev-1"})
	if err != nil || a.Seq != b.Seq {
		t.Fatalf("republished: %v %v (%v)", a, b, err)
	}
	_, err = c.PublishEvent(ctxT(t), &wfdv1.PublishEventRequest{})
	wantCode(t, err, connect.CodeInvalidArgument, "key is required")
}

// TestPublishWakesMany: one publication wakes every released handler that
// waits for its key.
func TestPublishWakesMany(t *testing.T) {
	n := 1000
	if raceEnabled {
		n = 200
	}
	ts := startServer(t, serverConfig{maxIdle: 10})
	c := ts.client(connect.WithGRPC())
	ids := make(chan string, n)
	sem := make(chan struct{}, 32)
	for range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "order", Input: st(t, map[string]any{"order_id": "shared"})})
			if err != nil {
				t.Error(err)
			}
			ids <- res.GetHandler().GetHandlerId()
		}()
	}
	var all []string
	for range n {
		all = append(all, <-ids)
	}
	// Wait until they all wait (most of them released).
	testwait.Until(t, func() error {
		res, err := c.ListHandlers(ctxT(t), &wfdv1.ListHandlersRequest{Workflow: "order", IdleOnly: true, PageSize: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Handlers) != n {
			return fmt.Errorf("%d of %d handlers wait", len(res.Handlers), n)
		}
		return nil
	})
	res := publish(t, c, workflows.PaymentKey("shared"), map[string]any{"paid": true}, "")
	if int(res.Woken) != n {
		t.Fatalf("woke %d of %d", res.Woken, n)
	}
	for _, id := range all[:5] {
		if k := kinds(collect(t, c, id, 0)); !strings.HasSuffix(k, "COMPLETED") {
			t.Fatalf("%s: %s", id, k)
		}
	}
	// The woken handlers run their steps after the publication returns.
	testwait.Until(t, func() error {
		list, err := c.ListHandlers(ctxT(t), &wfdv1.ListHandlersRequest{Workflow: "order", Statuses: []wfdv1.HandlerStatus{wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED}, PageSize: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Handlers) != n {
			return fmt.Errorf("%d of %d completed", len(list.Handlers), n)
		}
		return nil
	})
}
