package histcheck

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// restartDuringTakeover is issue 23's point 1.
func (n *Nemesis) restartDuringTakeover(ctx context.Context, victim *Replica, count int) (string, error) {
	ids, err := n.own(ctx, victim, count)
	if err != nil {
		return "", err
	}
	at := time.Now()
	if err := victim.Kill(); err != nil {
		return "", err
	}
	first := make(chan struct{})
	var once sync.Once
	served := func(int) { once.Do(func() { close(first) }) }
	var restart sync.WaitGroup
	var rerr error
	var restarted time.Time
	restart.Go(func() {
		select {
		case <-first:
		case <-ctx.Done():
			return
		}
		restarted = time.Now()
		rerr = victim.Start(ctx)
	})
	acks := n.answerAll(ctx, ids, victim.ID, "", 64, served)
	served(-1) // none served: restart it anyway
	restart.Wait()
	t := n.measure(ScheduleRestartDuringTakeover, "kill", victim, at, acks, false, 0)
	return fmt.Sprintf("%d handlers owned by %s, %d answered through the others; restarted %v after the kill (first served after %v)",
		len(ids), victim.ID, countSet(acks), restarted.Sub(at).Round(time.Millisecond), t.First.Round(time.Millisecond)), rerr
}

// timers is point 2: expense handlers owned by the victim, which is
// killed about a second after they start and restarted; then it waits
// (bounded) for them to expire.
func (n *Nemesis) timers(ctx context.Context, victim *Replica, count int) (string, error) {
	ids := n.newIDs("n-e", count)
	deadlines := make([]float64, count)
	for i := range deadlines {
		deadlines[i] = float64(2 + n.rng.IntN(3))
	}
	var firstNanos atomic.Int64
	err := n.parallel(ctx, count, 16, "", victim.ID, func(k *Caller, i int) error {
		n.h.Plan(ids[i], Spec{Workflow: Expense, DeadlineS: deadlines[i]})
		err := k.Start(ctx, ids[i], Expense, map[string]any{"approver": "x", "deadline_s": deadlines[i]})
		if err == nil {
			firstNanos.CompareAndSwap(0, time.Now().UnixNano())
		}
		return err
	})
	if err != nil {
		return "", err
	}
	first := time.Unix(0, firstNanos.Load())
	sleep(ctx, time.Until(first.Add(time.Second)))
	killed := time.Now()
	if err := victim.Kill(); err != nil {
		return "", err
	}
	// Two ways, in turn. Odd rounds: restarted as soon as another replica
	// has fired one of the timers (at most TTL + 2 s after the kill),
	// while the rest are being swept and fired. Even rounds: restarted as
	// soon as its leases have expired (the others no longer see it as the
	// owner), before they sweep its handlers, and stalled (SIGSTOP) once
	// its start-up recovery has read what it will recover, as on a crowded
	// machine: the window between what it read and what it writes then
	// spans the others' sweep and the timers they fire. Less than half a
	// TTL: a replica whose renewals are late by that much gives up its
	// start-up. Either way its recovery races their commits.
	n.mu.Lock()
	n.timerRounds++
	even := n.timerRounds%2 == 0
	n.mu.Unlock()
	var stall time.Duration
	var when func(context.Context) bool
	trigger := "a timer fired elsewhere"
	if even {
		n.disowned(ctx, ids[0], victim.ID, n.c.TTL+2*time.Second)
		stall = n.between(n.c.TTL/4, n.c.TTL/2-100*time.Millisecond)
		when = func(ctx context.Context) bool { return n.c.Recovering(ctx, victim.ID) }
		trigger = "its leases expired"
	} else {
		n.firstTerminal(ctx, ids, deadlines, victim.ID, n.c.TTL+2*time.Second)
	}
	delay := time.Since(killed)
	rerr := victim.StartStalled(ctx, when, stall)
	bound := 4*time.Second + 3*n.c.TTL + 30*time.Second
	done := n.waitTerminal(ctx, ids, bound)
	stalled := ""
	if stall > 0 {
		stalled = fmt.Sprintf(", stalled %v once its recovery had read", stall.Round(time.Millisecond))
	}
	return fmt.Sprintf("%d expense handlers (deadlines 2-4 s) on %s, killed %v after the first start, restarted %v later (%s)%s; %d finished within %v",
		count, victim.ID, killed.Sub(first).Round(time.Millisecond), delay.Round(time.Millisecond), trigger, stalled, done, bound), rerr
}

// disowned polls handler id through replicas other than owner until they
// no longer name owner as its owner (its lease expired), or bound passes.
func (n *Nemesis) disowned(ctx context.Context, id, owner string, bound time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	k := n.c.Caller(n.h, rand.New(rand.NewPCG(n.rng.Uint64(), 0)), n.callTimeout).With(owner, "")
	for ctx.Err() == nil {
		if h, err := k.Get(ctx, id); err == nil && h.GetOwner() != owner {
			return
		}
		sleep(ctx, 5*time.Millisecond)
	}
}

// firstTerminal polls the handlers with the earliest deadline, through
// replicas other than avoid, until one has finished or bound passes.
func (n *Nemesis) firstTerminal(ctx context.Context, ids []string, deadlines []float64, avoid string, bound time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var early []string
	for i, id := range ids {
		if deadlines[i] == slices.Min(deadlines) {
			early = append(early, id)
		}
	}
	k := n.c.Caller(n.h, rand.New(rand.NewPCG(n.rng.Uint64(), 0)), n.callTimeout).With(avoid, "")
	for i := 0; ctx.Err() == nil; i++ {
		if h, err := k.Get(ctx, early[i%len(early)]); err == nil && terminal(h.GetStatus()) {
			return
		}
		sleep(ctx, 5*time.Millisecond)
	}
}

// pausedOwner is point 3: the owner of idle handlers SIGSTOPped beyond the
// TTL while each is answered through the others. The owner is paused
// while it commits: busy with starts, and with answers to a third of the
// handlers, sent to it a few at a time until the pause finds one of their
// lease rows locked in an open transaction (their callers then time out
// and retry through the others: the answers applied at SIGCONT).
// The other two thirds are answered through the others once it is paused:
// each one's time from the pause is a takeover.
func (n *Nemesis) pausedOwner(ctx context.Context, victim *Replica, count int) (string, error) {
	ids, err := n.own(ctx, victim, count)
	if err != nil {
		return "", err
	}
	sent, rest := ids[:len(ids)/3], ids[len(ids)/3:]
	hold := n.between(n.c.TTL+3*time.Second, 3*n.c.TTL+3*time.Second)
	stopBusy, waitBusy := n.busy(ctx, victim, 8)
	defer waitBusy()
	sleep(ctx, n.between(200*time.Millisecond, 500*time.Millisecond))
	var sentAcks, restAcks []ack
	var wg sync.WaitGroup
	wg.Go(func() { sentAcks = n.answerAll(ctx, sent, "", victim.ID, 2, nil) })
	at, holding, err := n.pauseHolding(ctx, victim, sent)
	stopBusy()
	if err != nil {
		wg.Wait()
		return "", err
	}
	wg.Go(func() { restAcks = n.answerAll(ctx, rest, victim.ID, "", len(rest), nil) })
	sleep(ctx, hold)
	rerr := victim.Resume()
	wg.Wait()
	t := n.measure(SchedulePausedOwner, "pause", victim, at, append(sentAcks, restAcks...), true, hold)
	return fmt.Sprintf("%d handlers owned by %s, paused %v%s with %d answers sent to it (%d acknowledged by it); served elsewhere after: %s",
		len(ids), victim.ID, hold.Round(time.Millisecond), map[bool]string{true: " holding one's lease row", false: ""}[holding],
		len(sent), countVia(sentAcks, victim.ID), Summarize(t.Each)), rerr
}

// busy keeps victim committing until stop is called: w goroutines start
// approval handlers through it (through the others once it is paused; a
// start in flight at the pause is retried there), so that a pause lands
// mid-commit, with the victim's database session inside a transaction
// that holds lease rows the others then need.
func (n *Nemesis) busy(ctx context.Context, victim *Replica, w int) (stop, wait func()) {
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for g := range w {
		k := n.c.Caller(n.h, rand.New(rand.NewPCG(n.rng.Uint64(), uint64(g))), n.callTimeout)
		k.Prefer = victim.ID
		wg.Go(func() {
			for !stopped.Load() && ctx.Err() == nil {
				id := n.newIDs("n-b", 1)[0]
				n.h.Plan(id, Spec{Workflow: Approval})
				octx, cancel := context.WithTimeout(ctx, 2*time.Minute)
				_ = k.Start(octx, id, Approval, map[string]any{"amount": 1.0}) // in the history
				cancel()
			}
		})
	}
	return func() { stopped.Store(true) }, func() { stopped.Store(true); wg.Wait() }
}

// own starts count approval handlers through victim alone and waits
// until each is idle in its memory, owned by it (as another replica
// reads). It returns those owned; none is an error.
func (n *Nemesis) own(ctx context.Context, victim *Replica, count int) ([]string, error) {
	ids := n.newIDs("n-a", count)
	err := n.parallel(ctx, count, 16, "", victim.ID, func(k *Caller, i int) error {
		n.h.Plan(ids[i], Spec{Workflow: Approval})
		if err := k.Start(ctx, ids[i], Approval, map[string]any{"amount": float64(i)}); err != nil {
			return err
		}
		return k.WaitParked(ctx, ids[i])
	})
	if err != nil {
		return nil, fmt.Errorf("histcheck: handlers for %s: %w", victim.ID, err)
	}
	owned := make([]bool, count)
	_ = n.parallel(ctx, count, 8, victim.ID, "", func(k *Caller, i int) error {
		h, err := k.Get(ctx, ids[i])
		owned[i] = err == nil && h.GetOwner() == victim.ID && h.GetResidency() == wfdv1.Residency_RESIDENCY_ACTIVE
		return nil
	})
	var out []string
	for i, ok := range owned {
		if ok {
			out = append(out, ids[i])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("histcheck: none of %d handlers started through %s is owned by it", count, victim.ID)
	}
	if len(out) < count {
		n.log.Warn("nemesis: not every handler is owned by the victim", "victim", victim.ID, "owned", len(out), "of", count)
	}
	return out, nil
}

// ack is when a call was acknowledged (zero: never) and through which
// replica.
type ack struct {
	at  time.Time
	via string
}

// answerAll answers ids (approved when even) on w goroutines, through
// replicas other than avoid (first through prefer while it is up), each
// retried until acknowledged, and returns the acknowledgements. onAck is
// called at each.
func (n *Nemesis) answerAll(ctx context.Context, ids []string, avoid, prefer string, w int, onAck func(int)) []ack {
	acks := make([]ack, len(ids))
	_ = n.parallel(ctx, len(ids), w, avoid, "", func(k *Caller, i int) error {
		octx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		k.Prefer = prefer
		if err := k.Answer(octx, ids[i], Answer{Approved: i%2 == 0, Comment: "for " + ids[i]}); err != nil {
			n.log.Warn("nemesis: answer not acknowledged", "handler", ids[i], "err", err)
			return nil
		}
		acks[i] = ack{at: time.Now(), via: k.via}
		if onAck != nil {
			onAck(i)
		}
		return nil
	})
	return acks
}

// waitTerminal polls ids until each has finished or bound passes, and
// returns how many finished.
func (n *Nemesis) waitTerminal(ctx context.Context, ids []string, bound time.Duration) int {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	k := n.c.Caller(n.h, rand.New(rand.NewPCG(n.rng.Uint64(), 0)), n.callTimeout)
	left := append([]string(nil), ids...)
	for len(left) > 0 && ctx.Err() == nil {
		var still []string
		for _, id := range left {
			if h, err := k.Get(ctx, id); err != nil || !terminal(h.GetStatus()) {
				still = append(still, id)
			}
		}
		left = still
		if len(left) > 0 {
			sleep(ctx, 200*time.Millisecond)
		}
	}
	return len(ids) - len(left)
}

// parallel runs fn(k, 0..count-1) on w goroutines, each with a Caller of
// its own (avoid and only as Caller.With; seeded from the nemesis), and
// returns the first error.
func (n *Nemesis) parallel(ctx context.Context, count, w int, avoid, only string, fn func(k *Caller, i int) error) error {
	w = max(1, min(w, count))
	callers := make([]*Caller, w)
	for i := range callers {
		callers[i] = n.c.Caller(n.h, rand.New(rand.NewPCG(n.rng.Uint64(), uint64(i))), n.callTimeout).With(avoid, only)
	}
	var next atomic.Int64
	errs := make([]error, w)
	var wg sync.WaitGroup
	for g := range w {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= count || ctx.Err() != nil {
					return
				}
				if err := fn(callers[g], i); err != nil && errs[g] == nil {
					errs[g] = err
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (n *Nemesis) newIDs(prefix string, count int) []string {
	n.mu.Lock()
	base := n.probes
	n.probes += count
	n.mu.Unlock()
	ids := make([]string, count)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%05d", prefix, base+i)
	}
	return ids
}

func countVia(acks []ack, via string) int {
	c := 0
	for _, a := range acks {
		if !a.at.IsZero() && a.via == via {
			c++
		}
	}
	return c
}

func countSet(acks []ack) int {
	c := 0
	for _, a := range acks {
		if !a.at.IsZero() {
			c++
		}
	}
	return c
}
