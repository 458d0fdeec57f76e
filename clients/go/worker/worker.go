// Package worker serves wfd workflows from a Go process: it connects to a
// wfd server (WorkerService), registers the workflows' definitions, and
// runs the step runs the server dispatches to it. The server keeps all
// handler state; a step's context operations are calls to the server,
// which executes them on the run's real engine StepContext, so a step
// behaves as it does in process (docs/ARCHITECTURE.md "Step workers").
//
//	c, _ := client.Dial("127.0.0.1:7233")
//	w, _ := worker.New(c.Conn(), worker.Options{Name: "billing", MaxRuns: 8}, worker.Workflow{
//		Definition: def, // a flow.Workflow; its steps' Run fields are not used
//		Run:        map[string]worker.StepFunc{"decide": decide},
//	})
//	err := w.Run(ctx) // until ctx ends; reconnects on its own
package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1grpc"

	"github.com/wfd-dev/wfd/flow"
)

// StepFunc is the code of a step run by a worker: flow.StepFunc with
// a Context in place of *flow.StepContext (which satisfies Context).
type StepFunc func(ctx context.Context, sc Context, in flow.Event) error

// InProcess adapts f to a flow.StepFunc, so the same step function
// runs in process too.
func InProcess(f StepFunc) flow.StepFunc {
	return func(ctx context.Context, sc *flow.StepContext, in flow.Event) error { return f(ctx, sc, in) }
}

// Workflow is a version of a workflow a worker serves: its definition
// (the steps' Run fields are not used) and the code of each step, by step
// name. A worker may serve several versions of one workflow, each with its
// own code (Definition.Version names them; unnamed, the server names a
// version by its definition's hash): handlers run the version they started
// on, so the old code keeps serving old handlers while new ones start on
// the new.
type Workflow struct {
	Definition flow.Workflow
	Run        map[string]StepFunc
	// Standby registers a version the server does not have yet without
	// making it current: RunWorkflow goes on starting the current version
	// until an operator promotes this one (wfd workflows promote). By
	// default a new version becomes current when it is registered; a
	// version the server has keeps its standing either way, so an old
	// worker that reconnects does not take current back.
	Standby bool
}

// served is the code of one registered version.
type served struct {
	steps map[string]StepFunc
	emits map[string]map[string]bool
}

// Options configure a Worker.
type Options struct {
	// Name identifies the worker to operators (wfd workers).
	Name string
	// MaxRuns is how many step runs it executes at once (default 1).
	MaxRuns int
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Backoff is the pause before reconnecting (default 100ms, doubling to
	// 5s while the server stays away).
	Backoff time.Duration
}

// Worker serves workflows to one server.
type Worker struct {
	svc  wfdv1grpc.WorkerServiceClient
	opts Options
	log  *slog.Logger
	req  *wfdv1.ConnectRequest
	// code is each registered version's code, in the order of
	// req.Workflows; versions finds it by workflow@version, as the
	// server named them when it connected (Connected.versions).
	code     []served
	versions map[string]int
	// slots bounds the runs in progress to MaxRuns.
	slots chan struct{}
	mu    sync.Mutex
	// cancels ends runs the server takes back, by run id.
	cancels map[string]context.CancelFunc
	// finishes batches the ends of runs that end together (finish.go).
	finishes finisher
}

// New checks the workflows and returns a worker over conn (a client's
// Conn()). It connects when Run is called.
func New(conn grpc.ClientConnInterface, opts Options, workflows ...Workflow) (*Worker, error) {
	if opts.MaxRuns <= 0 {
		opts.MaxRuns = 1
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 100 * time.Millisecond
	}
	w := &Worker{svc: wfdv1grpc.NewWorkerServiceClient(conn), opts: opts, log: opts.Logger,
		req:   &wfdv1.ConnectRequest{Name: opts.Name, MaxRuns: int32(opts.MaxRuns), DispatchBatches: true},
		slots: make(chan struct{}, opts.MaxRuns), cancels: map[string]context.CancelFunc{}, versions: map[string]int{}}
	for _, wf := range workflows {
		def := wf.Definition
		code := served{steps: map[string]StepFunc{}, emits: map[string]map[string]bool{}}
		for _, s := range def.Steps {
			f := wf.Run[s.Name]
			if f == nil {
				return nil, fmt.Errorf("worker: workflow %q: step %q has no code in Workflow.Run", def.Name, s.Name)
			}
			code.steps[s.Name] = f
			code.emits[s.Name] = map[string]bool{}
			for _, t := range s.Emits {
				code.emits[s.Name][t] = true
			}
		}
		d, err := definition(def)
		if err != nil {
			return nil, err
		}
		d.MakeCurrent = !wf.Standby
		w.req.Workflows = append(w.req.Workflows, d)
		w.code = append(w.code, code)
	}
	return w, nil
}

// connected notes the versions the server named, in the order registered.
func (w *Worker) connected(versions []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	clear(w.versions)
	for i, v := range versions {
		if i < len(w.req.Workflows) {
			w.versions[w.req.Workflows[i].GetName()+"@"+v] = i
		}
	}
}

// codeFor is the code of the version a dispatch is for (nil if this
// worker does not serve it). A server that names no version dispatches
// the workflow's only one here.
func (w *Worker) codeFor(d *wfdv1.Dispatch) *served {
	w.mu.Lock()
	i, ok := w.versions[d.GetWorkflow()+"@"+d.GetWorkflowVersion()]
	w.mu.Unlock()
	if !ok && d.GetWorkflowVersion() == "" {
		i = slices.IndexFunc(w.req.Workflows, func(def *wfdv1.WorkflowDefinition) bool { return def.GetName() == d.GetWorkflow() })
		ok = i >= 0
	}
	if !ok {
		return nil
	}
	return &w.code[i]
}

// Run connects and serves dispatched runs until ctx ends, reconnecting
// after a lost connection. A refused registration (a definition that
// fails validation, a name registered with another definition) ends it
// with the server's error. Runs in progress end with ctx too.
func (w *Worker) Run(ctx context.Context) error {
	var runs sync.WaitGroup
	defer runs.Wait()
	pause := w.opts.Backoff
	for {
		connected, err := w.session(ctx, &runs)
		if ctx.Err() != nil {
			return nil
		}
		if isPermanent(err) {
			return fmt.Errorf("worker: connect: %w", err)
		}
		if connected {
			pause = w.opts.Backoff
		}
		w.log.Info("worker: connection lost; reconnecting", "err", err, "in", pause)
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return nil
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// session is one Connect stream: it serves dispatches until the stream
// ends, and says whether it got as far as connected.
func (w *Worker) session(ctx context.Context, runs *sync.WaitGroup) (bool, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := w.svc.Connect(sctx, w.req, callOptions...)
	if err != nil {
		return false, err
	}
	var workerID string
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return workerID != "", errors.New("the server ended the stream")
		}
		if err != nil {
			return workerID != "", err
		}
		switch k := m.GetKind().(type) {
		case *wfdv1.ConnectResponse_Connected:
			workerID = k.Connected.GetWorkerId()
			w.connected(k.Connected.GetVersions())
			w.log.Info("worker: connected", "worker", workerID, "versions", k.Connected.GetVersions())
		case *wfdv1.ConnectResponse_Dispatch:
			w.start(sctx, runs, workerID, k.Dispatch)
		case *wfdv1.ConnectResponse_Dispatches:
			for _, d := range k.Dispatches.GetDispatches() {
				w.start(sctx, runs, workerID, d)
			}
		case *wfdv1.ConnectResponse_CancelRunId:
			w.mu.Lock()
			if c := w.cancels[k.CancelRunId]; c != nil {
				c()
			}
			w.mu.Unlock()
		}
	}
}

// start runs a dispatched run in a goroutine of its own. The server
// dispatches no more than MaxRuns at once; slots guards against a
// redispatch arriving before the old run's goroutine is done.
func (w *Worker) start(ctx context.Context, runs *sync.WaitGroup, workerID string, d *wfdv1.Dispatch) {
	var rctx context.Context
	var cancel context.CancelFunc
	if dl := d.GetDeadline(); dl != nil {
		rctx, cancel = context.WithDeadline(ctx, dl.AsTime())
	} else {
		rctx, cancel = context.WithCancel(ctx)
	}
	w.mu.Lock()
	w.cancels[d.GetRunId()] = cancel
	w.mu.Unlock()
	runs.Go(func() {
		defer func() {
			w.mu.Lock()
			delete(w.cancels, d.GetRunId())
			w.mu.Unlock()
			cancel()
		}()
		select {
		case w.slots <- struct{}{}:
			defer func() { <-w.slots }()
		case <-rctx.Done():
			return
		}
		w.execute(rctx, ctx, workerID, d)
	})
}
