//go:build linux

package main_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// drainCall is one call a worker made while the server was told to stop.
type drainCall struct {
	send bool   // SendEvent (an answer to a parked handler), else RunWorkflow
	id   string // the handler
	key  string // SendEvent's idempotency key
	err  error
	// afterTerm: acknowledged after SIGTERM was sent (it was in flight, or
	// arrived before the server stopped accepting).
	afterTerm bool
}

// TestDrainSIGTERM sends SIGTERM to a real `wfd serve` in the middle of a
// burst of RunWorkflow and SendEvent calls, with a health Watch and a
// StreamEvents stream open, and checks that every client can tell what
// became of its call:
//
//   - no call is answered Canceled: each succeeds, or fails with
//     Unavailable (refused, or the connection was gone);
//   - the Watch stream sends NOT_SERVING and then ends with Unavailable,
//     not a bare end of stream; the StreamEvents stream ends with
//     Unavailable (resume), not Canceled;
//   - after a restart, the handler of every acknowledged RunWorkflow
//     exists and every acknowledged answer took effect, and every call
//     that failed succeeds when retried with the same handler id or
//     idempotency key.
func TestDrainSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs wfd serve")
	}
	bin := buildWfd(t)
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	srv := startWfd(t, bin, data)
	c := srv.client()
	// Approval handlers to answer during the burst; the first stays
	// unanswered, followed by the stream.
	const parked = 120
	ids := make([]string, parked)
	parallel(t, 8, parked, func(i int) error {
		ids[i] = fmt.Sprintf("drain-a-%03d", i)
		_, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: ids[i], Input: input(i)})
		return err
	})
	waitAllIdle(ctx, t, c, parked)

	watch := healthWatch(ctx, t, srv)
	if !watch.Receive() || watch.Msg().GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health Watch: first message %v, %v", watch.Msg(), watch.Err())
	}
	follow, err := c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: ids[0], IncludeInternal: true})
	if err != nil {
		t.Fatal(err)
	}
	if !follow.Receive() {
		t.Fatalf("StreamEvents: %v", follow.Err())
	}

	// The burst: 16 workers until their first failure; SIGTERM once 150
	// calls were acknowledged, while the others are mid-call.
	var (
		mu      sync.Mutex
		calls   []drainCall
		acked   atomic.Int64
		termed  atomic.Bool
		next    atomic.Int64
		answer  atomic.Int64
		sigOnce sync.Once
	)
	answer.Store(1)
	term := func() {
		sigOnce.Do(func() {
			termed.Store(true)
			_ = srv.cmd.Process.Signal(syscall.SIGTERM)
		})
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for ctx.Err() == nil {
				n := int(next.Add(1))
				var call drainCall
				if i := int(answer.Load()); n%2 == 0 && i < parked {
					answer.Add(1)
					call = drainCall{send: true, id: ids[i], key: "drain-answer-" + ids[i]}
					_, call.err = c.SendEvent(ctx, answerWithKey(call.id, call.key))
				} else {
					call = drainCall{id: fmt.Sprintf("drain-r-%05d", n)}
					_, call.err = c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: call.id, Input: input(n)})
				}
				call.afterTerm = call.err == nil && termed.Load()
				mu.Lock()
				calls = append(calls, call)
				mu.Unlock()
				if call.err != nil {
					return
				}
				if acked.Add(1) >= 150 {
					term()
				}
			}
		})
	}
	wg.Wait()
	if !termed.Load() {
		t.Fatalf("the burst ended before SIGTERM: %v", calls[len(calls)-1].err)
	}
	select {
	case <-srv.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("wfd serve did not stop after SIGTERM\n%s", srv.out.String())
	}
	if srv.err != nil {
		t.Fatalf("wfd serve exited with %v\n%s", srv.err, srv.out.String())
	}

	// What the clients saw.
	var failed, inFlight, refusedByServer int
	for _, call := range calls {
		if call.afterTerm {
			inFlight++
		}
		if call.err == nil {
			continue
		}
		failed++
		if code := connect.CodeOf(call.err); code != connect.CodeUnavailable {
			t.Errorf("%s: %v (code %v), want success or Unavailable", call.id, call.err, code)
		}
		if hasRetryInfo(call.err) {
			refusedByServer++
		}
	}
	t.Logf("%d calls: %d acknowledged after SIGTERM, %d failed with Unavailable (%d of them answered by the server, with a retry hint)",
		len(calls), inFlight, failed, refusedByServer)
	var sawNotServing bool
	for watch.Receive() {
		sawNotServing = watch.Msg().GetStatus() == healthpb.HealthCheckResponse_NOT_SERVING
	}
	if !sawNotServing {
		t.Errorf("health Watch ended without NOT_SERVING as its last message")
	}
	if code := connect.CodeOf(watch.Err()); watch.Err() == nil || code != connect.CodeUnavailable {
		t.Errorf("health Watch ended with %v, want Unavailable after NOT_SERVING", watch.Err())
	}
	for follow.Receive() {
	}
	if code := connect.CodeOf(follow.Err()); follow.Err() == nil || code != connect.CodeUnavailable {
		t.Errorf("StreamEvents ended with %v, want Unavailable (resume)", follow.Err())
	}

	// Restart: acknowledged calls took effect; failed ones succeed when
	// retried the same way.
	srv = startWfd(t, bin, data)
	c = srv.client()
	for _, call := range calls {
		if call.err != nil {
			var err error
			if call.send {
				_, err = c.SendEvent(ctx, answerWithKey(call.id, call.key))
			} else {
				_, err = c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: call.id})
			}
			if err != nil {
				t.Errorf("retrying %s after the restart: %v", call.id, err)
			}
		}
		if call.send {
			waitCompleted(ctx, t, c, call.id)
		} else if _, err := c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: call.id}); err != nil {
			t.Errorf("handler %s (RunWorkflow acknowledged: %v): %v", call.id, call.err == nil, err)
		}
	}
	srv.stop(t)
}

func answerWithKey(id, key string) *wfdv1.SendEventRequest {
	req := answer(id)
	req.IdempotencyKey = key
	return req
}

func hasRetryInfo(err error) bool {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return false
	}
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if _, ok := v.(*errdetails.RetryInfo); ok {
				return true
			}
		}
	}
	return false
}
