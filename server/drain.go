package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/server/internal/apierr"
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

// leave is step 0: it returns when the shutdown delay has passed or the
// drain has begun (Close).
func (s *Server) leave() {
	if s.opts.ShutdownDelay <= 0 {
		return
	}
	s.health.Leave()
	s.log.Info("leaving: not ready, still serving calls", "delay", s.opts.ShutdownDelay)
	t := time.NewTimer(s.opts.ShutdownDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.draining:
	}
}

// drain begins shutdown (step 1); it may be called more than once.
func (s *Server) drain() {
	s.drainOnce.Do(func() {
		s.health.Shutdown()
		close(s.draining)
	})
}

func (s *Server) isDraining() bool {
	select {
	case <-s.draining:
		return true
	default:
		return false
	}
}

// errShuttingDown refuses a call that arrives during the drain.
func errShuttingDown() error {
	return fmt.Errorf("%w: server is shutting down; nothing was done: retry", apierr.ErrUnavailable)
}

// errStreamDrained ends a stream at shutdown.
func errStreamDrained(last uint64) error {
	return fmt.Errorf("%w: server is shutting down; resume after seq %d", apierr.ErrUnavailable, last)
}

// cutShort replaces Canceled by Unavailable for a call whose context the
// server cancelled (step 3): the client did not cancel it, and what it did
// is unknown, so it should retry.
func (s *Server) cutShort(err error) error {
	canceled := errors.Is(err, context.Canceled) || connect.CodeOf(err) == connect.CodeCanceled
	if err == nil || !canceled || s.requests.Err() == nil {
		return err
	}
	return fmt.Errorf("%w: server shut down before the call finished; it may have taken effect: retry it with the same handler id or idempotency key", apierr.ErrUnavailable)
}

// drainGate is the interceptor of the workflow service's calls: it refuses
// calls during the drain and reports calls cut short as Unavailable.
type drainGate struct{ s *Server }

var _ connect.Interceptor = drainGate{}

func (g drainGate) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if g.s.isDraining() && !finishesWork(req.Spec().Procedure) {
			return nil, errShuttingDown()
		}
		res, err := next(ctx, req)
		return res, g.s.cutShort(err)
	}
}

func (g drainGate) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (g drainGate) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		if g.s.isDraining() {
			return errShuttingDown()
		}
		return g.s.cutShort(next(ctx, conn))
	}
}

// finishesWork says whether a call serves a step run already in progress
// (a worker's StepCall and FinishRun): the drain lets those through, so
// that remote runs finish within the grace period as in-process ones do.
func finishesWork(procedure string) bool {
	return procedure == wfdv1connect.WorkerServiceStepCallProcedure || procedure == wfdv1connect.WorkerServiceFinishRunProcedure
}
