package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/observe"
)

// Options configure a Runtime. Zero durations and counts are off where
// the field says so; the server fills in its defaults before.
type Options struct {
	// Store keeps handlers durable. Required.
	Store persistence.Store
	// Engine are the engine's options; New sets its Journal, EventLog and
	// Starter (and OnStepRun when tracing is on).
	Engine engine.Options
	// Workflows are registered before anything is recovered.
	Workflows []engine.Workflow
	Logger    *slog.Logger
	Now       func() time.Time
	// IdleTimeout releases a handler idle in memory this long (0: never).
	IdleTimeout time.Duration
	// MaxIdleInMemory caps the idle handlers in memory (0: no cap).
	MaxIdleInMemory int
	// ReclaimAfter: memory freed by releases is given back once releases
	// have stopped this long (0: never).
	ReclaimAfter time.Duration
	// Retention deletes finished handlers this long after they finished
	// (0: never), every RetentionInterval (0: a tenth of it, between 1s
	// and 1m), RetentionBatch at a time (0: DefaultRetentionBatch).
	Retention         time.Duration
	RetentionInterval time.Duration
	RetentionBatch    int
	// StreamBuffer bounds the bytes one stream subscription queues.
	StreamBuffer int64
	Stats        *observe.Stats
	Tracing      *observe.Tracing
	// Ownership is replica mode's (nil: one process owns every handler).
	Ownership Ownership
	Workers   Workers
	Health    Health
}

// Runtime keeps handlers live: the engine with its journal, loads from
// the store, residency (idle release, reclaiming memory), timers, lost
// handlers, children, deletion and retention. The API, the workers and
// replica mode reach handlers through it.
type Runtime struct {
	opts    Options
	log     *slog.Logger
	store   persistence.Store
	engine  *engine.Engine
	journal *Journal
	hub     *Hub
	owners  Ownership
	workers Workers
	health  Health
	stats   *observe.Stats
	tracing *observe.Tracing
	// builtIn names the workflows of Options.Workflows (CheckDropped).
	builtIn []string

	// loads are the handlers being loaded, started or handed over.
	loads loads
	// turns serialises calls that must not overlap for one key: starting
	// a handler with a given id (RunWorkflow, children), and answering a
	// task ("task:<id>").
	turns KeyedMutex

	idle    *idleSet
	reaper  *reaper
	timers  *scheduler
	reloads *reloader

	// background runs the loops; it ends at Close.
	background     context.Context
	stopBackground context.CancelFunc
	backgroundDone sync.WaitGroup
}

// New builds a runtime and registers opts.Workflows; nothing is recovered
// or run until Recover and Run.
func New(opts Options) (*Runtime, error) {
	if opts.Ownership == nil {
		opts.Ownership = single{}
	}
	r := &Runtime{opts: opts, log: opts.Logger, store: opts.Store, hub: NewHub(opts.StreamBuffer), owners: opts.Ownership,
		workers: opts.Workers, health: opts.Health, stats: opts.Stats, tracing: opts.Tracing, idle: newIdleSet()}
	r.loads.m = map[string]*loadCall{}
	r.background, r.stopBackground = context.WithCancel(context.Background())
	keep := -1
	if opts.MaxIdleInMemory > 0 {
		keep = opts.MaxIdleInMemory
	}
	r.reaper = &reaper{s: r, timeout: opts.IdleTimeout, keep: keep, kick: make(chan struct{}, 1)}
	r.timers = &scheduler{s: r, wake: make(chan struct{}, 1)}
	r.reloads = &reloader{s: r, kick: make(chan struct{}, 1)}
	r.journal = NewJournal(opts.Store, r.hub, opts.Logger, opts.Stats, r.Committed, r.Lost, opts.Health.Committed)
	r.journal.Tracing = opts.Tracing
	r.journal.Fence = r.owners.Fence
	r.journal.OnPublished = func(p *persistence.Published) {
		r.Go(func() {
			if _, err := r.Wake(r.background, p); err != nil {
				r.log.Warn("escalation: waking the handlers waiting for its key", "key", p.Key, "err", err)
			}
		})
	}
	eopts := opts.Engine
	eopts.Journal, eopts.EventLog, eopts.Starter = r.journal, eventLog{r}, starter{r}
	if opts.Tracing.On {
		eopts.OnStepRun = opts.Tracing.OnStepRun
	}
	r.engine = engine.New(eopts)
	for _, w := range opts.Workflows {
		if err := r.engine.Register(w); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		if !slices.Contains(r.builtIn, w.Name) {
			r.builtIn = append(r.builtIn, w.Name)
		}
	}
	return r, nil
}

// Run starts the loops that keep handlers moving: timers, reloads of lost
// handlers, idle release, retention and memory reclaim. They stop at Close.
func (r *Runtime) Run() {
	r.backgroundDone.Go(func() { r.timers.run(r.background) })
	r.backgroundDone.Go(func() { r.reloads.run(r.background) })
	sw := &slotSweeper{s: r}
	r.backgroundDone.Go(func() { sw.run(r.background) })
	if r.opts.IdleTimeout > 0 || r.reaper.keep >= 0 {
		r.backgroundDone.Go(func() { r.reaper.run(r.background) })
	}
	if r.opts.Retention > 0 {
		ret := newRetention(r, &r.opts)
		r.backgroundDone.Go(func() { ret.run(r.background) })
	}
	if r.opts.ReclaimAfter > 0 {
		rc := &reclaimer{s: r, quiet: r.opts.ReclaimAfter}
		r.backgroundDone.Go(func() { rc.run(r.background) })
	}
}

// Background is the runtime's context for work nobody waits for; it ends
// at Close.
func (r *Runtime) Background() context.Context { return r.background }

// Go runs fn on a goroutine Close waits for.
func (r *Runtime) Go(fn func()) { r.backgroundDone.Go(fn) }

// Close stops the loops, then the engine (letting runs in progress finish
// until ctx is done), and waits for the journal's last commit.
func (r *Runtime) Close(ctx context.Context) error {
	r.stopBackground()
	r.backgroundDone.Wait()
	eerr := r.engine.Close(ctx)
	jerr := r.journal.Close(context.Background())
	return errors.Join(eerr, jerr)
}

// Drop takes handler id out of memory without committing anything more
// (its lease was lost: another replica has it now), and off the idle list,
// which commits would otherwise tell.
func (r *Runtime) Drop(id string) {
	if h, ok := r.engine.Handler(id); ok {
		h.Drop()
	}
	r.idle.remove(id)
}

// Engine is the runtime's engine.
func (r *Runtime) Engine() *engine.Engine { return r.engine }

// Journal is the runtime's journal.
func (r *Runtime) Journal() *Journal { return r.journal }

// Hub fans committed records out to streams.
func (r *Runtime) Hub() *Hub { return r.hub }

// Turns serialise calls that must not overlap for one key.
func (r *Runtime) Turns() *KeyedMutex { return &r.turns }

// IdleInMemory is how many idle handlers are in memory.
func (r *Runtime) IdleInMemory() int { return r.idle.len() }

// replicated reports whether the runtime is one of several replicas.
func (r *Runtime) replicated() bool { return r.owners.ID() != "" }
