package workers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/live"

	"github.com/wfd-dev/wfd/engine"
)

// remoteRun is a step run dispatched to a worker. The proxy goroutine
// (the engine's run goroutine) owns the run's StepContext; the worker's
// StepCall and FinishRun requests reach it through calls, so the context
// is only ever used from its own goroutine, as the engine requires.
type remoteRun struct {
	id        string
	handlerID string
	step      string
	since     time.Time
	worker    *worker
	calls     chan *runCall
	// done is closed when the proxy stops serving the run (it finished,
	// was dispatched again, or its context ended).
	done chan struct{}
}

// runCall is a StepCall (req) or a FinishRun (fin) for the proxy.
type runCall struct {
	req   *wfdv1.StepCallRequest
	fin   *wfdv1.FinishRunRequest
	reply chan runReply // buffered: the proxy never blocks on it
}

type runReply struct {
	resp *wfdv1.StepCallResponse
	err  error
}

// errStartOver refuses a call whose local waits the engine answered
// otherwise: the run is dispatched again.
func errStartOver(id string) error {
	return fmt.Errorf("%w: run %q starts over: a wait the worker answered itself is answered otherwise here", apierr.ErrFailedPrecondition, id)
}

// errRunGone refuses a call for a run the proxy no longer serves.
func errRunGone(id string) error {
	return fmt.Errorf("%w: run %q is no longer in progress on this worker", apierr.ErrFailedPrecondition, id)
}

// ask hands c to the run's proxy and waits for its answer.
func (run *remoteRun) ask(ctx context.Context, c *runCall) (runReply, error) {
	if err := run.hand(ctx, c); err != nil {
		return runReply{}, err
	}
	select {
	case r := <-c.reply:
		return r, nil
	case <-ctx.Done():
		return runReply{}, ctx.Err()
	}
}

// hand gives c to the run's proxy without waiting for its answer (await).
func (run *remoteRun) hand(ctx context.Context, c *runCall) error {
	c.reply = make(chan runReply, 1)
	select {
	case run.calls <- c:
		return nil
	case <-run.done:
		return errRunGone(run.id)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// await is the error of a FinishRun handed to its proxy.
func (c *runCall) await(ctx context.Context) error {
	select {
	case r := <-c.reply:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// call executes one context operation of the run.
func (run *remoteRun) call(ctx context.Context, req *wfdv1.StepCallRequest) (*wfdv1.StepCallResponse, error) {
	r, err := run.ask(ctx, &runCall{req: req})
	if err != nil {
		return nil, err
	}
	return r.resp, r.err
}

// finish ends the run.
func (run *remoteRun) finish(ctx context.Context, req *wfdv1.FinishRunRequest) error {
	r, err := run.ask(ctx, &runCall{fin: req})
	if err != nil {
		return err
	}
	return r.err
}

// proxy is the Run of a remote step: it hands each run to a worker.
func (r *Registry) proxy(workflow, version, step string) engine.StepFunc {
	return func(ctx context.Context, sc *engine.StepContext, in engine.Event) error {
		return r.runRemote(ctx, sc, in, ref{workflow, version}, step)
	}
}

// runRemote dispatches the run to a worker serving workflow and serves
// it until it finishes. With no worker free it waits (the run is in
// progress for the engine: the handler is busy, never failed). A worker
// lost mid-run has the run dispatched again, from the start, to another:
// that is not an attempt (the step did not fail).
func (r *Registry) runRemote(ctx context.Context, sc *engine.StepContext, in engine.Event, v ref, step string) error {
	local := true // the worker may answer waits itself (Dispatch.local_waits)
	lostShown := false
	for {
		wr := &waitingRun{handlerID: sc.HandlerID(), step: step, workflow: v.workflow, version: v.version, attempt: sc.Attempt()}
		w, err := r.pick(ctx, v.workflow, v.version, wr, func(waiting, noneConnected bool) {
			if waiting {
				sc.Blocked(live.BlockedOnWorkerOf(v.version, noneConnected))
			} else {
				sc.Blocked("")
			}
		})
		if err != nil {
			return err
		}
		if lostShown {
			// The stream said the run's worker was lost: it says it is
			// taken again (unless pick waited, and said so).
			sc.Blocked("")
			lostShown = false
		}
		run := &remoteRun{id: uuid.NewString(), handlerID: sc.HandlerID(), step: step, since: r.opts.Now(), worker: w,
			calls: make(chan *runCall), done: make(chan struct{})}
		r.mu.Lock()
		r.runs[run.id] = run
		r.mu.Unlock()
		lost, err := r.serve(ctx, sc, in, run, v, local)
		r.mu.Lock()
		delete(r.runs, run.id)
		r.mu.Unlock()
		close(run.done)
		r.release(w)
		if errors.Is(err, errLocalWaits) {
			// The worker's own answer to a wait was not the engine's: the
			// run starts over, every wait a StepCall. Not a redispatch of
			// a lost run, not an attempt.
			r.log.Warn("a worker answered a wait unlike the server; running the step again without local waits",
				"handler", run.handlerID, "step", step, "worker", w.id, "err", err)
			sc.Rewind()
			local = false
			continue
		}
		if !lost {
			return err
		}
		if r.draining() {
			// Shutting down: nothing is dispatched again; the run stays in
			// progress once the engine closes and runs after the restart.
			select {
			case <-r.eng.Closing():
				return fmt.Errorf("worker lost at shutdown: %w", engine.ErrInterrupted)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		r.stats.redispatches.Add(1)
		r.log.Info("worker lost mid-run; dispatching the run again", "handler", run.handlerID, "step", step, "worker", w.id)
		sc.Rewind()
		// The handler's stream records the loss (RunWaitingForWorker.lost_worker).
		sc.Blocked(live.BlockedOnLostWorker(v.version, workerName(w)))
		lostShown = true
	}
}

// serve sends run to its worker and executes the worker's calls until
// FinishRun, the worker's loss (lost), or the end of ctx.
func (r *Registry) serve(ctx context.Context, sc *engine.StepContext, in engine.Event, run *remoteRun, v ref, local bool) (lost bool, err error) {
	d := dispatchOf(ctx, sc, in, run, v, local)
	w := run.worker
	select {
	case w.out <- &wfdv1.ConnectResponse{Kind: &wfdv1.ConnectResponse_Dispatch{Dispatch: d}}:
		r.stats.dispatches.Add(1)
	case <-w.gone:
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
	sentAt, answered := time.Now(), false
	var calls runCalls
	for {
		select {
		case c := <-run.calls:
			if !answered {
				answered = true
				r.stats.answered(time.Since(sentAt))
			}
			if finished, err := calls.answer(ctx, sc, run.id, c); finished || err != nil {
				return false, err
			}
		case <-w.gone:
			return true, nil
		case <-ctx.Done():
			// Tell the worker to abandon it; a full stream means the worker
			// is behind, and its late calls are refused anyway.
			select {
			case w.out <- &wfdv1.ConnectResponse{Kind: &wfdv1.ConnectResponse_CancelRunId{CancelRunId: run.id}}:
			default:
			}
			return false, ctx.Err()
		}
	}
}

// dispatchOf is the message that hands run to its worker.
func dispatchOf(ctx context.Context, sc *engine.StepContext, in engine.Event, run *remoteRun, v ref, local bool) *wfdv1.Dispatch {
	d := &wfdv1.Dispatch{RunId: run.id, HandlerId: run.handlerID, Workflow: v.workflow, WorkflowVersion: v.version, Step: run.step,
		Input: &wfdv1.Event{Id: in.ID, Type: in.Type, Data: in.Data}, Attempt: int32(sc.Attempt()), LocalWaits: local}
	if local {
		for _, rw := range sc.ResolvedWaits() {
			p := &wfdv1.ResolvedWait{Position: uint32(rw.Position), TimedOut: rw.TimedOut}
			if !rw.TimedOut {
				p.Event = eventToProto(rw.Event, nil)
			}
			d.Resolved = append(d.Resolved, p)
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		d.Deadline = timestamppb.New(dl)
	}
	return d
}

// runCalls answers a run's calls from its worker, remembering the last
// numbered call and its answer for a retried call.
type runCalls struct {
	lastSeq uint64
	last    runReply
}

// answer answers call c of run id; finished once the run's FinishRun is
// replayed (err is then the run's outcome).
func (rc *runCalls) answer(ctx context.Context, sc *engine.StepContext, id string, c *runCall) (finished bool, err error) {
	if c.fin != nil {
		if err := applyLocalWaits(sc, c.fin.GetLocalWaits()); err != nil {
			c.reply <- runReply{err: errStartOver(id)}
			return true, err
		}
		err := replay(sc, c.fin)
		c.reply <- runReply{}
		return true, err
	}
	if seq := c.req.GetSeq(); seq != 0 && seq == rc.lastSeq {
		c.reply <- rc.last
		return false, nil
	}
	if err := applyLocalWaits(sc, c.req.GetLocalWaits()); err != nil {
		c.reply <- runReply{err: errStartOver(id)}
		return true, err
	}
	resp, err := execute(ctx, sc, c.req)
	c.reply <- runReply{resp: resp, err: err}
	if c.req.GetSeq() != 0 {
		rc.lastSeq, rc.last = c.req.GetSeq(), runReply{resp: resp, err: err}
	}
	return false, nil
}

// replay applies a FinishRun to the run: its sends and writes, in order,
// and its outcome as the step's return.
func replay(sc *engine.StepContext, f *wfdv1.FinishRunRequest) error {
	for _, ev := range f.GetWritten() {
		sc.Write(ev.GetType(), ev.GetData())
	}
	for _, ev := range f.GetSent() {
		if err := sc.Send(ev.GetType(), ev.GetData()); err != nil {
			return err
		}
	}
	switch f.GetOutcome() {
	case wfdv1.Outcome_OUTCOME_OK:
		return nil
	case wfdv1.Outcome_OUTCOME_WAITING:
		return engine.ErrWaiting
	case wfdv1.Outcome_OUTCOME_ERROR:
		msg := f.GetErrorMessage()
		if msg == "" {
			msg = "the step failed"
		}
		return errors.New(msg)
	}
	return fmt.Errorf("the worker finished the run with outcome %v", f.GetOutcome())
}

// workerName is how a worker is named on a handler's stream: its name,
// or its id if it gave none.
func workerName(w *worker) string {
	if w.name != "" {
		return w.name
	}
	return w.id
}
