package server_test

import (
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// TestGetHandlerAtSeq: GetHandler with at_seq answers the handler as its
// stream shows it at that record, folded from the records (issue 28's
// look back): idle and what it waited for before the answer, then
// completed with its result; released while it was; the counter's events
// written so far. A record past the stream's end is OUT_OF_RANGE.
func TestGetHandlerAtSeq(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client()
	h := run(t, c, "counter", map[string]any{"want": 2.0})
	idle := waitIdle(t, c, h.HandlerId)
	release(t, c, h.HandlerId)
	if _, err := sendEv(t, c, h.HandlerId, "inc", map[string]any{"n": 1.0}); err != nil {
		t.Fatal(err)
	}
	if _, err := sendEv(t, c, h.HandlerId, "inc", map[string]any{"n": 2.0}); err != nil {
		t.Fatal(err)
	}
	recs := collect(t, c, h.HandlerId, 0)
	var released, firstGot, last uint64
	for _, r := range recs {
		switch {
		case r.GetHandlerReleased() != nil && released == 0:
			released = r.GetSeq()
		case r.GetEventWritten().GetType() == "got" && firstGot == 0:
			firstGot = r.GetSeq()
		}
		last = r.GetSeq()
	}
	at := func(seq uint64) *wfdv1.HandlerAt {
		t.Helper()
		res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: h.HandlerId, AtSeq: seq})
		if err != nil {
			t.Fatalf("GetHandler at %d: %v", seq, err)
		}
		if res.GetAt().GetSeq() != seq {
			t.Fatalf("at %d answered seq %d", seq, res.GetAt().GetSeq())
		}
		return res.GetAt()
	}

	// At its first idleness: running, idle, the init step ran once.
	a := at(idle.LastSeq)
	if a.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING || a.GetIdle() == nil || a.GetWrittenTotal() != 0 {
		t.Fatalf("at the first idleness: %v", a)
	}
	if len(a.GetSteps()) != 1 || a.GetSteps()[0].GetStep() != "init" || a.GetSteps()[0].GetEnded() != 1 || a.GetSteps()[0].GetRunning() != 0 {
		t.Fatalf("steps at the first idleness: %v", a.GetSteps())
	}
	if !at(released).GetReleased() {
		t.Fatalf("not released at the release record %d", released)
	}
	// At the first "got": one event written, the count step running.
	a = at(firstGot)
	if a.GetWrittenTotal() != 1 || a.GetWritten()[0].GetData().GetFields()["n"].GetNumberValue() != 1 || a.GetReleased() {
		t.Fatalf("at the first got: %v", a)
	}
	// At the end: completed with the result, not idle.
	a = at(last)
	if a.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || a.GetResult().GetFields()["count"].GetNumberValue() != 2 || a.GetIdle() != nil {
		t.Fatalf("at the end: %v", a)
	}
	_, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: h.HandlerId, AtSeq: last + 1})
	wantCode(t, err, connect.CodeOutOfRange, "stream ends at")
}
