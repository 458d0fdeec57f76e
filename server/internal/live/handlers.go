package live

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// StartRequest is a handler Start creates.
type StartRequest struct {
	Workflow string
	// Version is the workflow's version to run ("": the current one).
	Version string
	// ID names the handler ("": a new id).
	ID    string
	Input *structpb.Struct
	// Events are delivered in the commit that creates the handler
	// (engine.StartOptions.Events).
	Events []engine.InitialEvent
	// Attributes are the handler's search attributes
	// (engine.StartOptions.Attributes).
	Attributes *structpb.Struct
}

// Start starts a handler as r says and answers with the handler as
// committed, and created true. A repeat of a Start with the same id
// answers with the first one's handler and created false (or
// AlreadyExists if it runs another workflow); it delivers none of its
// events.
func (s *Runtime) Start(ctx context.Context, r StartRequest) (_ *wfdv1.Handler, created bool, _ error) {
	if _, ok := s.engine.Workflow(r.Workflow); !ok {
		return nil, false, fmt.Errorf("%w: %q", engine.ErrUnknownWorkflow, r.Workflow)
	}
	id := r.ID
	named := id != ""
	if named {
		// Calls with the same id take turns, so a repeat sees the first
		// call's handler once it is durable.
		unlock := s.turns.Lock(id)
		defer unlock()
		if h, err := s.existing(ctx, id, r.Workflow); h != nil || err != nil {
			return h, false, err
		}
	}
	if !named {
		// Named here rather than by the engine, so the journal can be
		// asked to keep the handler's first commit (watch).
		id = uuid.Must(uuid.NewV7()).String()
	}
	input := r.Input
	if input == nil {
		input = &structpb.Struct{}
	}
	// Calls for the id wait for the start rather than load it (claimStart).
	started, err := s.claimStart(ctx, id)
	if err != nil {
		return nil, false, err
	}
	var h *engine.Handler
	defer func() { started(h, err) }()
	// In replica mode a new handler is this replica's by lease before
	// its first change.
	if err = s.owners.Acquire(ctx, id); err != nil {
		return nil, false, err
	}
	if named && s.owners.ID() != "" {
		// Read again under the lease: the read above may be older than a
		// start of the same id through another replica that committed
		// before its lease expired (this replica paused in between, say).
		if p, err := s.existing(ctx, id, r.Workflow); p != nil || err != nil {
			s.releaseUnused(id)
			return p, false, err
		}
	}
	slot, undo, err := s.enqueue(ctx, r.Workflow, r.Version, id, input)
	if err != nil {
		s.releaseUnused(id)
		return nil, false, err
	}
	w := s.journal.Watch(id)
	defer w.Done()
	defer s.tracing.During(ctx, id)()
	h, err = s.engine.Start(ctx, r.Workflow, input, engine.StartOptions{HandlerID: id, Version: r.Version, Events: r.Events, Attributes: r.Attributes, Slot: slot})
	undo(err)
	if err != nil {
		s.releaseUnused(id)
		return nil, false, err
	}
	p, err := s.AfterCommit(ctx, id, h, &w)
	return p, true, err
}

// AfterCommit answers a call whose change to handler id is durable with
// the handler as the journal committed it (w, begun before the call),
// without reading it back; without a watch, or when the journal has no
// stream position for the handler (changes without records), it reads the
// store instead.
//
// The call's change is durable by now, so it must not answer with an
// error a client would take for "nothing happened" (and retry, creating a
// second handler): if the store cannot be read back, it answers from the
// engine's view of the handler h (when there is one).
func (s *Runtime) AfterCommit(ctx context.Context, id string, h *engine.Handler, w *Watch) (*wfdv1.Handler, error) {
	if w != nil {
		if m, ok := w.Committed(); ok {
			return s.View(&m), nil
		}
	}
	p, err := s.Get(ctx, id)
	if err == nil || h == nil {
		return p, err
	}
	info, ierr := h.Info(ctx)
	if ierr != nil {
		return nil, err
	}
	s.log.Warn("reading a handler back after a durable change failed; answering from memory", "handler", id, "err", err)
	return InfoToProto(info), nil
}

// existing returns the stored handler with that id if it runs the same
// workflow, ALREADY_EXISTS if it runs another, and nothing if there is none.
func (s *Runtime) existing(ctx context.Context, id, workflow string) (*wfdv1.Handler, error) {
	meta, err := s.Meta(ctx, id)
	if errors.Is(err, apierr.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if meta.Workflow != workflow {
		return nil, fmt.Errorf("%w: handler %s runs workflow %q, not %q", apierr.ErrAlreadyExists, id, meta.Workflow, workflow)
	}
	return s.View(&meta), nil
}

// View is the API View of a handler's stored metadata with what only
// memory knows: its runs waiting for a worker.
func (s *Runtime) View(m *persistence.Handler) *wfdv1.Handler {
	p := HandlerToProto(m)
	if m.Status == persistence.StatusRunning {
		p.WaitingForWorker = s.workers.WaitingFor(m.ID)
		if _, held := s.owners.Fence(m.ID); held {
			p.Owner = s.owners.ID()
		}
	}
	return p
}

func (s *Runtime) Get(ctx context.Context, id string) (*wfdv1.Handler, error) {
	meta, err := s.Meta(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.View(&meta), nil
}

// WithLive runs fn on the in-memory handler, loading it if needed. If the
// handler leaves memory between the lookup and fn (a release racing with
// the call), it is loaded again and fn retried, so nothing is lost. Each
// lap means another release won the race, which a crowded machine can
// make happen several times in a row: the bound only stops a call that
// could never win (the caller's deadline ends it sooner, if it has one).
func (s *Runtime) WithLive(ctx context.Context, id string, fn func(*engine.Handler) error) error {
	return s.WithLiveFor(ctx, id, nil, fn)
}

// WithLiveFor is withLive for a call that brings the event accepting from
// outside: a handler not in memory that would refuse it is not loaded
// (liveFor).
func (s *Runtime) WithLiveFor(ctx context.Context, id string, accepting *engine.Event, fn func(*engine.Handler) error) error {
	// The call's span (SendEvent, CompleteTask, PublishEvent, ...) is the
	// parent of what the handler does meanwhile: rehydration, step runs,
	// commits.
	defer s.tracing.During(ctx, id)()
	for range maxReleaseRaces {
		h, err := s.liveFor(ctx, id, accepting)
		if err != nil {
			return err
		}
		err = fn(h)
		if errors.Is(err, engine.ErrReleased) {
			continue
		}
		return err
	}
	return fmt.Errorf("%w: handler %s keeps leaving memory; try again", engine.ErrClosed, id)
}

// Meta reads a handler's stored metadata; an unknown id is apierr.ErrNotFound.
func (s *Runtime) Meta(ctx context.Context, id string) (persistence.Handler, error) {
	h, err := s.store.GetHandler(ctx, id)
	if errors.Is(err, persistence.ErrNotFound) {
		return h, fmt.Errorf("handler %q %w", id, apierr.ErrNotFound)
	}
	return h, err
}

// ErrDone is the error for a call that needs a running handler.
func ErrDone(id string, st persistence.Status) error {
	return &engine.HandlerDoneError{HandlerID: id, Status: st}
}

// TookKey reports whether the handler's last checkpoint lists the
// idempotency key among the events it took.
func (s *Runtime) TookKey(ctx context.Context, id, key string) bool {
	if s.journal.Settled(ctx, id) != nil {
		return false
	}
	raw, err := s.store.LoadSnapshot(ctx, id)
	if err != nil {
		return false
	}
	var st statev1.HandlerState
	if proto.Unmarshal(raw, &st) != nil {
		return false
	}
	return slices.Contains(st.GetEventKeys(), key)
}

// maxReleaseRaces bounds how often withLive loads a handler that a
// release takes away again before the call is done with it.
const maxReleaseRaces = 100
