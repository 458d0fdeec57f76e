package worker

import (
	"context"
	"errors"
	"fmt"
	"math"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/flow"
)

// execute runs the user's step for d and reports its end with FinishRun,
// unless the run was lost meanwhile (it is no longer this worker's). ctx
// is the run's; session is its connection's, which a batch of run ends
// is sent with (finish.go).
func (w *Worker) execute(ctx, session context.Context, workerID string, d *wfdv1.Dispatch) {
	fin := &wfdv1.FinishRunRequest{RunId: d.GetRunId(), WorkerId: workerID}
	code := w.codeFor(d)
	var f StepFunc
	if code != nil {
		f = code.steps[d.GetStep()]
	}
	if f == nil {
		fin.Outcome, fin.ErrorMessage = wfdv1.Outcome_OUTCOME_ERROR, fmt.Sprintf("worker serves no step %q of workflow %s@%s", d.GetStep(), d.GetWorkflow(), d.GetWorkflowVersion())
		w.finish(ctx, session, fin)
		return
	}
	rc := newRemoteContext(ctx, w.svc, workerID, d, code.emits[d.GetStep()])
	err := call(ctx, f, rc, eventFrom(d.GetInput()))
	if rc.lost != nil {
		w.log.Info("worker: run abandoned", "run", d.GetRunId(), "err", rc.lost)
		return
	}
	if err == nil && rc.fault != nil {
		err = rc.fault
	}
	fin.LocalWaits = rc.pending
	switch {
	case rc.refused != nil:
		// The server took no later call: the run fails with the refusal,
		// whatever the step made of it, without the waits it answered
		// itself since (their positions no longer match the server's).
		fin.Outcome, fin.ErrorMessage, fin.LocalWaits = wfdv1.Outcome_OUTCOME_ERROR, rc.refused.Error(), nil
	case err == nil:
		fin.Outcome = wfdv1.Outcome_OUTCOME_OK
		fin.Sent, fin.Written = rc.sent, rc.written
	case errors.Is(err, flow.ErrWaiting):
		fin.Outcome = wfdv1.Outcome_OUTCOME_WAITING
		fin.Sent, fin.Written = rc.sent, rc.written
	default:
		fin.Outcome, fin.ErrorMessage = wfdv1.Outcome_OUTCOME_ERROR, err.Error()
	}
	w.finish(ctx, session, fin)
}

// call runs f, turning a panic into an error as the engine does.
func call(ctx context.Context, f StepFunc, sc Context, in flow.Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("step panicked: %v", p)
		}
	}()
	return f(ctx, sc, in)
}

// Message limits of the worker's calls, whatever the connection's
// defaults: it sends what the server takes (the server's limit on a
// run's StepCall and FinishRun follows its engine limits, so the worker
// leaves it to the server), and accepts what the server sends (64 MiB at
// most).
const (
	maxSendBytes = math.MaxInt32
	maxRecvBytes = 64 << 20
)

// callOptions are the options of every WorkerService call.
var callOptions = []grpc.CallOption{grpc.MaxCallSendMsgSize(maxSendBytes), grpc.MaxCallRecvMsgSize(maxRecvBytes)}

// tooLarge says whether a call failed because its message (or its
// answer) was larger than a side takes: ResourceExhausted.
func tooLarge(err error) bool { return status.Code(err) == codes.ResourceExhausted }

// isPermanent says whether a Connect error will not go away by
// reconnecting (the server refused the registration).
func isPermanent(err error) bool {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.FailedPrecondition, codes.AlreadyExists, codes.Unimplemented, codes.PermissionDenied, codes.Unauthenticated:
		return true
	}
	return false
}

// refusal is the run's error for a call the server refused as too large.
func refusal(what string, size int, err error) string {
	return fmt.Sprintf("%s (%d bytes encoded) was refused: %s", what, size, status.Convert(err).Message())
}
