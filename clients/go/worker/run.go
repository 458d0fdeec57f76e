package worker

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/engine"
)

// execute runs the user's step for d and reports its end with FinishRun,
// unless the run was lost meanwhile (it is no longer this worker's).
func (w *Worker) execute(ctx context.Context, workerID string, d *wfdv1.Dispatch) {
	f := w.steps[d.GetWorkflow()][d.GetStep()]
	fin := &wfdv1.FinishRunRequest{RunId: d.GetRunId(), WorkerId: workerID}
	if f == nil {
		fin.Outcome, fin.ErrorMessage = wfdv1.Outcome_OUTCOME_ERROR, fmt.Sprintf("worker serves no step %q of workflow %q", d.GetStep(), d.GetWorkflow())
		w.finish(ctx, fin)
		return
	}
	rc := newRemoteContext(ctx, w.svc, workerID, d, w.emits[d.GetWorkflow()][d.GetStep()])
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
	case err == nil:
		fin.Outcome = wfdv1.Outcome_OUTCOME_OK
		fin.Sent, fin.Written = rc.sent, rc.written
	case errors.Is(err, engine.ErrWaiting):
		fin.Outcome = wfdv1.Outcome_OUTCOME_WAITING
		fin.Sent, fin.Written = rc.sent, rc.written
	default:
		fin.Outcome, fin.ErrorMessage = wfdv1.Outcome_OUTCOME_ERROR, err.Error()
	}
	w.finish(ctx, fin)
}

// call runs f, turning a panic into an error as the engine does.
func call(ctx context.Context, f StepFunc, sc Context, in engine.Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("step panicked: %v", p)
		}
	}()
	return f(ctx, sc, in)
}

// finish reports the run's end. A refusal means the run is no longer
// this worker's: it was dispatched again or ended on the server.
func (w *Worker) finish(ctx context.Context, fin *wfdv1.FinishRunRequest) {
	_, err := w.svc.FinishRun(ctx, fin)
	switch {
	case err == nil:
	case status.Code(err) == codes.FailedPrecondition:
		w.log.Info("worker: run no longer ours", "run", fin.GetRunId(), "err", err)
	default:
		w.log.Warn("worker: finishing run", "run", fin.GetRunId(), "err", err)
	}
}

// isPermanent says whether a Connect error will not go away by
// reconnecting (the server refused the registration).
func isPermanent(err error) bool {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.FailedPrecondition, codes.Unimplemented, codes.PermissionDenied, codes.Unauthenticated:
		return true
	}
	return false
}
