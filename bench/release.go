package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// serverLatencyWindow is how many of the latest rehydrations the server's
// GetStats rehydrate_latency_p50/p99 cover (server/stats.go).
const serverLatencyWindow = 1024

// The targets --mode release compares against.
const (
	targetIdleBytes       = 4 << 10 // per idle handler in memory
	targetReleasedRSS     = 100     // bytes of RSS per released handler
	targetReleasedDisk    = 2 << 10 // bytes of disk per released handler
	targetRehydrateP99One = 5.0     // ms, 1 client
	targetRehydrateP99C   = 30.0    // ms, 32 clients
	targetStartupSeconds  = 1.0     // with 100,000 released handlers
	targetStartupN        = 100000
)

// runRelease is --mode release. It starts the server with --idle-timeout 0,
// so that only the benchmark releases handlers, warms it up (see
// warmRelease), and then:
//
//  1. parks n approval handlers (-c clients) and reads the server's memory
//     before and after: the cost of an idle handler kept in memory;
//  2. releases all n (ReleaseHandler from -c clients) and reads the memory
//     right after, after --settle, and after a forced GC and --settle
//     again: the cost of a released handler; then the size of the bbolt
//     file once the server has stopped;
//  3. restarts the server on the same data directory and times process
//     start → health check SERVING and → first ListWorkflows;
//  4. answers released handlers on the restarted server, --rehydrate of
//     them from 1 client and another --rehydrate from -c clients: SendEvent
//     → HandlerFinished, and the server's own rehydration counters.
//
// The start-up is measured before the rehydrate runs, so that all n
// handlers are released in the store when the server starts.
func runRelease(ctx context.Context, cfg config, log io.Writer) (res *Result, err error) {
	res = &Result{Config: resultConfig{
		Mode: modeRelease, N: cfg.N, C: cfg.C, Conns: cfg.Conns, Client: cfg.Client, Protocol: cfg.Protocol, Gzip: cfg.Gzip,
		Fsync: "on (the server's default)",
	}}
	rel := &releaseResult{RehydrateN: cfg.Rehydrate, SettleSeconds: cfg.Settle.Seconds()}
	res.Release = rel
	srv, err := startChild(cfg, cfg.ServerGC, "--idle-timeout", "0")
	if err != nil {
		return nil, err
	}
	cur := srv // the server to stop at the end
	defer func() {
		if serr := cur.stop(cfg.Grace); serr != nil {
			err = errors.Join(err, serr)
		}
	}()
	res.Config.Server = "started: " + strings.Join(srv.args, " ")
	res.Config.ServerPID = srv.pid()
	r := &runner{cfg: cfg, res: &res.modeResult, echoWF: echoWorkflow, approvalWF: approvalWorkflow}
	defer func() { r.cl.close() }()
	r.attach(srv)
	if err := waitHealthy(ctx, r.cl, srv, 10*time.Millisecond); err != nil {
		return nil, err
	}
	if err := r.warmup(ctx); err != nil {
		return res, err
	}
	if r.stats() == nil {
		return res, errors.New("the server does not answer GetStats, which --mode release needs")
	}
	mem := &rel.Memory
	progress := func(format string, args ...any) {
		fmt.Fprintf(log, "wfd bench: "+format+"\n", args...)
	}
	progress("warming up: parking, releasing and answering %d handlers", releaseWarmup)
	if err := r.warmRelease(ctx, releaseWarmup); err != nil {
		return res, err
	}

	// 1. Footprint of idle handlers in memory; 2. release them all.
	if err := r.measureIdle(ctx, srv, rel, progress); err != nil {
		return res, err
	}
	if err := r.measureReleased(ctx, srv, rel, progress); err != nil {
		return res, err
	}

	// 3. Stop, then start again with the n released handlers in the store.
	progress("restarting the server with %d released handlers in the store", rel.ReleasedAfterRelease)
	// Close the client connections first: the server's graceful shutdown
	// would otherwise wait for them (HTTP/2 gives a client 1 s after its
	// GOAWAY), and the time to stop is the server's own.
	r.cl.close()
	t0 := time.Now()
	if err := srv.terminate(cfg.Grace); err != nil {
		return res, err
	}
	stopped := time.Since(t0)
	if err := rel.Disk.read(rel.Disk.Path, cfg.N); err != nil {
		return res, fmt.Errorf("reading the store's size: %w", err)
	}
	srv2, err := srv.restart()
	if err != nil {
		return res, err
	}
	cur = srv2
	res.Config.Restarted = strings.Join(srv2.args, " ")
	res.Config.RestartedPID = srv2.pid()
	r.attach(srv2)
	if rel.Startup, err = r.startup(ctx, srv2); err != nil {
		return res, err
	}
	rel.Startup.StopSeconds = stopped.Seconds()
	if err := r.warmup(ctx); err != nil {
		return res, err
	}
	if mem.AfterRestart, err = r.memory(ctx, srv2, true, 0); err != nil {
		return res, err
	}
	mem.perHandler(cfg.N)

	// 4. Rehydrate: disjoint sets of released handlers, at 1 and -c clients.
	if err := r.measureRehydrate(ctx, rel, progress); err != nil {
		return res, err
	}
	rel.Targets = releaseTargets(rel, cfg.N)
	return res, nil
}

// measureIdle is --mode release's first phase, the footprint of idle
// handlers in memory: it parks n approval handlers from -c clients and
// reads the server's memory before and after.
func (r *runner) measureIdle(ctx context.Context, srv *child, rel *releaseResult, progress func(string, ...any)) (err error) {
	mem := &rel.Memory
	if mem.BeforePark, err = r.memory(ctx, srv, true, 0); err != nil {
		return err
	}
	progress("parking %d approval handlers from %d clients", r.cfg.N, r.cfg.C)
	if rel.Park, err = r.park(ctx); err != nil {
		return err
	}
	rel.IdleInMemory = r.stats().GetHandlersIdleInMemory()
	if mem.AfterPark, err = r.memory(ctx, srv, false, 0); err != nil {
		return err
	}
	if r.cfg.ServerGC {
		if mem.AfterPark.HeapLive, err = r.gcHeap(ctx, srv); err != nil {
			return err
		}
	}
	return r.saveHeap(ctx, srv, rel, ".parked")
}

// measureReleased is the second phase, the cost of a released handler: it
// releases all n from -c clients and reads the memory right after, after
// --settle, and after a forced GC and --settle again, and the size of the
// bbolt file while the server runs.
func (r *runner) measureReleased(ctx context.Context, srv *child, rel *releaseResult, progress func(string, ...any)) (err error) {
	mem := &rel.Memory
	progress("releasing %d handlers from %d clients", r.cfg.N, r.cfg.C)
	if rel.Release, err = r.releaseAll(ctx); err != nil {
		return err
	}
	st := r.stats()
	rel.ReleasedAfterRelease, rel.InMemoryAfterRelease = st.GetHandlersReleased(), st.GetHandlersActive()
	if mem.AfterRelease, err = r.memory(ctx, srv, false, 0); err != nil {
		return err
	}
	dbPath := filepath.Join(srv.data, "wfd.db")
	rel.Disk = &diskResult{Path: dbPath}
	if fi, err := os.Stat(dbPath); err == nil {
		rel.Disk.FileBytesRunning = fi.Size()
	}
	progress("waiting %v, then forcing a GC and waiting %v, for the server to return memory", r.cfg.Settle, r.cfg.Settle)
	if mem.AfterSettle, err = r.memory(ctx, srv, false, r.cfg.Settle); err != nil {
		return err
	}
	if !r.cfg.ServerGC {
		return nil
	}
	if mem.AfterGC, err = r.memory(ctx, srv, true, r.cfg.Settle); err != nil {
		return err
	}
	return r.saveHeap(ctx, srv, rel, ".released")
}

// measureRehydrate is the last phase: it answers disjoint sets of
// --rehydrate released handlers on the restarted server, from 1 client
// and then from -c.
func (r *runner) measureRehydrate(ctx context.Context, rel *releaseResult, progress func(string, ...any)) error {
	k := r.cfg.Rehydrate
	for i, c := range []int{1, r.cfg.C} {
		set := r.parked[i*k : (i+1)*k]
		progress("rehydrating %d released handlers from %s", len(set), nClients(c))
		rr, err := r.rehydrate(ctx, set, c)
		if err != nil {
			return err
		}
		rel.Rehydrate = append(rel.Rehydrate, rr)
	}
	return nil
}

// releaseWarmup is how many handlers warmRelease takes through their life.
const releaseWarmup = 100

// reclaimWait is how long warmRelease waits after its releases: the server
// reclaims memory once releases have stopped for a second.
const reclaimWait = 2 * time.Second

// warmRelease parks, releases and answers n handlers, then waits for the
// server's reclaim, before the first memory reading. What the server does
// once and keeps (code paged in, lazy initialisation, buffers sized for its
// clients) is then part of the baseline, not divided among the measured
// handlers as if each cost a share of it.
func (r *runner) warmRelease(ctx context.Context, n int) error {
	saved := r.cfg.N
	r.cfg.N = n
	defer func() { r.cfg.N, r.parked = saved, nil }()
	if _, err := r.park(ctx); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if _, err := r.releaseAll(ctx); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if _, err := r.answer(ctx, r.parked, min(r.cfg.C, n)); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	return sleep(ctx, reclaimWait)
}

// attach points the runner at a (re)started server.
func (r *runner) attach(c *child) {
	if r.cl != nil {
		r.cl.close()
	}
	r.cl = newClients(c.addr, r.cfg, nil)
	r.pid = c.pid()
	r.noStats = false
}

// memory reads the server's resident memory after waiting wait. With gc
// (and --server-gc) it first forces a garbage collection through the
// server's pprof endpoint and records the live heap it leaves.
func (r *runner) memory(ctx context.Context, c *child, gc bool, wait time.Duration) (*memReading, error) {
	m := &memReading{}
	if gc && r.cfg.ServerGC {
		var err error
		if m.HeapLive, err = r.gcHeap(ctx, c); err != nil {
			return nil, err
		}
	}
	// Sample at each whole second of the wait, to show how the memory
	// moves: a wait of 2.5 s has samples at 1 s and 2 s, however late a
	// busy machine wakes the sampler.
	start := time.Now()
	for at := time.Second; at < wait; at += time.Second {
		if err := sleep(ctx, time.Until(start.Add(at))); err != nil {
			return nil, err
		}
		s, err := rss(c.pid())
		if err != nil {
			return nil, fmt.Errorf("reading the server's memory: %w", err)
		}
		m.Trace = append(m.Trace, s)
	}
	if err := sleep(ctx, time.Until(start.Add(wait))); err != nil {
		return nil, err
	}
	s, err := rss(c.pid())
	if err != nil {
		return nil, fmt.Errorf("reading the server's memory: %w", err)
	}
	m.memSample = s
	return m, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// releaseAll releases every parked handler from cfg.C workers. The latency
// is the ReleaseHandler call, which returns once the release is durable.
func (r *runner) releaseAll(ctx context.Context) (*phaseResult, error) {
	n := len(r.parked)
	lat := make([]time.Duration, n)
	var next atomic.Int64
	m := r.startMeter()
	err := r.workers(ctx, r.cfg.C, func(ctx context.Context, w int) error {
		api := r.cl.api(w)
		req := &wfdv1.ReleaseHandlerRequest{}
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return nil
			}
			req.HandlerId = r.parked[i].id
			t0 := time.Now()
			res, err := api.ReleaseHandler(ctx, req)
			if err != nil {
				return fmt.Errorf("release: ReleaseHandler %s: %w", req.HandlerId, err)
			}
			lat[i] = time.Since(t0)
			if got := res.GetHandler().GetResidency(); got != wfdv1.Residency_RESIDENCY_RELEASED {
				return fmt.Errorf("release: handler %s is %v after ReleaseHandler", req.HandlerId, got)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	p := m.stop(n)
	p.Latency = summarize(lat)
	return p, nil
}

// startup times a just started server: process start → the health check
// answers SERVING (polled every millisecond) → the first ListWorkflows
// succeeds; then asks it what it holds.
func (r *runner) startup(ctx context.Context, c *child) (*startupResult, error) {
	if err := waitHealthy(ctx, r.cl, c, time.Millisecond); err != nil {
		return nil, err
	}
	s := &startupResult{ServingSeconds: time.Since(c.started).Seconds()}
	for {
		_, err := r.cl.api(0).ListWorkflows(ctx, &wfdv1.ListWorkflowsRequest{})
		if err == nil {
			break
		}
		if err := sleep(ctx, time.Millisecond); err != nil {
			return nil, fmt.Errorf("ListWorkflows after start-up: %w", err)
		}
	}
	s.ListSeconds = time.Since(c.started).Seconds()
	st := r.stats()
	if st == nil {
		return nil, errors.New("the restarted server does not answer GetStats")
	}
	s.Released, s.InMemory = st.GetHandlersReleased(), st.GetHandlersActive()
	return s, nil
}

// rehydrate answers the released handlers hs from c clients (see answer)
// and reads the server's rehydration counters around it.
func (r *runner) rehydrate(ctx context.Context, hs []parkedHandler, c int) (*rehydrateResult, error) {
	c = min(c, len(hs))
	p, err := r.answer(ctx, hs, c)
	if err != nil {
		return nil, fmt.Errorf("rehydrate at %d clients: %w", c, err)
	}
	rr := &rehydrateResult{Clients: c, phaseResult: p, ServerWindow: min(len(hs), serverLatencyWindow)}
	st := r.stats()
	if st == nil || p.Server == nil {
		return nil, errors.New("rehydrate: the server stopped answering GetStats")
	}
	rr.ServerP50 = ms(st.GetRehydrateLatencyP50().AsDuration())
	rr.ServerP99 = ms(st.GetRehydrateLatencyP99().AsDuration())
	rr.LoadedOnce = p.Server.Rehydrations == int64(len(hs))
	return rr, nil
}

// perHandler fills the per-handler differences from the readings.
func (m *releaseMemory) perHandler(n int) {
	if m.BeforePark == nil {
		return
	}
	m.PerIdle = diffPer(m.AfterPark, m.BeforePark, n)
	settled := m.AfterGC
	m.PerReleasedFrom = "after GC + settle"
	if settled == nil {
		settled, m.PerReleasedFrom = m.AfterSettle, "after settle"
	}
	m.PerReleased = diffPer(settled, m.BeforePark, n)
	m.PerReleasedRestart = diffPer(m.AfterRestart, m.BeforePark, n)
}

func diffPer(after, before *memReading, n int) *perHandler {
	if after == nil || before == nil {
		return nil
	}
	p := &perHandler{
		RSS:  (after.RSS - before.RSS) / int64(n),
		Anon: (after.Anon - before.Anon) / int64(n),
	}
	if after.HeapLive > 0 && before.HeapLive > 0 {
		h := (after.HeapLive - before.HeapLive) / int64(n)
		p.HeapLive = &h
	}
	return p
}

// releaseTargets compares the results with the targets.
func releaseTargets(rel *releaseResult, n int) []target {
	var ts []target
	add := func(name, measure string, value, limit float64, unit, note string) {
		ts = append(ts, target{Name: name, Measure: measure, Value: value, Limit: limit, Unit: unit, Pass: value < limit, Note: note})
	}
	m := rel.Memory
	if p := m.PerIdle; p != nil {
		add("idle handler in memory", "RssAnon (after park - before park) / n", float64(p.Anon), targetIdleBytes, "B", "")
		add("idle handler in memory", "VmRSS (after park - before park) / n", float64(p.RSS), targetIdleBytes, "B", "")
		if p.HeapLive != nil {
			add("idle handler in memory", "Go live heap after GC (after park - before park) / n", float64(*p.HeapLive), targetIdleBytes, "B", "without the GC's headroom")
		}
	}
	if p := m.PerReleased; p != nil {
		add("released handler, memory", "RssAnon ("+m.PerReleasedFrom+" - before park) / n", float64(p.Anon), targetReleasedRSS, "B", "")
		add("released handler, memory", "VmRSS ("+m.PerReleasedFrom+" - before park) / n", float64(p.RSS), targetReleasedRSS, "B", "")
	}
	if p := m.PerReleasedRestart; p != nil {
		add("released handler, memory", "VmRSS (after restart - before park) / n", float64(p.RSS), targetReleasedRSS, "B", "")
	}
	if d := rel.Disk; d != nil {
		add("released handler, disk", "wfd.db file size / n", float64(d.PerReleased), targetReleasedDisk, "B", "")
	}
	note := ""
	if n < targetStartupN {
		note = fmt.Sprintf("n=%d; the target is for %d", n, targetStartupN)
	}
	for i, rr := range rel.Rehydrate {
		limit := targetRehydrateP99One
		if i > 0 {
			limit = targetRehydrateP99C
		}
		cnote := ""
		if i > 0 && rr.Clients != 32 {
			cnote = "the target is for 32 clients"
		}
		add("rehydrate p99, "+nClients(rr.Clients), "SendEvent → HandlerFinished", rr.Latency.P99, limit, "ms", cnote)
	}
	if s := rel.Startup; s != nil {
		add("start-up", fmt.Sprintf("process start → SERVING, %d released", s.Released), s.ServingSeconds, targetStartupSeconds, "s", note)
	}
	return ts
}

func nClients(c int) string {
	if c == 1 {
		return "1 client"
	}
	return fmt.Sprintf("%d clients", c)
}
