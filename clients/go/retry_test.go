package client_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	client "github.com/wfd-dev/wfd/clients/go"
)

const workflowsMethod = "/wfd.v1.WorkflowService/ListWorkflows"

func TestRetryUnavailable(t *testing.T) {
	ts := startServer(t)
	tests := []struct {
		name     string
		attempts int
		refuse   int
		code     codes.Code
	}{
		// The client reconnects on its own after the same short backoff
		// the calls retry with: a call that is not retried can still find
		// the connection up again on a slow machine, so the cases that
		// must fail refuse more connections than a call can outlast, and
		// the one that must recover has attempts to spare.
		{"recovers", 100, 3, codes.OK},
		{"no retry", 1, 100, codes.Unavailable},
		{"too many failures", 3, 100, codes.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProxy(t, ts.addr)
			p.refuseNext(tt.refuse)
			var n calls
			c := dial(t, p.addr(), n.option(), client.WithRetry(client.RetryPolicy{
				MaxAttempts: tt.attempts, InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
			}))
			_, err := c.Workflows(ctxT(t))
			if got := status.Code(err); got != tt.code {
				t.Fatalf("code %v (%v), want %v", got, err, tt.code)
			}
			attempts := n.get(workflowsMethod)
			if tt.code == codes.OK && attempts < 2 {
				t.Errorf("%d attempts: the call was not retried", attempts)
			}
			if tt.code != codes.OK && attempts != tt.attempts {
				t.Errorf("%d attempts, want %d", attempts, tt.attempts)
			}
		})
	}
}

func TestDefaultTimeout(t *testing.T) {
	// A listener that never accepts: the TCP handshake completes, the
	// HTTP/2 one never does, and a call hangs until its deadline.
	hole, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hole.Close() })
	c := dial(t, hole.Addr().String(), client.WithTimeout(50*time.Millisecond))
	start := time.Now()
	_, err = c.Workflows(context.Background())
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the call took %v", d)
	}
}

func TestTimeoutKeepsCallerDeadline(t *testing.T) {
	ts := startServer(t)
	var deadline time.Time
	seen := client.WithDialOptions(grpc.WithChainUnaryInterceptor(
		func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			deadline, _ = ctx.Deadline()
			return invoker(ctx, method, req, reply, cc, opts...)
		}))
	c := dial(t, ts.addr, seen, client.WithTimeout(time.Minute))
	tests := []struct {
		name string
		ctx  time.Duration // the caller's timeout; 0: none
		want time.Duration
	}{
		{"default", 0, time.Minute},
		{"longer deadline kept", time.Hour, time.Hour},
		{"shorter deadline kept", 10 * time.Second, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctx)
				defer cancel()
			}
			if _, err := c.Workflows(ctx); err != nil {
				t.Fatal(err)
			}
			if got := time.Until(deadline); got > tt.want || got < tt.want-5*time.Second {
				t.Errorf("deadline in %v, want about %v", got, tt.want)
			}
		})
	}
}
