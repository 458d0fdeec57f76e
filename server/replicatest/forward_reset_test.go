package replicatest_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/server"
)

// TestReplicaForwardOwnerGone: a forwarded call whose owner goes away
// mid-call (its connection reset, as when the owner is SIGKILLed) answers
// Unavailable, the code clients retry, not Canceled (which says the
// caller gave up). A advertises an address whose connections are reset
// once a request arrives.
func TestReplicaForwardOwnerGone(t *testing.T) {
	url := pgtest.NewDatabase(t)
	reset := startResetter(t)
	a := startReplicaWith(t, url, "a", 30*time.Second, false, func(o *server.Options) { o.Replica.Address = reset })
	b := startReplica(t, url, "b", 30*time.Second)
	ctx := context.Background()
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	if err := b.inc("h1"); connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("inc through b, the owner's connection reset: %v (%v), want Unavailable", connect.CodeOf(err), err)
	}
}

// startResetter listens on a loopback port and resets every connection
// (SO_LINGER 0) once it has read something from it.
func startResetter(t *testing.T) string {
	t.Helper()
	return serveLoopback(t, func(c net.Conn) {
		buf := make([]byte, 64<<10)
		_, _ = c.Read(buf)
		_ = c.(*net.TCPConn).SetLinger(0)
		_ = c.Close()
	})
}

// serveLoopback listens on a loopback port and hands each connection to
// handle, on a goroutine of its own, until the test ends; it returns the
// address.
func serveLoopback(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
			go handle(c)
		}
	}()
	return l.Addr().String()
}

// TestReplicaForwardOwnerSilent: a forwarded call to an owner that takes
// the connection and never answers (a paused process: its kernel accepts
// and buffers, nothing replies) answers Unavailable, which clients retry
// and which reaches the handler's next owner, long before the caller's
// deadline would turn it into DeadlineExceeded.
func TestReplicaForwardOwnerSilent(t *testing.T) {
	url := pgtest.NewDatabase(t)
	silent := startSilent(t)
	a := startReplicaWith(t, url, "a", 30*time.Second, false, func(o *server.Options) { o.Replica.Address = silent })
	b := startReplica(t, url, "b", 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	_, err := b.c.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: "h1", Event: &wfdv1.Event{Type: "inc", Data: &structpb.Struct{}}})
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("inc through b, the owner silent: %v (%v), want Unavailable", connect.CodeOf(err), err)
	}
	var ce *connect.Error
	if !errors.As(err, &ce) || !hasRetryInfo(ce) {
		t.Fatalf("Unavailable without a retry hint: %v", err)
	}
}

// hasRetryInfo reports whether e carries a google.rpc.RetryInfo detail.
func hasRetryInfo(e *connect.Error) bool {
	for _, d := range e.Details() {
		if v, err := d.Value(); err == nil {
			if _, ok := v.(*errdetails.RetryInfo); ok {
				return true
			}
		}
	}
	return false
}

// startSilent listens on a loopback port, reads whatever its connections
// send and never writes a byte.
func startSilent(t *testing.T) string {
	t.Helper()
	return serveLoopback(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
}
