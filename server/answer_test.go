package server_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// sameAsStored checks that a call's answer is the handler as the store
// holds it now (the test makes sure nothing changes it in between).
func sameAsStored(t *testing.T, c wfdv1connect.WorkflowServiceClient, call string, got *wfdv1.Handler) {
	t.Helper()
	res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: got.GetHandlerId()})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, res.Handler) {
		t.Fatalf("%s answered\n%v\nGetHandler then\n%v", call, got, res.Handler)
	}
}

// TestAnswersAreWhatWasCommitted: RunWorkflow and SendEvent answer with
// the handler as the commit of their change stored it (the journal keeps
// it for them): status, stream position and idle waiters equal what
// GetHandler reads next. A linger far longer than the steps take holds
// every change back until no step runs, so each call's change is the
// handler's last until the next call.
func TestAnswersAreWhatWasCommitted(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows(), linger: time.Minute})
	c := ts.client()

	for _, id := range []string{"", "named"} {
		res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: id})
		if err != nil {
			t.Fatal(err)
		}
		h := res.Handler
		if w := h.GetIdle().GetWaiters(); h.Status != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING || h.LastSeq == 0 ||
			len(w) != 1 || w[0].EventType != "approval" || (id != "" && h.HandlerId != id) {
			t.Fatalf("RunWorkflow answered %v, want a running handler idle on its approval", h)
		}
		sameAsStored(t, c, "RunWorkflow", h)
		if id != "" {
			release(t, c, id) // the answer to an event that loads the handler
		}
		got, err := sendEv(t, c, h.HandlerId, "approval", map[string]any{"approved": true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || got.LastSeq <= h.LastSeq {
			t.Fatalf("SendEvent answered %v, want it completed", got)
		}
		sameAsStored(t, c, "SendEvent", got)
	}
	if n := ts.srv.Watched(); n != 0 {
		t.Fatalf("the journal keeps metadata of %d handlers nobody waits for", n)
	}
}

// TestConcurrentSendsAnswerTheirOwnChange sends events to one handler from
// many callers at once: each answer covers at least the caller's own
// event (its "got" record is at or before the answer's stream position),
// and the latest answer is what the store holds once they are all done.
func TestConcurrentSendsAnswerTheirOwnChange(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows(), linger: time.Minute})
	c := ts.client()
	const n = 32
	h := run(t, c, "counter", map[string]any{"want": n + 1})
	answers := make([]*wfdv1.Handler, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: h.HandlerId,
				Event: &wfdv1.Event{Type: "inc", Data: st(t, map[string]any{"n": i})}})
			if err != nil {
				t.Errorf("SendEvent %d: %v", i, err)
				return
			}
			answers[i] = res.Handler
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	latest := answers[0]
	for _, a := range answers {
		if a.Status != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING || a.Idle == nil {
			t.Fatalf("SendEvent answered %v, want it running and idle", a)
		}
		if a.LastSeq > latest.LastSeq {
			latest = a
		}
	}
	sameAsStored(t, c, "the latest SendEvent", latest)
	// One more event completes the counter, so its stream can be read to
	// the end.
	if _, err := sendEv(t, c, h.HandlerId, "inc", map[string]any{"n": n}); err != nil {
		t.Fatal(err)
	}
	seqOf := map[int]uint64{}
	for _, r := range collect(t, c, h.HandlerId, 0) {
		if e := r.GetEventWritten(); e != nil && e.Type == "got" {
			seqOf[int(e.Data.Fields["n"].GetNumberValue())] = r.Seq
		}
	}
	for i, a := range answers {
		if seq, ok := seqOf[i]; !ok || a.LastSeq < seq {
			t.Fatalf("event %d (recorded at %d, found %v) answered at %d, before its record", i, seq, ok, a.LastSeq)
		}
	}
	if n := ts.srv.Watched(); n != 0 {
		t.Fatalf("the journal keeps metadata of %d handlers nobody waits for", n)
	}
}

// TestRefusedEventSameLiveOrReleased: an event a handler does not accept
// is refused with the engine's message, whether the handler is in memory
// or released (then without loading it).
func TestRefusedEventSameLiveOrReleased(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client()
	h := run(t, c, "approval", nil)
	waitIdle(t, c, h.HandlerId)
	want := fmt.Sprintf(`invalid event: workflow "approval" does not accept "nonsense" from outside (it accepts none) and no step of handler %s waits for it`,
		h.HandlerId)
	for _, where := range []string{"in memory", "released"} {
		if where == "released" {
			release(t, c, h.HandlerId)
		}
		_, err := sendEv(t, c, h.HandlerId, "nonsense", nil)
		var ce *connect.Error
		if !errorsAs(err, &ce) || ce.Code() != connect.CodeInvalidArgument || ce.Message() != want {
			t.Fatalf("%s: SendEvent(nonsense) = %v\nwant InvalidArgument %q", where, err, want)
		}
	}
}

// TestReservedTypeRefusedWhateverTheHandler: a client may not send the
// types wfd sends itself, to a running handler or a finished one.
func TestReservedTypeRefusedWhateverTheHandler(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client()
	idle := run(t, c, "approval", nil)
	waitIdle(t, c, idle.HandlerId)
	done := run(t, c, "echo", nil)
	testwait.Until(t, func() error {
		if g := getH(t, c, done.HandlerId); g.Status != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
			return fmt.Errorf("echo is %v", g.Status)
		}
		return nil
	})
	for _, id := range []string{idle.HandlerId, done.HandlerId} {
		for _, typ := range []string{"wfd.task", "wfd.key", "wfd.child", "wfd.anything"} {
			_, err := sendEv(t, c, id, typ, nil)
			wantCode(t, err, connect.CodeInvalidArgument, "reserved")
		}
	}
}
