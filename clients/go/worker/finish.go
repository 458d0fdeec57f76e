package worker

import (
	"context"
	"slices"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// Bounds of a FinishRuns batch: a run's end larger than batchItemBytes
// goes alone (FinishRun), and a batch stops at batchBytes or batchRuns, far
// below the server's read limit for the runs' effects (about 26 MiB with its
// defaults).
const (
	batchItemBytes = 64 << 10
	batchBytes     = 1 << 20
	batchRuns      = 256
)

// finisher sends the ends of runs. A run's end is sent at once if no
// FinishRun or FinishRuns is in flight; otherwise it waits for it, and the
// ends that gathered meanwhile go in one FinishRuns. Under load, runs that
// end together cost the server one call instead of one each; alone, a run
// waits for nothing.
type finisher struct {
	mu      sync.Mutex
	queue   []*ending
	sending bool
	// single is set once the server answered FinishRuns Unimplemented (a
	// server older than it): every end goes by FinishRun from then on.
	single bool
}

// ending is one run's end waiting in the queue; done gets FinishRun's
// error for it. ctx is the run's: an end whose run's context ended before
// its batch left is not sent, as its FinishRun would not have been.
type ending struct {
	ctx  context.Context
	fin  *wfdv1.FinishRunRequest
	size int
	done chan error
}

// finish reports the run's end. A refusal means the run is no longer
// this worker's: it was dispatched again or ended on the server. A
// FinishRun too large for the server (its sends and writes over the
// server's limits) is reported again without them, as the run's error:
// the run fails as a step (retried by its policy) instead of staying
// this worker's, unfinished, for ever.
func (w *Worker) finish(ctx, session context.Context, fin *wfdv1.FinishRunRequest) {
	err := w.send(ctx, session, fin)
	if tooLarge(err) {
		w.log.Warn("worker: the server refused the run's end as too large; failing the run", "run", fin.GetRunId(), "err", err)
		_, err = w.svc.FinishRun(ctx, &wfdv1.FinishRunRequest{RunId: fin.GetRunId(), WorkerId: fin.GetWorkerId(),
			Outcome: wfdv1.Outcome_OUTCOME_ERROR, ErrorMessage: refusal("the run's end", proto.Size(fin), err)}, callOptions...)
	}
	switch {
	case err == nil:
	case status.Code(err) == codes.FailedPrecondition:
		w.log.Info("worker: run no longer ours", "run", fin.GetRunId(), "err", err)
	default:
		w.log.Warn("worker: finishing run", "run", fin.GetRunId(), "err", err)
	}
}

// send delivers fin by FinishRun, or in a FinishRuns with the ends that
// queue up while another call is in flight (sent with the session's
// context: a batch serves several runs).
func (w *Worker) send(ctx, session context.Context, fin *wfdv1.FinishRunRequest) error {
	f := &w.finishes
	e := &ending{ctx: ctx, fin: fin, size: proto.Size(fin), done: make(chan error, 1)}
	f.mu.Lock()
	if f.single || e.size > batchItemBytes {
		f.mu.Unlock()
		_, err := w.svc.FinishRun(ctx, fin, callOptions...)
		return err
	}
	f.queue = append(f.queue, e)
	if f.sending {
		// The caller sending now takes it with the next batch.
		f.mu.Unlock()
		return <-e.done
	}
	f.sending = true
	for len(f.queue) > 0 {
		batch := f.take()
		f.mu.Unlock()
		w.deliver(session, batch)
		f.mu.Lock()
	}
	f.sending = false
	f.mu.Unlock()
	return <-e.done
}

// take removes the next batch from the queue (f.mu held).
func (f *finisher) take() []*ending {
	n, bytes := 0, 0
	for n < len(f.queue) && n < batchRuns && (n == 0 || bytes+f.queue[n].size <= batchBytes) {
		bytes += f.queue[n].size
		n++
	}
	batch := f.queue[:n:n]
	f.queue = append([]*ending(nil), f.queue[n:]...)
	return batch
}

// deliver sends a batch and hands each ending its answer. One ending
// goes by FinishRun with its run's context, several by FinishRuns with
// the session's.
func (w *Worker) deliver(session context.Context, batch []*ending) {
	batch = slices.DeleteFunc(batch, func(e *ending) bool {
		if err := e.ctx.Err(); err != nil {
			e.done <- err
			return true
		}
		return false
	})
	switch len(batch) {
	case 0:
		return
	case 1:
		_, err := w.svc.FinishRun(batch[0].ctx, batch[0].fin, callOptions...)
		batch[0].done <- err
		return
	}
	req := &wfdv1.FinishRunsRequest{Runs: make([]*wfdv1.FinishRunRequest, len(batch))}
	for i, e := range batch {
		req.Runs[i] = e.fin
	}
	resp, err := w.svc.FinishRuns(session, req, callOptions...)
	if err == nil && len(resp.GetResults()) != len(batch) {
		err = status.Errorf(codes.Internal, "FinishRuns answered %d runs of %d", len(resp.GetResults()), len(batch))
	}
	switch {
	case err == nil:
		for i, e := range batch {
			r := resp.GetResults()[i]
			if c := codes.Code(r.GetCode()); c != codes.OK {
				e.done <- status.Error(c, r.GetMessage())
			} else {
				e.done <- nil
			}
		}
	case status.Code(err) == codes.Unimplemented || tooLarge(err):
		// A server without FinishRuns, or a batch over its read limit:
		// each end alone, as before batches.
		if status.Code(err) == codes.Unimplemented {
			w.finishes.mu.Lock()
			w.finishes.single = true
			w.finishes.mu.Unlock()
		}
		for _, e := range batch {
			_, err := w.svc.FinishRun(e.ctx, e.fin, callOptions...)
			e.done <- err
		}
	default:
		for _, e := range batch {
			e.done <- err
		}
	}
}
