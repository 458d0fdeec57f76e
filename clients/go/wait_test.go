package client_test

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"

	client "github.com/wfd-dev/wfd/clients/go"
)

// TestWait: Run and Send with a wait, and Wait, answer with the handler
// once it finished, or running when the wait ends; a wait longer than the
// client's default timeout is not cut short by it.
func TestWait(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr, client.WithTimeout(100*time.Millisecond))
	h, err := c.Run(ctxT(t), "echo", map[string]any{"x": 1}, client.WithWait(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("Run with WithWait returned %v", h)
	}
	a, err := c.Run(ctxT(t), "approval", nil)
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, c, a.GetHandlerId())
	// No deadline on the context: the client's 100 ms timeout must not
	// end a 300 ms wait.
	got, err := c.Wait(t.Context(), a.GetHandlerId(), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
		t.Fatalf("Wait on a waiting approval returned %v", got)
	}
	got, err = c.Send(ctxT(t), a.GetHandlerId(), "approval", map[string]any{"approved": true}, client.WithSendWait(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("Send with WithSendWait returned %v", got)
	}
	if got, err = c.Wait(ctxT(t), a.GetHandlerId(), 0); err != nil || got.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("Wait on a completed handler: %v, %v", got, err)
	}
	if _, err := c.Wait(ctxT(t), "nope", time.Second); status.Code(err) != codes.NotFound {
		t.Fatalf("Wait on an unknown handler: %v", err)
	}
}

// TestIdentity: a server without authentication says so.
func TestIdentity(t *testing.T) {
	ts := startServer(t)
	id, err := dial(t, ts.addr).Identity(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if id.GetAuthentication() || id.GetSubject() != "" {
		t.Fatalf("identity %v", id)
	}
}

// TestStreamDefaultLeavesOutInternal: Stream yields the events and the end
// unless StreamInternal.
func TestStreamDefaultLeavesOutInternal(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	h, err := c.Run(ctxT(t), "approval", nil)
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, c, h.GetHandlerId())
	if _, err := c.Send(ctxT(t), h.GetHandlerId(), "approval", map[string]any{"approved": true}); err != nil {
		t.Fatal(err)
	}
	all := drain(t, c, h.GetHandlerId(), 0)
	var want []uint64
	for _, r := range all {
		if r.GetEventWritten() != nil || r.GetHandlerFinished() != nil {
			want = append(want, r.GetSeq())
		}
	}
	var got []uint64
	for rec, err := range c.Stream(ctxT(t), h.GetHandlerId(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rec.GetSeq())
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(want) >= len(all) {
		t.Fatalf("default stream has records %v, want %v (of %d)", got, want, len(all))
	}
}

// TestStreamFromHeadResumes: a from-head stream cut while it follows
// resumes after the head it started at, with the same choices, and
// yields what happened while it was away.
func TestStreamFromHeadResumes(t *testing.T) {
	ts := startServer(t)
	direct := dial(t, ts.addr)
	p := startProxy(t, ts.addr)
	// Patient enough to outlast the refused reconnects below.
	c := dial(t, p.addr(), client.WithRetry(client.RetryPolicy{MaxAttempts: 1000, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}))
	h, err := direct.Run(ctxT(t), "approval", nil)
	if err != nil {
		t.Fatal(err)
	}
	head := waitIdle(t, direct, h.GetHandlerId()).GetLastSeq()

	recs := make(chan *wfdv1.Record, 100)
	errs := make(chan error, 1)
	go func() {
		defer close(recs)
		for rec, err := range c.Stream(ctxT(t), h.GetHandlerId(), 0, client.StreamFromHead(), client.StreamInternal()) {
			if err != nil {
				errs <- err
				return
			}
			recs <- rec
		}
	}()
	testwait.Until(t, func() error {
		s, err := direct.Stats(ctxT(t))
		if err != nil {
			return err
		}
		if s.GetStreams() != 1 {
			return fmt.Errorf("%d streams", s.GetStreams())
		}
		return nil
	})
	// Cut the stream and keep it away until the handler has finished.
	p.refuseNext(1 << 30)
	p.sever()
	if _, err := direct.Send(ctxT(t), h.GetHandlerId(), "approval", map[string]any{"approved": true}, client.WithSendWait(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	p.refuseNext(0)

	var got []*wfdv1.Record
	for r := range recs {
		got = append(got, r)
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	all := drain(t, direct, h.GetHandlerId(), 0)
	if len(got) == 0 || len(got) != len(all)-int(head) || got[0].GetSeq() != head+1 || got[len(got)-1].GetHandlerFinished() == nil {
		t.Fatalf("from head %d the stream yielded %v; all records: %v", head, got, all)
	}
	if p.forwarded() < 2 {
		t.Errorf("the stream never reconnected")
	}
}
