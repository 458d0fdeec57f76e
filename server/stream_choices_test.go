package server_test

import (
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
)

// releasedAndAnswered runs an approval through a release, a restore and its
// answer, and returns its id.
func releasedAndAnswered(t *testing.T, c wfdv1connect.WorkflowServiceClient) string {
	t.Helper()
	id := idleApproval(t, c).GetHandlerId()
	if _, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "approval", Data: st(t, map[string]any{"approved": true})}}); err != nil {
		t.Fatal(err)
	}
	return id
}

// readStream reads a stream until it ends: its first heartbeat and its records.
func readStream(t *testing.T, c wfdv1connect.WorkflowServiceClient, req *wfdv1.StreamEventsRequest, onFirst func(*wfdv1.Heartbeat)) []*wfdv1.Record {
	t.Helper()
	s, err := c.StreamEvents(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	var out []*wfdv1.Record
	first := true
	for s.Receive() {
		if hb := s.Msg().GetHeartbeat(); hb != nil && first && onFirst != nil {
			onFirst(hb)
		}
		first = false
		if r := s.Msg().GetRecord(); r != nil {
			out = append(out, r)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return out
}

func isInternal(r *wfdv1.Record) bool {
	return r.GetEventWritten() == nil && r.GetHandlerFinished() == nil
}

// TestStreamLeavesOutInternal: by default a stream carries the events the
// steps write and the terminal record; include_internal adds the rest.
func TestStreamLeavesOutInternal(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	id := releasedAndAnswered(t, c)

	all := readStream(t, c, &wfdv1.StreamEventsRequest{HandlerId: id, IncludeInternal: true}, nil)
	var want []uint64
	kinds := map[string]bool{}
	for i, r := range all {
		if r.GetSeq() != uint64(i+1) {
			t.Fatalf("with include_internal record %d has seq %d", i, r.GetSeq())
		}
		if isInternal(r) {
			kinds[string(r.ProtoReflect().WhichOneof(r.ProtoReflect().Descriptor().Oneofs().ByName("kind")).Name())] = true
			continue
		}
		want = append(want, r.GetSeq())
	}
	for _, k := range []string{"step_state_changed", "idle_changed", "handler_released", "handler_restored"} {
		if !kinds[k] {
			t.Errorf("include_internal stream has no %s record (has %v)", k, kinds)
		}
	}

	for _, after := range []uint64{0, 2} {
		var got []uint64
		for _, r := range readStream(t, c, &wfdv1.StreamEventsRequest{HandlerId: id, AfterSeq: after}, nil) {
			if isInternal(r) {
				t.Errorf("the default stream carries %v", r)
			}
			got = append(got, r.GetSeq())
		}
		var wantAfter []uint64
		for _, s := range want {
			if s > after {
				wantAfter = append(wantAfter, s)
			}
		}
		if len(got) != len(wantAfter) || len(got) == 0 || got[len(got)-1] != all[len(all)-1].GetSeq() {
			t.Errorf("after %d: the default stream has records %v, want %v", after, got, wantAfter)
		}
	}
}

// TestStreamFromHead: a from_head stream skips what was recorded before it
// subscribed (its first heartbeat says where it starts) and follows the
// rest; together with after_seq it is refused.
func TestStreamFromHead(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	id := idleApproval(t, c).GetHandlerId()

	s, err := c.StreamEvents(ctxT(t), &wfdv1.StreamEventsRequest{HandlerId: id, FromHead: true, IncludeInternal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if !s.Receive() || s.Msg().GetHeartbeat() == nil {
		t.Fatalf("no first heartbeat: %v %v", s.Msg(), s.Err())
	}
	head := s.Msg().GetHeartbeat().GetLastSeq()
	if head < 3 {
		t.Fatalf("the head of an idle approval is %d", head)
	}
	// Subscribed (the first heartbeat says so): what the answer brings follows.
	if _, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "approval", Data: st(t, map[string]any{"approved": true})}}); err != nil {
		t.Fatal(err)
	}
	var got []*wfdv1.Record
	for s.Receive() {
		if r := s.Msg().GetRecord(); r != nil {
			got = append(got, r)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0].GetSeq() != head+1 || got[len(got)-1].GetHandlerFinished() == nil {
		t.Fatalf("from_head after %d streamed %v", head, got)
	}

	// A finished handler's stream from the head has nothing to send.
	var end uint64
	if rest := readStream(t, c, &wfdv1.StreamEventsRequest{HandlerId: id, FromHead: true}, func(hb *wfdv1.Heartbeat) { end = hb.GetLastSeq() }); len(rest) != 0 || end != got[len(got)-1].GetSeq() {
		t.Errorf("from_head of a finished handler: head %d, records %v", end, rest)
	}

	bad, err := c.StreamEvents(ctxT(t), &wfdv1.StreamEventsRequest{HandlerId: id, FromHead: true, AfterSeq: 1})
	if err != nil {
		t.Fatal(err)
	}
	for bad.Receive() {
		t.Errorf("from_head with after_seq sent %v", bad.Msg())
	}
	wantCode(t, bad.Err(), connect.CodeInvalidArgument, "from_head")
}
