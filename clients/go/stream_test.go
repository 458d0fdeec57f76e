package client_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

// TestStreamResumesDuringReplay cuts the connection again and again, in
// the middle of messages, while Stream replays a finished handler.
func TestStreamResumesDuringReplay(t *testing.T) {
	ts := startServer(t)
	direct := dial(t, ts.addr)
	h, err := direct.Run(ctxT(t), "fanin", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := drain(t, direct, h.GetHandlerId(), 0)

	p := startProxy(t, ts.addr)
	// About 170 bytes of HTTP/2 set-up and 55 per record: each connection
	// carries two or three records and part of the next.
	p.cutAfter(300)
	c := dial(t, p.addr())
	sameRecords(t, drain(t, c, h.GetHandlerId(), 0), want)
	if n := p.forwarded(); n < 3 {
		t.Errorf("%d connections for %d records: the cuts did not happen", n, len(want))
	}
}

// TestStreamResumesWhileFollowing cuts the connection while the stream
// waits for a live handler, which then finishes.
func TestStreamResumesWhileFollowing(t *testing.T) {
	ts := startServer(t)
	direct := dial(t, ts.addr)
	p := startProxy(t, ts.addr)
	c := dial(t, p.addr())
	h, err := c.Run(ctxT(t), "approval", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []*wfdv1.Record
	cuts := 0
	for rec, err := range c.Stream(ctxT(t), h.GetHandlerId(), 0, client.StreamInternal()) {
		if err != nil {
			t.Fatalf("after %d records: %v", len(got), err)
		}
		got = append(got, rec)
		if rec.GetIdleChanged().GetIdle() {
			// The handler waits for its answer: cut the stream, then
			// answer through another connection.
			p.sever()
			cuts++
			if _, err := direct.Send(ctxT(t), h.GetHandlerId(), "approval", map[string]any{"approved": true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if cuts != 1 {
		t.Fatalf("%d cuts, want 1", cuts)
	}
	sameRecords(t, got, drain(t, direct, h.GetHandlerId(), 0))
	if p.forwarded() < 2 {
		t.Errorf("the stream never reconnected")
	}
}

// TestStreamFollowsRestart follows a handler across a restart of the
// server: the old one ends the stream as it shuts down, the new one
// recovers the handler from the store, and the stream carries on.
func TestStreamFollowsRestart(t *testing.T) {
	old := startServer(t)
	p := startProxy(t, old.addr)
	c := dial(t, p.addr())
	h, err := c.Run(ctxT(t), "approval", nil)
	if err != nil {
		t.Fatal(err)
	}
	var restarted *testServer
	var got []*wfdv1.Record
	for rec, err := range c.Stream(ctxT(t), h.GetHandlerId(), 0, client.StreamInternal()) {
		if err != nil {
			t.Fatalf("after %d records: %v", len(got), err)
		}
		got = append(got, rec)
		if rec.GetIdleChanged().GetIdle() && restarted == nil {
			old.stop()
			restarted = startServer(t, old.dir)
			p.retarget(restarted.addr)
			direct := dial(t, restarted.addr)
			if _, err := direct.Send(ctxT(t), h.GetHandlerId(), "approval", map[string]any{"approved": true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if restarted == nil {
		t.Fatal("the handler never became idle")
	}
	sameRecords(t, got, drain(t, dial(t, restarted.addr), h.GetHandlerId(), 0))
}

// TestStreamGivesUp ends with Unavailable when the server stays away.
func TestStreamGivesUp(t *testing.T) {
	ts := startServer(t)
	p := startProxy(t, ts.addr)
	c := dial(t, p.addr())
	h, err := c.Run(ctxT(t), "approval", nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var last error
	for rec, err := range c.Stream(ctxT(t), h.GetHandlerId(), 0, client.StreamInternal()) {
		if err != nil {
			last = err
			break
		}
		n++
		if rec.GetIdleChanged().GetIdle() {
			p.refuseNext(1000)
			p.sever()
		}
	}
	if status.Code(last) != codes.Unavailable {
		t.Fatalf("stream ended with %v after %d records, want Unavailable", last, n)
	}
}

// TestStreamBreak stops the stream from the loop.
func TestStreamBreak(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	h, err := c.Run(ctxT(t), "approval", nil)
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range c.Stream(ctxT(t), h.GetHandlerId(), 0, client.StreamInternal()) {
		if err != nil {
			t.Fatal(err)
		}
		if rec.GetSeq() == 1 {
			break
		}
		t.Fatalf("record %d after break", rec.GetSeq())
	}
}

// sameRecords fails unless got and want hold the same records in order,
// ending with the terminal one.
func sameRecords(t *testing.T, got, want []*wfdv1.Record) {
	t.Helper()
	checkSeqs(t, got, 0)
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("record %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

func TestStreamAfterTheEnd(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	h, err := c.Run(ctxT(t), "echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for rec, err := range c.Stream(ctxT(t), h.GetHandlerId(), 0, client.StreamInternal()) {
		if err != nil {
			t.Fatal(err)
		}
		last = rec.GetSeq()
	}
	n := 0
	for _, err := range c.Stream(ctxT(t), h.GetHandlerId(), last, client.StreamInternal()) {
		if err != nil {
			t.Fatalf("resuming after the terminal record: %v", err)
		}
		n++
	}
	if n != 0 {
		t.Fatalf("%d records after the terminal one", n)
	}
}
