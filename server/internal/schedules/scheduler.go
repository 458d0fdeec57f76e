package schedules

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/schedule"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/observe"
)

// Runs is what the scheduler needs of the handler runtime.
type Runs interface {
	// Start starts handler id of workflow (at version, "": the current
	// one) with input; a handler that exists already with that id is
	// success (started false).
	Start(ctx context.Context, workflow, version, id string, input *structpb.Struct) (started bool, err error)
	// Cancel cancels handler id if it runs.
	Cancel(ctx context.Context, id string) error
	// Known reports an unknown workflow (engine.ErrUnknownWorkflow).
	Known(ctx context.Context, workflow string) error
}

// Options configure a Scheduler.
type Options struct {
	Store  persistence.Store
	Runs   Runs
	Logger *slog.Logger
	Now    func() time.Time
	// Stats counts the outcomes recorded (wfd_schedule_outcomes_total).
	Stats *observe.Stats
	// Poll is how often the loop looks for due schedules (default 1 s):
	// schedules created or changed through another replica are found
	// then at the latest. A change through this one wakes it at once.
	Poll time.Duration
}

// Scheduler fires the ticks of the schedules in the store.
type Scheduler struct {
	store persistence.Store
	runs  Runs
	log   *slog.Logger
	now   func() time.Time
	poll  time.Duration
	kick  chan struct{}
	stats *observe.Stats
	// failing throttles the log of passes that fail the same way.
	failing *observe.LogThrottle
}

// New returns a scheduler; Loop runs it.
func New(o Options) *Scheduler {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Stats == nil {
		o.Stats = &observe.Stats{}
	}
	return &Scheduler{store: o.Store, runs: o.Runs, log: o.Logger, now: o.Now, poll: o.Poll, stats: o.Stats,
		kick: make(chan struct{}, 1), failing: observe.NewLogThrottle(time.Minute, o.Now)}
}

// Kick makes the loop look at the due schedules now.
func (s *Scheduler) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// maxDuePerPass bounds the schedules one pass reads.
const maxDuePerPass = 100

// Loop fires due ticks until ctx ends.
func (s *Scheduler) Loop(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
		full := s.pass(ctx)
		wait := s.poll
		if full {
			wait = 0 // more are due than one pass reads
		}
		t.Reset(wait)
	}
}

// pass fires the schedules due now; it reports whether it read as many
// as it may (more may be due).
func (s *Scheduler) pass(ctx context.Context) bool {
	due, err := s.store.DueSchedules(ctx, s.now(), maxDuePerPass)
	if err != nil {
		s.warn("reading the due schedules", "err", err)
		return false
	}
	for _, p := range due {
		if ctx.Err() != nil {
			return false
		}
		if _, _, err := s.fire(ctx, p, schedule.Plan); err != nil && !errors.Is(err, persistence.ErrConflict) {
			s.warn("firing a schedule", "schedule", p.ID, "err", err)
		}
	}
	return len(due) == maxDuePerPass
}

func (s *Scheduler) warn(msg string, args ...any) {
	if ok, n := s.failing.Allow(); ok {
		s.log.Warn(msg, append(args, "suppressed", n)...)
	}
}

// planner is schedule.Plan, or a trigger or backfill of the schedule it
// is given.
type planner func(sch schedule.Schedule, now time.Time) (schedule.Decision, error)

// fire loads p, prunes its runs that ended, decides with decide, acts on
// the decision and records it on the revision p was read at. A decision
// that cannot be acted on for now (the store is unavailable) is not
// recorded: the next pass decides it again. It returns the schedule as
// recorded and the runs it started or found started.
func (s *Scheduler) fire(ctx context.Context, p persistence.Schedule, decide planner) (persistence.Schedule, []string, error) {
	now := s.now()
	sch, err := schedule.Load(p)
	if err != nil {
		return p, nil, err
	}
	ended := sch.State.Prune(func(id string) bool { return s.running(ctx, id) })
	d, err := decide(sch, now)
	if err != nil {
		return p, nil, err
	}
	if !d.Changed && len(ended) == 0 {
		return p, nil, nil
	}
	input, err := decodeInput(p.Input)
	if err != nil {
		return p, nil, err
	}
	for _, id := range d.Cancel {
		// A run that cannot be cancelled (ended meanwhile, or live on a
		// replica that does not answer) does not hold the tick back.
		if err := s.runs.Cancel(ctx, id); err != nil && !errors.Is(err, engine.ErrHandlerDone) && !errors.Is(err, apierr.ErrNotFound) {
			s.log.Warn("a schedule could not cancel its previous run", "schedule", p.ID, "handler", id, "err", err)
		}
	}
	var started []string
	failed := 0
	for _, r := range d.Start {
		_, err := s.runs.Start(ctx, p.Workflow, p.WorkflowVersion, r.HandlerID, input)
		switch {
		case err == nil:
			started = append(started, r.HandlerID)
		case transient(err):
			return p, nil, fmt.Errorf("starting %s: %w", r.HandlerID, err)
		default:
			d.State.Fail(r.HandlerID, publicReason(err), now)
			failed++
			s.log.Warn("a schedule's run could not start", "schedule", p.ID, "handler", r.HandlerID, "err", err)
		}
	}
	if err := schedule.SetState(&p, d.State); err != nil {
		return p, nil, err
	}
	rec, err := s.store.UpdateSchedule(ctx, p, p.Revision)
	if err != nil {
		return p, nil, err
	}
	for _, o := range d.Outcomes {
		s.stats.ScheduleOutcome(string(o.Kind))
	}
	for range failed {
		s.stats.ScheduleOutcome(string(schedule.OutcomeFailed))
	}
	return rec, started, nil
}

// running reports whether handler id runs; a read that fails counts it
// as running (the overlap policy is the safe side), a missing one not.
func (s *Scheduler) running(ctx context.Context, id string) bool {
	h, err := s.store.GetHandler(ctx, id)
	if errors.Is(err, persistence.ErrNotFound) {
		return false
	}
	return err != nil || h.Status == persistence.StatusRunning
}

// transient reports whether a start that failed with err may succeed
// when tried again (the store or the handler's replica is unavailable),
// rather than never (the workflow or version is gone, the input is
// refused).
func transient(err error) bool {
	var owned *apierr.Owned
	return errors.Is(err, persistence.ErrUnavailable) || errors.Is(err, apierr.ErrUnavailable) || errors.As(err, &owned) ||
		errors.Is(err, engine.ErrClosed) || errors.Is(err, engine.ErrLost) || errors.Is(err, persistence.ErrFenced) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, new(*engine.VersionMissingError))
}

// publicReason is what a failed outcome says of err: its message
// without the sentinels' words, as a client would be told.
func publicReason(err error) string {
	var ce *connect.Error
	if errors.As(apierr.ToConnect(err), &ce) {
		return ce.Message()
	}
	return err.Error()
}

func decodeInput(b []byte) (*structpb.Struct, error) {
	in := &structpb.Struct{}
	if len(b) == 0 {
		return in, nil
	}
	if err := protojson.Unmarshal(b, in); err != nil {
		return nil, fmt.Errorf("%w: its input cannot be decoded: %w", persistence.ErrCorrupt, err)
	}
	return in, nil
}
