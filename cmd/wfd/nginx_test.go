//go:build linux

package main_test

import (
	"context"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// quietFor is how long the stream stays quiet through nginx: longer than
// nginx's 60 s read and send timeouts, which the test puts back in place
// of the example's 300 s, so that only wfd's heartbeats (every 15 s) keep
// the stream open.
const quietFor = 70 * time.Second

// TestNginxGRPCProxy runs deploy/nginx/wfd.conf with Debian's nginx in
// front of a real `wfd serve` (plaintext on loopback), and a gRPC client
// over TLS to nginx, trusting a CA made for the test:
//
//  0. Connect and gRPC-Web clients, over HTTP/2 and HTTP/1.1, get through
//     too.
//  1. RunWorkflow starts an approval handler and StreamEvents follows it
//     through nginx; the handler parks and the stream stays quiet (but
//     for heartbeats) for 70 s, past nginx's 60 s timeouts. The stream is
//     still open: the answer's records arrive on it, and it ends cleanly
//     with the handler.
//  2. A second approval handler is followed, and wfd gets SIGTERM: the
//     stream ends with Unavailable through nginx, naming the sequence
//     number to resume after; a call while wfd is gone is Unavailable
//     (nginx's 502). wfd restarts on the same data and address; the
//     client resumes the stream after that sequence number, answers, and
//     gets the records that follow, none twice.
//
// Slow by nature (the quiet minute): skipped with -short.
func TestNginxGRPCProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("keeps a stream quiet through nginx for 70 s")
	}
	nginxBinary(t) // skip early when absent
	bin := buildWfd(t)
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), quietFor+4*testwait.Timeout)
	defer cancel()

	// No idle release: a release writes a record, and the stream must
	// stay quiet.
	wfd := startWfd(t, bin, data, "--idle-timeout", "0")
	proxy := startNginx(t, wfd.addr,
		"grpc_read_timeout 300s;", "grpc_read_timeout 60s;",
		"grpc_send_timeout 300s;", "grpc_send_timeout 60s;")
	c := proxy.client()

	t.Run("protocols", func(t *testing.T) {
		// Besides gRPC: Connect and gRPC-Web, over HTTP/2 and HTTP/1.1
		// (browsers' fetch may use either).
		for _, tc := range []struct {
			name  string
			http1 bool
			opts  []connect.ClientOption
		}{
			{"connect h2", false, nil},
			{"grpc-web h2", false, []connect.ClientOption{connect.WithGRPCWeb()}},
			{"connect http/1.1", true, nil},
			{"grpc-web http/1.1", true, []connect.ClientOption{connect.WithGRPCWeb()}},
		} {
			hc := proxy.http
			if tc.http1 {
				hc = proxy.http1()
			}
			res, err := wfdv1connect.NewWorkflowServiceClient(hc, proxy.url(), tc.opts...).ListWorkflows(ctx, &wfdv1.ListWorkflowsRequest{})
			if err != nil || len(res.GetWorkflows()) == 0 {
				t.Errorf("%s: ListWorkflows through nginx: %v, %v", tc.name, res, err)
			}
		}
		// The plain HTTP paths reach wfd over HTTP/1.1: through nginx,
		// the answer wfd gives directly.
		for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
			direct := httpStatus(ctx, t, wfd.http, "http://"+wfd.addr+path)
			if got := httpStatus(ctx, t, proxy.http1(), proxy.url()+path); got != direct {
				t.Errorf("GET %s through nginx: %d, wfd answers %d", path, got, direct)
			}
		}
	})

	t.Run("quiet stream", func(t *testing.T) {
		const id = "nginx-quiet"
		if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: id, Input: input(1)}); err != nil {
			t.Fatalf("RunWorkflow through nginx: %v", err)
		}
		last := waitParked(ctx, t, c, id)
		s := follow(ctx, t, c, id, 0)
		s.until(t, last)

		quietSince := time.Now()
		heartbeats := 0
		for time.Since(quietSince) < quietFor {
			m := s.next(t)
			if rec := m.GetRecord(); rec != nil {
				t.Fatalf("a record on a quiet stream: %v", rec)
			}
			heartbeats++
			if got := m.GetHeartbeat().GetLastSeq(); got != last {
				t.Fatalf("heartbeat last_seq %d, want %d", got, last)
			}
		}
		t.Logf("quiet for %v through nginx: %d heartbeats", time.Since(quietSince).Round(time.Second), heartbeats)

		if _, err := c.SendEvent(ctx, answer(id)); err != nil {
			t.Fatalf("SendEvent through nginx: %v", err)
		}
		rec := s.record(t)
		if rec.GetSeq() != last+1 {
			t.Fatalf("after the answer: record %d, want %d", rec.GetSeq(), last+1)
		}
		for rec.GetHandlerFinished() == nil {
			rec = s.record(t)
		}
		if s.more(t) {
			t.Fatalf("the stream goes on after HandlerFinished: %v", s.msg())
		}
	})

	t.Run("drain", func(t *testing.T) {
		const id = "nginx-drain"
		if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: id, Input: input(2)}); err != nil {
			t.Fatalf("RunWorkflow through nginx: %v", err)
		}
		last := waitParked(ctx, t, c, id)
		s := follow(ctx, t, c, id, 0)
		s.until(t, last)

		if err := wfd.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		for s.more(t) { // a heartbeat may come first
			if s.msg().GetRecord() != nil {
				t.Fatalf("after SIGTERM: %v, want the end of the stream", s.msg())
			}
		}
		err := s.stream.Err()
		if connect.CodeOf(err) != connect.CodeUnavailable || !strings.Contains(err.Error(), "resume after seq") {
			t.Fatalf("the stream ended with %v, want Unavailable naming the seq to resume after", err)
		}
		select {
		case <-wfd.exited:
		case <-time.After(testwait.Timeout):
			t.Fatalf("wfd serve did not stop after SIGTERM\n%s", wfd.out.String())
		}
		if wfd.err != nil {
			t.Fatalf("wfd serve exited with %v\n%s", wfd.err, wfd.out.String())
		}
		if _, err := c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id}); connect.CodeOf(err) != connect.CodeUnavailable {
			t.Fatalf("GetHandler through nginx with wfd gone: %v, want Unavailable", err)
		}

		// Resume elsewhere: a new wfd on the same store, where nginx
		// expects it.
		wfd = startWfdAt(t, bin, data, wfd.addr, "--idle-timeout", "0")
		var resumed *stream
		testwait.Until(t, func() error {
			if _, err := c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id}); err != nil {
				return err
			}
			resumed = follow(ctx, t, c, id, last)
			return nil
		})
		if _, err := c.SendEvent(ctx, answerWithKey(id, "nginx-drain-answer")); err != nil {
			t.Fatalf("SendEvent through nginx after the restart: %v", err)
		}
		seq := last
		for {
			rec := resumed.record(t)
			if rec.GetSeq() != seq+1 {
				t.Fatalf("resumed after %d: record %d, want %d", last, rec.GetSeq(), seq+1)
			}
			seq = rec.GetSeq()
			if rec.GetHandlerFinished() != nil {
				break
			}
		}
		wfd.stop(t)
	})
}

// httpStatus GETs url and returns the status code.
func httpStatus(ctx context.Context, t *testing.T, hc *http.Client, url string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_ = res.Body.Close() // only the status matters
	return res.StatusCode
}

// waitParked waits until the handler is running and idle (waiting for its
// answer) and returns its last sequence number.
func waitParked(ctx context.Context, t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) uint64 {
	t.Helper()
	var h *wfdv1.Handler
	testwait.For(t, id+" idle", func() bool {
		h = get(ctx, t, c, id)
		return h.GetIdle() != nil
	})
	return h.GetLastSeq()
}

// stream reads a StreamEvents stream on its own goroutine, so that a test
// can tell a quiet stream from a closed one.
type stream struct {
	stream *connect.ServerStreamForClient[wfdv1.StreamEventsResponse]
	msgs   chan *wfdv1.StreamEventsResponse
	last   *wfdv1.StreamEventsResponse
}

// follow opens StreamEvents after seq.
func follow(ctx context.Context, t *testing.T, c wfdv1connect.WorkflowServiceClient, id string, after uint64) *stream {
	t.Helper()
	ss, err := c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: id, AfterSeq: after, IncludeInternal: true})
	if err != nil {
		t.Fatalf("StreamEvents %s: %v", id, err)
	}
	s := &stream{stream: ss, msgs: make(chan *wfdv1.StreamEventsResponse)}
	go func() {
		defer close(s.msgs)
		for ss.Receive() {
			s.msgs <- ss.Msg()
		}
	}()
	t.Cleanup(func() {
		_ = ss.Close()
		for m := range s.msgs { // lets the reader end
			_ = m
		}
	})
	return s
}

// more waits for the next message and says whether there was one (false:
// the stream ended; stream.Err says how).
func (s *stream) more(t *testing.T) bool {
	t.Helper()
	select {
	case m, ok := <-s.msgs:
		s.last = m
		return ok
	case <-time.After(testwait.Timeout):
		t.Fatal("no message and no end on the stream")
		return false
	}
}

func (s *stream) msg() *wfdv1.StreamEventsResponse { return s.last }

// next returns the next message, failing the test if the stream ended.
func (s *stream) next(t *testing.T) *wfdv1.StreamEventsResponse {
	t.Helper()
	if !s.more(t) {
		t.Fatalf("the stream ended: %v", s.stream.Err())
	}
	return s.last
}

// record returns the next record, passing heartbeats.
func (s *stream) record(t *testing.T) *wfdv1.Record {
	t.Helper()
	for {
		if rec := s.next(t).GetRecord(); rec != nil {
			return rec
		}
	}
}

// until reads records up to seq.
func (s *stream) until(t *testing.T, seq uint64) {
	t.Helper()
	for {
		rec := s.record(t)
		if rec.GetSeq() > seq {
			t.Fatalf("record %d past %d", rec.GetSeq(), seq)
		}
		if rec.GetSeq() == seq {
			return
		}
	}
}
