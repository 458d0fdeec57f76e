package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testlog"

	"github.com/wfd-dev/wfd/cli"
	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/clients/go/worker"
)

// freeAddr is a loopback address no one listens on, for a server that
// must come back on the same address.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// serveAt runs "wfd serve" on addr over the data in dir until stop is
// called (as a SIGTERM would end it: the command's context ends), which
// checks that it stopped cleanly.
func serveAt(t *testing.T, addr, dir string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &testlog.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, []string{"serve", "--addr", addr, "--data", dir, "--log-format", "json", "--grace", "2s"}, io.Discard, logs)
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited with %d; logs:\n%s", code, logs)
		}
	}
	t.Cleanup(stop)
	eventually(t, "serve logs listening on "+addr, func() bool {
		for line := range strings.Lines(logs.String()) {
			var entry struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "listening" && entry.Addr == addr {
				return true
			}
		}
		select {
		case code := <-done:
			stopped = true
			t.Fatalf("serve exited with %d; logs:\n%s", code, logs)
		default:
		}
		return false
	})
	return stop
}

// workerListed says whether `wfd workers` lists a worker called name.
func workerListed(t *testing.T, addr, name string) bool {
	t.Helper()
	for line := range strings.Lines(ok(t, "workers", "--json", "--addr", addr)) {
		var info wfdv1.WorkerInfo
		if protojson.Unmarshal([]byte(line), &info) == nil && info.GetName() == name {
			return true
		}
	}
	return false
}

// TestWorkerReconnectsAcrossARestart: wfd is stopped and started again on
// the same address and data while a Go worker is connected and a handler
// of the worker's workflow is parked. Nothing touches the worker: it
// reconnects on its own, the handler is restored, and the event sent after
// the restart completes it.
func TestWorkerReconnectsAcrossARestart(t *testing.T) {
	addr, dir := freeAddr(t), t.TempDir()
	stop := serveAt(t, addr, dir)

	c, err := client.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	w, err := worker.New(c.Conn(), worker.Options{Name: "survivor", MaxRuns: 2}, approvalWorkflow("approval-restart"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var runErr error
	ended := make(chan struct{})
	go func() { runErr = w.Run(ctx); close(ended) }()
	defer func() {
		cancel()
		<-ended
		if runErr != nil {
			t.Errorf("worker: %v", runErr)
		}
	}()
	eventually(t, "wfd workers lists the worker", func() bool { return workerListed(t, addr, "survivor") })

	h := field(ok(t, "run", "approval-restart", "--addr", addr))
	eventually(t, "the handler is idle", func() bool {
		var got wfdv1.Handler
		return protojson.Unmarshal([]byte(ok(t, "get", h, "--json", "--addr", addr)), &got) == nil && got.GetIdle() != nil
	})

	stop()
	serveAt(t, addr, dir)
	// The event goes first: the handler is restored from the store and its
	// re-run waits for a worker if the worker is not back yet.
	ok(t, "send", h, "approval", `{"approved": true}`, "--addr", addr)
	eventually(t, "the handler completes with the decision", func() bool {
		select {
		case <-ended:
			t.Fatalf("the worker ended: %v", runErr)
		default:
		}
		var got wfdv1.Handler
		if protojson.Unmarshal([]byte(ok(t, "get", h, "--json", "--addr", addr)), &got) != nil {
			return false
		}
		return got.GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED &&
			got.GetResult().GetFields()["approved"].GetBoolValue()
	})
	if !workerListed(t, addr, "survivor") {
		t.Fatalf("the restarted server does not list the worker that completed the handler")
	}
	select {
	case <-ended:
		t.Fatalf("the worker ended: %v", runErr)
	default:
	}
}
