package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
)

// The example workflows the phases run (package workflows).
const (
	echoWorkflow     = "echo"
	approvalWorkflow = "approval"
	approvalEvent    = "approval"
)

// runner runs the phases against one server.
type runner struct {
	cfg config
	cl  *clients
	pid int // the server's pid, 0 if unknown
	// workerPID is the worker process serving the workflows (--worker),
	// 0 when they run in the server.
	workerPID int
	// The workflows the phases run: the built-in ones, or the worker's.
	echoWF, approvalWF string
	res                *modeResult
	// parked holds the handlers of the park phase for the resume phase.
	parked []parkedHandler
	// noStats is set once GetStats failed; it is not asked again.
	noStats bool
	// With --replicas: the other replicas' clients and pids (cl and pid
	// are the first replica's). Workers are spread over the replicas
	// round-robin (api).
	more     []*clients
	morePIDs []int
	// pg measures the PostgreSQL server's CPU time (nil: not measured).
	pg *pgProcs
}

type parkedHandler struct {
	id      string
	replica int // the replica that parked it (0 without --replicas)
	owner   int // the replica its owner names (-1: none named)
}

// replicas is how many servers the runner drives.
func (r *runner) replicas() int { return 1 + len(r.more) }

// replicaOf is the replica worker w calls.
func (r *runner) replicaOf(w int) int { return w % r.replicas() }

// api is the client worker w uses: its replica's, and on it one of its
// connections.
func (r *runner) api(w int) wfdv1connect.WorkflowServiceClient {
	return r.apiOn(w%r.replicas(), w)
}

// apiOn is replica i's client, on one of its connections for worker w.
func (r *runner) apiOn(i, w int) wfdv1connect.WorkflowServiceClient {
	if i > 0 {
		return r.more[i-1].api(w / r.replicas())
	}
	return r.cl.api(w / r.replicas())
}

// conns is how many connections the runner's clients hold in all.
func (r *runner) conns() int { return len(r.cl.conns) * r.replicas() }

// pids are the servers' pids (none known: nil).
func (r *runner) pids() []int {
	if r.pid == 0 {
		return nil
	}
	return append([]int{r.pid}, r.morePIDs...)
}

func (r *runner) phases(ctx context.Context) error {
	if err := r.warmup(ctx); err != nil {
		return err
	}
	if r.cfg.Echo > 0 {
		p, err := r.echo(ctx)
		if err != nil {
			return err
		}
		r.res.Echo = p
	}
	srvMem, wMem := newMemAround(r.pids(), r.cfg.N), newMemAround([]int{r.workerPID}, r.cfg.N)
	p, err := r.park(ctx)
	if err != nil {
		return err
	}
	r.res.Park = p
	r.res.Memory, r.res.WorkerMemory = srvMem.parked(), wMem.parked()
	p, err = r.resume(ctx)
	if err != nil {
		return err
	}
	r.res.Resume = p
	srvMem.resumed()
	wMem.resumed()
	return nil
}

// warmup runs a few echo handlers on every connection, so the measured
// phases do not pay for dialling and the first calls' setup.
func (r *runner) warmup(ctx context.Context) error {
	n := max(r.cfg.Warmup, r.conns())
	if r.cfg.Warmup == 0 {
		n = r.conns() // still dial every connection
	}
	req := &wfdv1.RunWorkflowRequest{Workflow: r.echoWF, Input: benchInput("warmup")}
	sreq := &wfdv1.StreamEventsRequest{IncludeInternal: true}
	for i := range n {
		api := r.api(i)
		if _, err := runToEnd(ctx, api, req, sreq); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	return nil
}

// echo runs the echo workflow cfg.Echo times, one after another.
func (r *runner) echo(ctx context.Context) (*phaseResult, error) {
	n := r.cfg.Echo
	lat := make([]time.Duration, n)
	ack := make([]time.Duration, n)
	req := &wfdv1.RunWorkflowRequest{Workflow: r.echoWF, Input: benchInput("echo")}
	sreq := &wfdv1.StreamEventsRequest{IncludeInternal: true}
	inResponse := 0
	m := r.startMeter()
	for i := range n {
		t0 := time.Now()
		acked, err := runToEnd(ctx, r.api(i%r.replicas()), req, sreq) // each replica in turn, on its first connection
		if err != nil {
			return nil, fmt.Errorf("echo run %d: %w", i+1, err)
		}
		lat[i] = time.Since(t0)
		if acked == 0 {
			inResponse++
			acked = lat[i]
		}
		ack[i] = acked
	}
	p := m.stop(n)
	p.Latency, p.Ack = summarize(lat), summarize(ack)
	p.DoneInResponse = inResponse
	return p, nil
}

// runToEnd starts a handler and follows its stream until it completes. It
// returns how long RunWorkflow took, or 0 when its response already said
// completed.
func runToEnd(ctx context.Context, api wfdv1connect.WorkflowServiceClient, req *wfdv1.RunWorkflowRequest, sreq *wfdv1.StreamEventsRequest) (time.Duration, error) {
	t0 := time.Now()
	res, err := api.RunWorkflow(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("RunWorkflow: %w", err)
	}
	acked := time.Since(t0)
	h := res.GetHandler()
	if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
		if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
			return 0, fmt.Errorf("handler %s ended %v: %s", h.GetHandlerId(), h.GetStatus(), h.GetError())
		}
		return 0, nil
	}
	sreq.HandlerId, sreq.AfterSeq = h.GetHandlerId(), h.GetLastSeq()
	s, err := openStream(ctx, api, sreq)
	if err != nil {
		return 0, err
	}
	defer s.close()
	if err := s.until(isFinished); err != nil {
		return 0, err
	}
	return acked, nil
}

// park starts cfg.N approval handlers from cfg.C workers and waits, for
// each, until it is idle.
func (r *runner) park(ctx context.Context) (*phaseResult, error) {
	n := r.cfg.N
	lat := make([]time.Duration, n)
	ack := make([]time.Duration, n)
	r.parked = make([]parkedHandler, n)
	var next atomic.Int64
	inResponse := atomic.Int64{}
	m := r.startMeter()
	err := r.workers(ctx, r.cfg.C, func(ctx context.Context, w int) error {
		api := r.api(w)
		req := &wfdv1.RunWorkflowRequest{Workflow: r.approvalWF, Input: benchInput("park")}
		sreq := &wfdv1.StreamEventsRequest{IncludeInternal: true}
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return nil
			}
			if r.cfg.Attrs {
				req.Attributes = benchAttributes(i)
			}
			t0 := time.Now()
			res, err := api.RunWorkflow(ctx, req)
			if err != nil {
				return fmt.Errorf("park: RunWorkflow: %w", err)
			}
			ack[i] = time.Since(t0)
			h := res.GetHandler()
			if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
				return fmt.Errorf("park: handler %s is %v, not running: %s", h.GetHandlerId(), h.GetStatus(), h.GetError())
			}
			if h.GetIdle() != nil {
				inResponse.Add(1)
			} else {
				sreq.HandlerId, sreq.AfterSeq = h.GetHandlerId(), h.GetLastSeq()
				s, err := openStream(ctx, api, sreq)
				if err != nil {
					return fmt.Errorf("park: %w", err)
				}
				err = s.until(isIdle)
				s.close()
				if err != nil {
					return fmt.Errorf("park: %w", err)
				}
			}
			lat[i] = time.Since(t0)
			r.parked[i] = parkedHandler{id: h.GetHandlerId(), replica: r.replicaOf(w), owner: replicaNamed(h.GetOwner(), r.replicas())}
		}
	})
	if err != nil {
		return nil, err
	}
	p := m.stop(n)
	p.Latency, p.Ack = summarize(lat), summarize(ack)
	p.DoneInResponse = int(inResponse.Load())
	return p, nil
}

// resume answers every parked handler from cfg.C workers and waits, for
// each, until it completes (see answer).
func (r *runner) resume(ctx context.Context) (*phaseResult, error) {
	return r.answer(ctx, r.parked, r.cfg.C)
}

// answer answers every handler of hs from c workers and waits, for each,
// until it completes. SendEvent returns once the event's change is
// durable; when the handler finished in that same change (a quick step
// after the answer shares its commit), the response already says so and
// that is the observed completion. Otherwise the worker follows the
// handler's stream from the response's last sequence number until its
// HandlerFinished record, as a client waiting for the result would.
func (r *runner) answer(ctx context.Context, hs []parkedHandler, c int) (*phaseResult, error) {
	n := len(hs)
	lat := make([]time.Duration, n)
	ack := make([]time.Duration, n)
	answer := &wfdv1.Event{Type: approvalEvent, Data: &structpb.Struct{Fields: map[string]*structpb.Value{
		"approved": structpb.NewBoolValue(true),
	}}}
	var next, inResponse, elsewhere atomic.Int64
	m := r.startMeter()
	err := r.workers(ctx, c, func(ctx context.Context, w int) error {
		api := r.api(w)
		req := &wfdv1.SendEventRequest{Event: answer}
		sreq := &wfdv1.StreamEventsRequest{IncludeInternal: true}
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return nil
			}
			req.HandlerId = hs[i].id
			owner := hs[i].owner
			if owner < 0 {
				owner = hs[i].replica
			}
			api, via := api, r.replicaOf(w)
			if r.cfg.Route == routeOwner {
				api, via = r.apiOn(owner, w), owner
			}
			if via != owner {
				elsewhere.Add(1)
			}
			t0 := time.Now()
			res, err := api.SendEvent(ctx, req)
			if err != nil {
				return fmt.Errorf("resume: SendEvent: %w", err)
			}
			ack[i] = time.Since(t0)
			h := res.GetHandler()
			switch h.GetStatus() {
			case wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED:
				inResponse.Add(1)
			case wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING:
				sreq.HandlerId, sreq.AfterSeq = h.GetHandlerId(), h.GetLastSeq()
				s, err := openStream(ctx, api, sreq)
				if err != nil {
					return fmt.Errorf("resume: %w", err)
				}
				err = s.until(isFinished)
				s.close()
				if err != nil {
					return fmt.Errorf("resume: %w", err)
				}
			default:
				return fmt.Errorf("resume: handler %s ended %v: %s", h.GetHandlerId(), h.GetStatus(), h.GetError())
			}
			lat[i] = time.Since(t0)
		}
	})
	if err != nil {
		return nil, err
	}
	p := m.stop(n)
	p.Latency, p.Ack = summarize(lat), summarize(ack)
	p.DoneInResponse = int(inResponse.Load())
	if r.replicas() > 1 {
		p.ThroughOtherReplica = int(elsewhere.Load())
	}
	return p, nil
}

// workers runs fn on c goroutines and returns the first error; the first
// error cancels the others.
func (r *runner) workers(ctx context.Context, c int, fn func(ctx context.Context, w int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for w := range c {
		wg.Go(func() {
			if err := fn(ctx, w); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	return first
}

func benchInput(phase string) *structpb.Struct {
	return &structpb.Struct{Fields: map[string]*structpb.Value{"bench": structpb.NewStringValue(phase)}}
}

// meter measures a phase's wall time, the CPU time the server and this
// process spend in it, and the server's commit counters (GetStats).
type meter struct {
	r                *runner
	start            time.Time
	srv, self, wrk   time.Duration
	srvOK, ok, wrkOK bool
	pg               time.Duration
	pgOK             bool
	stats            *wfdv1.GetStatsResponse
	// The machine's stolen and total CPU ticks (machineCPU).
	steal, total uint64
	machineOK    bool
}

func (r *runner) startMeter() meter {
	m := meter{r: r, stats: r.stats()}
	if pids := r.pids(); pids != nil {
		var err error
		m.srv, err = cpuTimeSum(pids)
		m.srvOK = err == nil
	}
	if r.pg != nil {
		var err error
		m.pg, err = r.pg.cpu()
		m.pgOK = err == nil
	}
	if r.workerPID != 0 {
		var err error
		m.wrk, err = cpuTime(r.workerPID)
		m.wrkOK = err == nil
	}
	var err error
	m.self, err = selfCPU()
	m.ok = err == nil
	m.steal, m.total, err = machineCPU()
	m.machineOK = err == nil
	m.start = time.Now()
	return m
}

// stop returns the phase's result for n operations, without latencies.
func (m meter) stop(n int) *phaseResult {
	wall := time.Since(m.start)
	p := &phaseResult{Count: n, WallSeconds: wall.Seconds(), PerSecond: float64(n) / wall.Seconds()}
	if m.srvOK {
		if t, err := cpuTimeSum(m.r.pids()); err == nil {
			p.ServerCPUSeconds = (t - m.srv).Seconds()
			p.ServerCPUPerOp = float64((t - m.srv).Microseconds()) / float64(n)
		}
	}
	if m.pgOK {
		if t, err := m.r.pg.cpu(); err == nil {
			p.PostgresCPUSeconds = (t - m.pg).Seconds()
			p.PostgresCPUPerOp = float64((t - m.pg).Microseconds()) / float64(n)
		}
	}
	if m.wrkOK {
		if t, err := cpuTime(m.r.workerPID); err == nil {
			p.WorkerCPUSeconds = (t - m.wrk).Seconds()
			p.WorkerCPUPerOp = float64((t - m.wrk).Microseconds()) / float64(n)
		}
	}
	if m.ok {
		if t, err := selfCPU(); err == nil {
			p.BenchCPUSeconds = (t - m.self).Seconds()
			p.BenchCPUPerOp = float64((t - m.self).Microseconds()) / float64(n)
		}
	}
	if m.machineOK {
		if steal, total, err := machineCPU(); err == nil && total > m.total {
			pct := 100 * float64(steal-m.steal) / float64(total-m.total)
			p.StealPercent = &pct
		}
	}
	if m.stats != nil {
		if st := m.r.stats(); st != nil {
			p.Server = &serverStats{
				Commits:      st.GetCommitsTotal() - m.stats.GetCommitsTotal(),
				Changes:      st.GetChangesTotal() - m.stats.GetChangesTotal(),
				Rehydrations: st.GetRehydrationsTotal() - m.stats.GetRehydrationsTotal(),
				Releases:     st.GetReleasesTotal() - m.stats.GetReleasesTotal(),
				Active:       st.GetHandlersActive(),
				IdleInMemory: st.GetHandlersIdleInMemory(),
			}
		}
	}
	return p
}

// stats asks the server (every replica) for its counters, summed over
// the replicas; nil if it cannot say (an older server without GetStats).
func (r *runner) stats() *wfdv1.GetStatsResponse {
	if r.noStats {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sum := &wfdv1.GetStatsResponse{}
	for i := range r.replicas() {
		res, err := r.api(i).GetStats(ctx, &wfdv1.GetStatsRequest{})
		if err != nil {
			r.noStats = true
			return nil
		}
		if r.replicas() == 1 {
			return res // all of it (--mode release reads more than the sums)
		}
		sum.HandlersReleased += res.GetHandlersReleased()
		sum.CommitsTotal += res.GetCommitsTotal()
		sum.ChangesTotal += res.GetChangesTotal()
		sum.RehydrationsTotal += res.GetRehydrationsTotal()
		sum.ReleasesTotal += res.GetReleasesTotal()
		sum.HandlersActive += res.GetHandlersActive()
		sum.HandlersIdleInMemory += res.GetHandlersIdleInMemory()
	}
	return sum
}

// cpuTimeSum is the CPU time pids have used, summed.
func cpuTimeSum(pids []int) (time.Duration, error) {
	var sum time.Duration
	for _, pid := range pids {
		t, err := cpuTime(pid)
		if err != nil {
			return 0, err
		}
		sum += t
	}
	return sum, nil
}

// benchAttributes are the search attributes of parked handler i
// (--attrs): what the approval workflow declares.
func benchAttributes(i int) *structpb.Struct {
	return &structpb.Struct{Fields: map[string]*structpb.Value{
		"requester": structpb.NewStringValue(fmt.Sprintf("user-%d", i%1000)),
		"priority":  structpb.NewNumberValue(float64(i % 5)),
	}}
}
