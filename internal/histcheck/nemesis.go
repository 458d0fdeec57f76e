package histcheck

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// The nemesis's schedules.
const (
	// ScheduleKill SIGKILLs a replica and restarts it after a random
	// delay (sometimes before its leases expire, sometimes after).
	ScheduleKill = "kill"
	// SchedulePause SIGSTOPs a replica for longer than the lease TTL,
	// then SIGCONTs it.
	SchedulePause = "pause"
	// ScheduleDBCrash crashes PostgreSQL and starts it again a few
	// seconds later.
	ScheduleDBCrash = "db-crash"
	// ScheduleRestartDuringTakeover is issue 23's point 1: the victim
	// holds many idle approval handlers; it is SIGKILLed, and restarted
	// as soon as another replica has served one of them, while the rest
	// are answered through the others.
	ScheduleRestartDuringTakeover = "restart-during-takeover"
	// ScheduleTimers is point 2: expense handlers with 2-4 s deadlines
	// owned by the victim, SIGKILLed about a second after they start and
	// restarted.
	ScheduleTimers = "timers"
	// SchedulePausedOwner is point 3: the owner of idle handlers is
	// SIGSTOPped beyond the TTL; each handler's time until it is
	// answered through another replica is measured.
	SchedulePausedOwner = "paused-owner"
)

// Schedules lists every schedule.
var Schedules = []string{ScheduleKill, SchedulePause, ScheduleDBCrash, ScheduleRestartDuringTakeover, ScheduleTimers, SchedulePausedOwner}

// weights are how often Random picks each schedule after the first pass.
var weights = map[string]int{ScheduleKill: 30, SchedulePause: 20, ScheduleDBCrash: 15, ScheduleRestartDuringTakeover: 15, ScheduleTimers: 10, SchedulePausedOwner: 10}

// Sizes are how many handlers the named schedules use (zero: random in
// the ranges).
type Sizes struct {
	Takeover    int // restart-during-takeover (100-300)
	Timers      int // timers (60-120)
	PausedOwner int // paused-owner (20-40)
}

// Step is one schedule of a fixed plan, on a victim ("": a random one).
type Step struct {
	Schedule string
	Victim   string
}

// Action is one fault as it was made.
type Action struct {
	Schedule string    `json:"schedule"`
	Victim   string    `json:"victim,omitempty"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Note     string    `json:"note,omitempty"`
	Err      string    `json:"err,omitempty"`
}

// Nemesis makes faults, one at a time, so that at least one replica is up
// and unpaused except during a database crash. Its random choices come
// from one seed.
type Nemesis struct {
	c     *Cluster
	h     *History
	rng   *rand.Rand
	sizes Sizes
	log   *slog.Logger
	// callTimeout bounds each attempt of the nemesis's own calls.
	callTimeout time.Duration

	mu          sync.Mutex
	actions     []Action
	takeovers   []Takeover
	probes      int
	timerRounds int // the timers schedule stalls the restart every other round
}

// NewNemesis returns a nemesis for c recording its probes' calls into h.
func NewNemesis(c *Cluster, h *History, seed uint64, sizes Sizes, log *slog.Logger) *Nemesis {
	return &Nemesis{c: c, h: h, rng: rand.New(&lockedSource{src: rand.NewPCG(seed, 1)}), sizes: sizes, log: log, callTimeout: 3 * time.Second}
}

// Actions returns the faults made so far.
func (n *Nemesis) Actions() []Action {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Action(nil), n.actions...)
}

// Takeovers returns the takeovers measured so far.
func (n *Nemesis) Takeovers() []Takeover {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Takeover(nil), n.takeovers...)
}

// Random makes faults until the time until: first every schedule once,
// in a random order, then schedules picked by weight, with quiet spells
// of 0.5-3 s between them.
func (n *Nemesis) Random(ctx context.Context, until time.Time) {
	first := append([]string(nil), Schedules...)
	n.rng.Shuffle(len(first), func(i, j int) { first[i], first[j] = first[j], first[i] })
	for i := 0; ctx.Err() == nil && (i < len(first) || time.Now().Before(until)); i++ {
		s := n.pick()
		if i < len(first) {
			s = first[i]
		}
		n.Do(ctx, Step{Schedule: s})
		sleep(ctx, 500*time.Millisecond+time.Duration(n.rng.IntN(2500))*time.Millisecond)
	}
}

func (n *Nemesis) pick() string {
	total := 0
	for _, s := range Schedules {
		total += weights[s]
	}
	x := n.rng.IntN(total)
	for _, s := range Schedules {
		if x -= weights[s]; x < 0 {
			return s
		}
	}
	return Schedules[0]
}

// Do runs one step and records it.
func (n *Nemesis) Do(ctx context.Context, st Step) {
	victim := n.c.Replica(st.Victim)
	if victim == nil {
		up := n.c.InState(Up)
		if len(up) == 0 {
			n.log.Warn("nemesis: no replica up", "schedule", st.Schedule)
			return
		}
		victim = up[n.rng.IntN(len(up))]
	}
	a := Action{Schedule: st.Schedule, Victim: victim.ID, Start: time.Now()}
	if st.Schedule == ScheduleDBCrash {
		a.Victim = ""
	}
	n.log.Info("nemesis: begin", "schedule", a.Schedule, "victim", a.Victim)
	var err error
	switch st.Schedule {
	case ScheduleKill:
		a.Note, err = n.kill(ctx, victim)
	case SchedulePause:
		a.Note, err = n.pause(ctx, victim)
	case ScheduleDBCrash:
		a.Note, err = n.dbCrash(ctx)
	case ScheduleRestartDuringTakeover:
		a.Note, err = n.restartDuringTakeover(ctx, victim, n.size(n.sizes.Takeover, 100, 300))
	case ScheduleTimers:
		a.Note, err = n.timers(ctx, victim, n.size(n.sizes.Timers, 60, 120))
	case SchedulePausedOwner:
		a.Note, err = n.pausedOwner(ctx, victim, n.size(n.sizes.PausedOwner, 20, 40))
	default:
		err = fmt.Errorf("histcheck: no schedule %q", st.Schedule)
	}
	// Whatever the step left broken is mended before the next.
	if herr := n.c.Heal(ctx); herr != nil && err == nil {
		err = herr
	}
	a.End = time.Now()
	if err != nil {
		a.Err = err.Error()
	}
	n.log.Info("nemesis: end", "schedule", a.Schedule, "victim", a.Victim, "took", a.End.Sub(a.Start).Round(time.Millisecond), "note", a.Note, "err", a.Err)
	n.mu.Lock()
	n.actions = append(n.actions, a)
	n.mu.Unlock()
}

func (n *Nemesis) size(fixed, lo, hi int) int {
	if fixed > 0 {
		return fixed
	}
	return lo + n.rng.IntN(hi-lo+1)
}

func (n *Nemesis) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(n.rng.Int64N(int64(hi-lo)+1))
}

func (n *Nemesis) record(t Takeover) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.takeovers = append(n.takeovers, t)
}

// kill: probes owned by the victim, SIGKILL, the probes answered through
// the others; the restart comes after a random delay, half the time
// racing the takeover (before the leases expire), half the time after it.
func (n *Nemesis) kill(ctx context.Context, victim *Replica) (string, error) {
	probes, err := n.own(ctx, victim, 3)
	if err != nil {
		return "", err
	}
	early := n.rng.IntN(2) == 0
	delay := n.between(200*time.Millisecond, 1500*time.Millisecond)
	at := time.Now()
	if err := victim.Kill(); err != nil {
		return "", err
	}
	var restart sync.WaitGroup
	var rerr error
	if early {
		restart.Go(func() { sleep(ctx, delay); rerr = victim.Start(ctx) })
	}
	acks := n.answerAll(ctx, probes, victim.ID, "", len(probes), nil)
	restart.Wait()
	if !early {
		sleep(ctx, delay)
		rerr = victim.Start(ctx)
	}
	t := n.measure(ScheduleKill, "kill", victim, at, acks, false, 0)
	return fmt.Sprintf("restart %v after the kill%s; first probe served after %v", delay.Round(time.Millisecond), map[bool]string{true: " (racing the takeover)", false: " once the probes were served"}[early], t.First.Round(time.Millisecond)), rerr
}

// pause: probes owned by the victim, SIGSTOP for longer than the TTL, the
// probes answered through the others meanwhile, SIGCONT.
func (n *Nemesis) pause(ctx context.Context, victim *Replica) (string, error) {
	probes, err := n.own(ctx, victim, 3)
	if err != nil {
		return "", err
	}
	hold := n.between(n.c.TTL+time.Second, 2*n.c.TTL+2*time.Second)
	busy := n.rng.IntN(2) == 0
	stopBusy, waitBusy := func() {}, func() {}
	if busy {
		stopBusy, waitBusy = n.busy(ctx, victim, 8)
		sleep(ctx, n.between(200*time.Millisecond, 500*time.Millisecond))
	}
	defer waitBusy()
	var at time.Time
	holding := false
	if busy {
		at, holding, err = n.pauseHolding(ctx, victim, nil)
	} else {
		at, err = time.Now(), victim.Pause()
	}
	stopBusy()
	if err != nil {
		return "", err
	}
	var acks []ack
	var wg sync.WaitGroup
	wg.Go(func() { acks = n.answerAll(ctx, probes, victim.ID, "", len(probes), nil) })
	sleep(ctx, hold)
	rerr := victim.Resume()
	wg.Wait()
	t := n.measure(SchedulePause, "pause", victim, at, acks, false, hold)
	return fmt.Sprintf("paused %v%s; first probe served after %v", hold.Round(time.Millisecond), map[bool]string{true: " inside a transaction", false: ""}[holding], t.First.Round(time.Millisecond)), rerr
}

// pauseHolding SIGSTOPs victim while one of its database sessions is
// inside a transaction (between two round trips of a commit, holding row
// locks on leases; of one of handlers, if given), as a pause at a random
// instant under load sometimes does: it stops the process, looks at the
// database, and if no session of it holds such locks, continues it and
// tries again a few milliseconds later, for up to two seconds (then it
// stays paused anyway). It returns when the pause that stayed began.
func (n *Nemesis) pauseHolding(ctx context.Context, victim *Replica, handlers []string) (time.Time, bool, error) {
	deadline := time.Now().Add(2 * time.Second)
	for {
		at := time.Now()
		if err := victim.Pause(); err != nil {
			return at, false, err
		}
		var in bool
		var err error
		if handlers == nil {
			in, err = n.c.InTransaction(ctx, victim.ID)
		} else {
			in, err = n.c.LocksRows(ctx, victim.ID, handlers)
		}
		if in || err != nil || time.Now().After(deadline) {
			return at, in, err
		}
		if err := victim.Resume(); err != nil {
			return at, false, err
		}
		sleep(ctx, time.Duration(n.rng.IntN(3000))*time.Microsecond)
	}
}

// dbCrash: PostgreSQL killed (pg_ctl stop -m immediate) for 2-5 s.
func (n *Nemesis) dbCrash(ctx context.Context) (string, error) {
	down := n.between(2*time.Second, 5*time.Second)
	if err := n.c.CrashDB(); err != nil {
		return "", err
	}
	sleep(ctx, down)
	return fmt.Sprintf("down %v", down.Round(time.Millisecond)), n.c.RestartDB()
}

// measure records a takeover: the time from at to each acknowledgement
// through another replica than the victim (one the victim gave before it
// was stopped is no takeover).
func (n *Nemesis) measure(schedule, kind string, victim *Replica, at time.Time, acks []ack, each bool, paused time.Duration) Takeover {
	t := Takeover{Schedule: schedule, Kind: kind, Victim: victim.ID, At: at, Paused: paused}
	for _, a := range acks {
		if a.at.IsZero() || a.via == victim.ID || !a.at.After(at) {
			continue
		}
		d := a.at.Sub(at)
		if !t.Served || d < t.First {
			t.First = d
		}
		t.Served = true
		if each {
			t.Each = append(t.Each, d)
		}
	}
	n.record(t)
	return t
}

// lockedSource is a rand.Source safe for concurrent use: a schedule's
// goroutines (answering through the others while the main one pauses the
// victim) draw the seeds of their callers from the nemesis's generator.
// Which goroutine draws first varies, so only the draws of the nemesis
// itself follow from the seed.
type lockedSource struct {
	mu  sync.Mutex
	src rand.Source
}

func (l *lockedSource) Uint64() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.src.Uint64()
}
