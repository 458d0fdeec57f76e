package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"connectrpc.com/connect"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/observe"
)

// Shutdown drains the server so that every client can tell what became of
// its call (Serve, on ctx done):
//
//  0. leave (only with Options.ShutdownDelay): for the delay, gRPC health
//     says NOT_SERVING and /readyz 503 while every call is still served,
//     so that load balancers and Kubernetes endpoints stop sending calls
//     before the server refuses any. Close ends the delay early.
//  1. drain: health says NOT_SERVING (Watch streams send it, then end with
//     Unavailable), calls that have not started yet are refused with
//     Unavailable and a retry hint, and StreamEvents streams end with
//     Unavailable, naming the last sequence number sent, to resume from.
//  2. http.Server.Shutdown closes the listener and tells HTTP/2 clients to
//     open no more streams (GOAWAY); calls in flight keep their contexts
//     and the engine keeps running, so each ends with its true result.
//  3. If the grace period ends first, the calls left are cancelled and
//     answer Unavailable (their outcome is unknown: retry with the same
//     handler id or idempotency key), and connections are closed.
//  4. Close stops the engine (step runs finish within what is left of
//     the grace period) and waits for the last commit.

// shutdown is the server's shutdown as calls see it: whether the drain
// has begun, and the context of every call, cancelled only when the grace
// period ends with calls in flight (step 3) or at Close.
type shutdown struct {
	delay  time.Duration
	health *observe.Health
	log    *slog.Logger

	draining  chan struct{}
	drainOnce sync.Once
	// requests is the context of every call Serve serves.
	requests       context.Context
	cancelRequests context.CancelFunc
}

func newShutdown(delay time.Duration, health *observe.Health, log *slog.Logger) *shutdown {
	d := &shutdown{delay: delay, health: health, log: log, draining: make(chan struct{})}
	d.requests, d.cancelRequests = context.WithCancel(context.Background())
	return d
}

// leave is step 0: it returns when the shutdown delay has passed or the
// drain has begun (Close).
func (d *shutdown) leave() {
	if d.delay <= 0 {
		return
	}
	d.health.Leave()
	d.log.Info("leaving: not ready, still serving calls", "delay", d.delay)
	t := time.NewTimer(d.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-d.draining:
	}
}

// drain begins shutdown (step 1); it may be called more than once.
func (d *shutdown) drain() {
	d.drainOnce.Do(func() {
		d.health.Shutdown()
		close(d.draining)
	})
}

// isDraining reports whether the drain has begun.
func (d *shutdown) isDraining() bool {
	select {
	case <-d.draining:
		return true
	default:
		return false
	}
}

// cutShort replaces Canceled by Unavailable for a call whose context the
// server cancelled (step 3): the client did not cancel it, and what it did
// is unknown, so it should retry.
func (d *shutdown) cutShort(err error) error {
	canceled := errors.Is(err, context.Canceled) || connect.CodeOf(err) == connect.CodeCanceled
	if err == nil || !canceled || d.requests.Err() == nil {
		return err
	}
	return fmt.Errorf("%w: server shut down before the call finished; it may have taken effect: retry it with the same handler id or idempotency key", apierr.ErrUnavailable)
}

// drainGate is the interceptor of the workflow service's calls: it refuses
// calls during the drain and reports calls cut short as Unavailable.
type drainGate struct{ d *shutdown }

var _ connect.Interceptor = drainGate{}

func (g drainGate) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if g.d.isDraining() && !finishesWork(req.Spec().Procedure) {
			return nil, apierr.ErrShuttingDown
		}
		res, err := next(ctx, req)
		return res, g.d.cutShort(err)
	}
}

func (g drainGate) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (g drainGate) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		if g.d.isDraining() {
			return apierr.ErrShuttingDown
		}
		return g.d.cutShort(next(ctx, conn))
	}
}

// finishesWork says whether a call serves a step run already in progress
// (a worker's StepCall, FinishRun and FinishRuns): the drain lets those
// through, so that remote runs finish within the grace period as
// in-process ones do.
func finishesWork(procedure string) bool {
	switch procedure {
	case wfdv1connect.WorkerServiceStepCallProcedure, wfdv1connect.WorkerServiceFinishRunProcedure, wfdv1connect.WorkerServiceFinishRunsProcedure:
		return true
	}
	return false
}
