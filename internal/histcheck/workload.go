package histcheck

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// WorkloadConfig says how the clients behave.
type WorkloadConfig struct {
	Clients int    // concurrent clients (default 8)
	Seed    uint64 // each client's choices come from (Seed, its index)
	// CallTimeout bounds each attempt (default 3s); OpTimeout each call
	// with its retries (default 2m, beyond any fault the nemesis makes).
	CallTimeout, OpTimeout time.Duration
}

// Workload is the clients of a run: each in turn starts an approval
// handler (waits until it parks, sometimes releases it, then answers it,
// or now and then leaves it waiting) or an expense handler with a short
// deadline (its timer completes it). A sampler reads random handlers
// meanwhile, so that a state going back is seen.
type Workload struct {
	c    *Cluster
	h    *History
	cfg  WorkloadConfig
	next atomic.Int64
	// Errors counts calls that failed for good (not retried): each is in
	// the history too.
	Errors atomic.Int64
}

// NewWorkload returns the clients of cluster c recording into h.
func NewWorkload(c *Cluster, h *History, cfg WorkloadConfig) *Workload {
	if cfg.Clients == 0 {
		cfg.Clients = 8
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = 3 * time.Second
	}
	if cfg.OpTimeout == 0 {
		cfg.OpTimeout = 2 * time.Minute
	}
	return &Workload{c: c, h: h, cfg: cfg}
}

// Run runs the clients and the sampler until ctx ends. Calls in flight
// then end unacknowledged (the checker allows either outcome for them).
func (w *Workload) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := range w.cfg.Clients {
		k := w.c.Caller(w.h, rand.New(rand.NewPCG(w.cfg.Seed, uint64(100+i))), w.cfg.CallTimeout)
		// Now and then through a paused replica, as through a balancer
		// that has not noticed: its callers must be told Unavailable (or
		// time out) and nothing they asked may be applied twice.
		k.Stale = 0.1
		wg.Go(func() { w.client(ctx, k) })
	}
	wg.Go(func() { w.sample(ctx, w.c.Caller(w.h, rand.New(rand.NewPCG(w.cfg.Seed, 99)), w.cfg.CallTimeout)) })
	wg.Wait()
}

func (w *Workload) client(ctx context.Context, k *Caller) {
	for ctx.Err() == nil {
		n := w.next.Add(1)
		var err error
		if k.rng.Float64() < 0.25 {
			err = w.expense(ctx, k, n)
		} else {
			err = w.approval(ctx, k, n)
		}
		if err != nil && ctx.Err() == nil {
			w.Errors.Add(1)
		}
		// A pause between handlers, so that two cores shared with
		// PostgreSQL and the replicas are not saturated by the clients.
		sleep(ctx, time.Duration(k.rng.IntN(100))*time.Millisecond)
	}
}

func (w *Workload) approval(ctx context.Context, k *Caller, n int64) error {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.OpTimeout)
	defer cancel()
	id := fmt.Sprintf("w-a-%06d", n)
	w.h.Plan(id, Spec{Workflow: Approval})
	if err := k.Start(ctx, id, Approval, map[string]any{"amount": float64(n)}); err != nil {
		return err
	}
	if err := k.WaitParked(ctx, id); err != nil {
		return err
	}
	if k.rng.Float64() < 0.3 {
		// Into the store: the answer must then wake it wherever it lands.
		if err := k.Release(ctx, id); err != nil {
			return err
		}
	}
	if k.rng.Float64() < 0.1 {
		return nil // left waiting: it must stay so
	}
	// Idle a little, so that some are owned by a replica when it fails.
	sleep(ctx, time.Duration(k.rng.IntN(500))*time.Millisecond)
	return k.Answer(ctx, id, Answer{Approved: n%2 == 0, Comment: "for " + id})
}

func (w *Workload) expense(ctx context.Context, k *Caller, n int64) error {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.OpTimeout)
	defer cancel()
	id := fmt.Sprintf("w-e-%06d", n)
	d := float64(1 + k.rng.IntN(4))
	w.h.Plan(id, Spec{Workflow: Expense, DeadlineS: d})
	return k.Start(ctx, id, Expense, map[string]any{"approver": "x", "deadline_s": d})
}

// sample reads a random handler every few tens of milliseconds.
func (w *Workload) sample(ctx context.Context, k *Caller) {
	for ctx.Err() == nil {
		if id := w.h.RandomHandler(k.rng); id != "" {
			cctx, cancel := context.WithTimeout(ctx, w.cfg.CallTimeout)
			_, _ = k.Get(cctx, id) // an error is no observation
			cancel()
		}
		sleep(ctx, time.Duration(10+k.rng.IntN(40))*time.Millisecond)
	}
}

// sleep waits d or until ctx ends. It paces clients and times faults; it
// never waits for a condition.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
