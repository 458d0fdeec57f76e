package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wfd-dev/wfd/attrs"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/structpb"

	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"

	pl "github.com/wfd-dev/wfd/internal/payload"
	"github.com/wfd-dev/wfd/internal/shrink"
)

// Defaults of Options. A zero field takes its default, in the engine and
// in server.Options alike.
const (
	// DefaultLinger is Options.Linger's default: long enough for a quick
	// step's start and end to share a commit, short against a commit.
	DefaultLinger = 2 * time.Millisecond
	// DefaultCompactIdleAbove is Options.CompactIdleAbove's default: with
	// fewer handlers in memory the memory saved is not worth the CPU.
	DefaultCompactIdleAbove = 10000
)

// Options configure an Engine. The zero value is usable: every zero field
// takes its default.
type Options struct {
	// Journal receives every handler change; nil keeps nothing.
	Journal Journal
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Linger lets a handler hold its changes back while step runs are in
	// progress, for at most this long, so that they reach the journal (and
	// callers their acknowledgements) together. 0 takes DefaultLinger; a
	// negative value hands every batch over at once.
	Linger time.Duration
	// EventLog looks up published events for WaitForKey (nil: a keyed wait
	// sees only publications that arrive while it waits).
	EventLog EventLog
	// Starter starts child handlers (nil: the engine starts them itself).
	Starter Starter
	// CompactIdleAbove decides when an idle handler keeps its events' data
	// encoded while it waits (freeze.go): once more than this many handlers
	// are in memory. Encoding saves a few hundred bytes per idle handler
	// and costs an encode when it parks and a decode when it wakes, which
	// only pays when many handlers are in memory. 0 takes
	// DefaultCompactIdleAbove; a negative value never compacts.
	CompactIdleAbove int
	// Limits bound what a handler may hold and a step run produce; zero
	// fields take their defaults.
	Limits Limits
	// OnStepRun, if set, is called as each step run starts, on the
	// handler's loop (before the change that holds the run's cause is
	// committed): the context it returns is the one the step gets (a
	// tracer puts the run's span in it), and end is called, on the run's
	// goroutine, with what the step returned. It must not block.
	OnStepRun func(ctx context.Context, run StepRun) (_ context.Context, end func(error))
}

// StepRun names a step run for Options.OnStepRun.
type StepRun struct {
	HandlerID, Workflow, Step string
	// Attempt counts the runs of the step for its input, from 1.
	Attempt int
}

// Engine holds the registered workflows and the live handlers.
type Engine struct {
	opts Options
	log  *slog.Logger
	lim  Limits

	mu        sync.Mutex
	workflows map[string]*versions
	live      map[string]*Handler
	// livePeak is the most handlers live has held since it was last
	// rebuilt (see Compact).
	livePeak int
	closed   bool
	// closing is closed when Close begins (see Closing).
	closing chan struct{}
	// liveN is len(live), for handlers to read without the lock.
	liveN atomic.Int64
}

// New returns an engine with no workflows.
func New(opts Options) *Engine {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Linger == 0 {
		opts.Linger = DefaultLinger
	}
	if opts.CompactIdleAbove == 0 {
		opts.CompactIdleAbove = DefaultCompactIdleAbove
	}
	return &Engine{opts: opts, log: opts.Logger, lim: opts.Limits.withDefaults(), workflows: map[string]*versions{}, live: map[string]*Handler{},
		closing: make(chan struct{})}
}

// Register validates a workflow and makes it available to Start: a new
// workflow, or a new version of a registered one (Workflow.Version, or
// its definition's hash), which becomes the current version, the one new
// handlers start on. Handlers of the other versions registered run on
// the version they started on. A version registered already is
// ErrWorkflowExists.
func (e *Engine) Register(w Workflow) error {
	return e.RegisterVersion(w, true)
}

// Closing is closed when Close begins: from then on a step may return
// ErrInterrupted to leave its run in progress.
func (e *Engine) Closing() <-chan struct{} { return e.closing }

// isClosing reports whether Close has begun.
func (e *Engine) isClosing() bool {
	select {
	case <-e.closing:
		return true
	default:
		return false
	}
}

// Workflow returns the current version of the registered workflow of
// that name.
func (e *Engine) Workflow(name string) (Workflow, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	vs, ok := e.workflows[name]
	if !ok {
		return Workflow{}, false
	}
	return vs.byID[vs.current].def, true
}

// Workflows returns the current version of each registered workflow,
// sorted by name.
func (e *Engine) Workflows() []Workflow {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Workflow, 0, len(e.workflows))
	for _, vs := range e.workflows {
		out = append(out, vs.byID[vs.current].def)
	}
	slices.SortFunc(out, func(a, b Workflow) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// StartOptions tune Start.
type StartOptions struct {
	// HandlerID names the handler; empty generates a UUIDv7, so ids sort by
	// creation time.
	HandlerID string
	// Parent is the handler that starts this one as a child.
	Parent string
	// Version is the version of the workflow to run ("": the current one).
	Version string
	// Events are delivered after the start event, in order, in the same
	// change as the handler's creation: nobody ever sees the handler
	// without them, and a journal that fails the change loses them with
	// it. Each is judged as a SendEvent right after the start would be
	// (CheckInitialEvents); one that would be refused refuses the Start,
	// and nothing is created.
	Events []InitialEvent
	// Attributes are the handler's search attributes, which the
	// workflow's Attributes must declare, each of its type (Start refuses
	// others with ErrInvalidAttributes, and creates nothing). Nulls are
	// ignored.
	Attributes *structpb.Struct
	// Slot is the handler's concurrency key, which the host took from the
	// input (ConcurrencyOf, Concurrency.KeyOf) and in which it holds a
	// slot, or waits for one (Queued: the handler holds its events until
	// AdmitEvent). nil: the handler takes no slot.
	Slot *Slot
}

// InitialEvent is an event a Start delivers with the handler's creation
// (StartOptions.Events).
type InitialEvent struct {
	Event Event
	// IdempotencyKey is remembered as a SendEvent's is, so that a later
	// SendEvent with the same key (a retry of a call that started the
	// handler) delivers nothing again.
	IdempotencyKey string
}

// Start runs a new handler of the named workflow with input as the data of
// its start event. It returns once the journal has acknowledged the
// handler's creation. An input that breaks the payload limits is
// ErrInvalidPayload, one the workflow's InputSchema refuses a SchemaError
// and one its CheckInput refuses ErrInvalidInput (both are
// ErrInvalidInput); none creates a handler. If the creation cannot be made
// durable the handler is lost (ErrLost) and a later Start with the same id
// creates it afresh (it waits for the lost one to leave memory).
func (e *Engine) Start(ctx context.Context, workflow string, input *structpb.Struct, opts StartOptions) (*Handler, error) {
	c, err := e.lookup(workflow, opts.Version)
	if err != nil {
		return nil, err
	}
	if err := pl.Check(e.lim.payload(), "input", input); err != nil {
		return nil, err
	}
	if err := c.checkInputSchema(input); err != nil {
		return nil, err
	}
	if err := c.checkInput(input); err != nil {
		return nil, err
	}
	id := opts.HandlerID
	if id == "" {
		id = uuid.Must(uuid.NewV7()).String()
	}
	if input == nil {
		input = &structpb.Struct{}
	}
	s := newState(c, id, e.opts.Now())
	if err := e.checkInitial(s, opts.Events); err != nil {
		return nil, err
	}
	if opts.Attributes != nil {
		set, err := c.def.Attributes.Convert(opts.Attributes)
		if err != nil {
			return nil, fmt.Errorf("workflow %q: %w", workflow, err)
		}
		if set = attrs.Merge(nil, set); len(set) > 0 {
			s.rareMut().setAttrs(set)
		}
	}
	if opts.Parent != "" {
		s.rareMut().parent = opts.Parent
	}
	if err := checkSlot(c, opts.Slot); err != nil {
		return nil, err
	}
	if opts.Slot != nil {
		s.rareMut().slot = &slotState{key: opts.Slot.Key, queued: opts.Slot.Queued}
	}
	h, err := e.launch(ctx, s, false)
	if err != nil {
		return nil, err
	}
	ack := make(chan error, 1)
	if err := h.post(ctx, msg{kind: msgStart, p: &payload{ev: Event{Type: StartEvent, Data: input}, initial: opts.Events}, ack: ack}); err != nil {
		return nil, err
	}
	select {
	case err := <-ack:
		if err != nil {
			return h, err
		}
		return h, nil
	case <-ctx.Done():
		return h, ctx.Err()
	}
}

// RestoreOptions tune Restore.
type RestoreOptions struct {
	// Accepting, if set, is the event from outside that the restore is
	// for: if the handler would refuse it (the workflow does not accept
	// its type from outside and no waiter waits for it, or its data does
	// not match the schema the workflow declares for its type), Restore
	// returns that refusal (an *EventRefusedError, a *SchemaError, or
	// ErrInvalidEvent for a type no sender from outside may use) and
	// restores nothing. The event itself is then sent with
	// Handler.SendEvent.
	Accepting *Event
	// UpgradeTo restores the handler on this version of its workflow
	// rather than the one it records, which may no longer be registered,
	// if the state allows it (as CheckUpgrade): Restore then returns once
	// the move is recorded (RecordUpgraded) and durable. A state that does
	// not allow it is an *UpgradeRefusedError, and nothing is restored.
	UpgradeTo string
}

// Restore continues a handler from a snapshot and returns it with its Info
// as restored. Runs that were in progress when the snapshot was taken run
// again. The handler's stream gets a RecordRestored.
func (e *Engine) Restore(ctx context.Context, snap *statev1.HandlerState, opts RestoreOptions) (*Handler, Info, error) {
	if opts.UpgradeTo != "" {
		return e.restoreUpgraded(ctx, snap, opts.UpgradeTo)
	}
	c, err := e.lookupRestore(snap.GetWorkflow(), snap.GetWorkflowVersion())
	if errors.Is(err, ErrUnknownVersion) {
		return nil, Info{}, &VersionMissingError{HandlerID: snap.GetHandlerId(), Workflow: snap.GetWorkflow(), Version: snap.GetWorkflowVersion()}
	}
	if err != nil {
		return nil, Info{}, err
	}
	s, err := stateFromProto(c, snap)
	if err != nil {
		return nil, Info{}, err
	}
	if s.status.Terminal() {
		return nil, Info{}, errHandlerDone(s.id, s.status)
	}
	if opts.Accepting != nil {
		if err := s.accepts(*opts.Accepting, false); err != nil {
			return nil, Info{}, err
		}
	}
	h, err := e.launch(ctx, s, true)
	if err != nil {
		return nil, Info{}, err
	}
	// A restore changes nothing by itself; wait until the loop has settled
	// it so that Info and Snapshot are consistent on return.
	info, err := h.Info(ctx)
	if err != nil {
		return h, Info{}, err
	}
	return h, info, nil
}

// launch registers a handler for state s. A live handler with the same id
// is ErrHandlerExists, unless it is lost: it is leaving memory, and launch
// waits until it has gone, so that what it handed the journal is in the
// journal's hands before the new one hands it anything.
func (e *Engine) launch(ctx context.Context, s *state, restored bool) (*Handler, error) {
	for {
		h, lost, err := e.register(s, restored)
		if lost == nil {
			return h, err
		}
		select {
		case <-lost.Done():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// register adds a handler for s to the registry and returns it; or it
// returns the lost handler that still holds the id, to wait for.
func (e *Engine) register(s *state, restored bool) (h, lost *Handler, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, nil, ErrClosed
	}
	if old, ok := e.live[s.id]; ok {
		if old.lost.Load() {
			return nil, old, nil
		}
		return nil, nil, fmt.Errorf("%w: %s", ErrHandlerExists, s.id)
	}
	h = newHandler(e, s)
	h.lc.restored = restored
	e.live[s.id] = h
	e.liveN.Store(int64(len(e.live)))
	e.livePeak = max(e.livePeak, len(e.live))
	return h, nil, nil
}

func (e *Engine) forget(h *Handler) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.live[h.st.id] == h {
		delete(e.live, h.st.id)
		e.liveN.Store(int64(len(e.live)))
	}
}

// compactIdle reports whether a handler that parks idle now should encode
// its events' data (Options.CompactIdleAbove, never 0 after New but for
// tests: export_test.go's CompactAlways sets 0, which compacts always, as a
// parking handler is in memory itself).
func (e *Engine) compactIdle() bool {
	n := e.opts.CompactIdleAbove
	return n >= 0 && e.liveN.Load() > int64(n)
}

// Handler returns the live handler with that id. A lost handler (a change
// of it could not be made durable: ErrLost) is not returned while it
// leaves memory: it is to be restored.
func (e *Engine) Handler(id string) (*Handler, bool) {
	e.mu.Lock()
	h, ok := e.live[id]
	e.mu.Unlock()
	if !ok || h.lost.Load() {
		return nil, false
	}
	return h, true
}

// Compact rebuilds the registry of live handlers if it fell far below its
// peak (shrink.Map): a Go map keeps the memory of its largest size, about
// 50 bytes per handler, after its entries are deleted. It reports whether
// it rebuilt the registry. It copies the registry under the engine's lock,
// so call it when the engine is quiet (a server does once releases have
// stopped for a while), not per handler.
func (e *Engine) Compact() bool {
	return shrink.Locked(&e.mu, &e.live, &e.livePeak)
}

// Live returns the number of handlers in memory, for a caller's statistics
// (a server reports it as its active handlers).
func (e *Engine) Live() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.live)
}

// Close stops every handler's control loop without changing its status:
// new runs stop starting, runs in progress get until ctx is done to finish,
// then they are cancelled (and will run again when the handler is
// restored). Their last changes are handed to the journal first.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	if !e.closed {
		close(e.closing)
	}
	e.closed = true
	hs := make([]*Handler, 0, len(e.live))
	for _, h := range e.live {
		hs = append(hs, h)
	}
	e.mu.Unlock()
	for _, h := range hs {
		_ = h.post(context.Background(), msg{kind: msgStop})
	}
	for _, h := range hs {
		select {
		case <-h.Done():
		case <-ctx.Done():
			for _, h := range hs {
				h.abort()
			}
			for _, h := range hs {
				<-h.Done()
			}
			return ctx.Err()
		}
	}
	return nil
}
