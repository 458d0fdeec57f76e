package live

// Concurrency keys: which handlers hold a key's slots and which wait in
// its queue is the store's (persistence.Slots, one atomic change per key,
// across replicas); a handler knows only its key and whether it waits
// (engine.Slot), holding its events until it is admitted.
//
// The order of a start makes every crash recoverable:
//  1. the handler is enqueued (and admitted at once if the key allows);
//  2. it is started, admitted or queued;
//  3. when it ends, its slot is released, which admits the queue's head;
//  4. an admitted handler is told (engine.AdmitEvent), then marked told.
//
// A crash between 1 and 2 leaves an entry without a handler: the admission
// finds none, and after slotGrace releases it. A crash between the end
// and 3 leaves a holder that ended: the sweep at start-up and every
// slotReconcileEvery releases it. A crash, or a handler live on another
// replica, between 3 and 4 leaves it pending: every replica's sweep tells
// the pending ones it can reach, every slotSweepEvery.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

const (
	// slotSweepEvery is how often a replica tells the pending admissions
	// it can reach and admits from keys the rate lets in again.
	slotSweepEvery = time.Second
	// slotReconcileEvery is how often it releases the slots of handlers
	// that ended without releasing them (a crash in between).
	slotReconcileEvery = time.Minute
	// slotGrace is how long an entry may go without its handler: a start
	// enqueues before it creates the handler.
	slotGrace = time.Minute
	// slotSweepBatch bounds the work of one sweep.
	slotSweepBatch = 100
)

// ErrSlotRefused is the error of a start its workflow's concurrency limit
// refuses (Concurrency.Refuse).
var ErrSlotRefused = fmt.Errorf("%w: concurrency limit", apierr.ErrResourceExhausted)

func slotLimit(c *engine.Concurrency) persistence.SlotLimit {
	return persistence.SlotLimit{Max: c.Max, Rate: c.Rate, Per: c.Per}
}

// enqueue takes a slot of its key for a handler about to start, or a place
// in its queue, and returns the engine.Slot to start it with (nil: its
// workflow limits nothing) and undo, to call with the start's error.
func (s *Runtime) enqueue(ctx context.Context, workflow, version, id string, input *structpb.Struct) (*engine.Slot, func(error), error) {
	none := func(error) {}
	keyed, limit, err := s.engine.ConcurrencyOf(workflow, version)
	if err != nil || keyed == nil {
		return nil, none, nil // an unknown workflow: the start says so
	}
	key, err := keyed.KeyOf(input)
	if err != nil {
		return nil, none, fmt.Errorf("%w: workflow %q: %w", engine.ErrInvalidInput, workflow, err)
	}
	k := persistence.SlotKey{Workflow: workflow, Key: key}
	res, err := s.store.UpdateSlots(ctx, k, persistence.SlotChange{Enqueue: id, Refuse: limit.Refuse, Limit: slotLimit(limit), Now: s.opts.Now()})
	if err != nil {
		return nil, none, err
	}
	s.admitAll(k, res.Admitted)
	if res.Refused {
		s.stats.SlotsRefused.Add(1)
		return nil, none, refusal(workflow, key, limit, res)
	}
	if res.Position > 0 && !res.Existed {
		s.stats.SlotsQueued.Add(1)
	}
	undo := func(err error) {
		if err != nil && !res.Existed && !errors.Is(err, engine.ErrHandlerExists) {
			s.releaseSlot(k, id)
		}
	}
	return &engine.Slot{Key: key, Queued: res.Position > 0}, undo, nil
}

// changeSlots applies c to key k with the key's limit (and admits no one when
// this replica does not know the workflow), and tells the handlers it
// admits.
func (s *Runtime) changeSlots(ctx context.Context, k persistence.SlotKey, c persistence.SlotChange) error {
	_, limit, err := s.engine.ConcurrencyOf(k.Workflow, "")
	switch {
	case err != nil:
		c.Hold = true
	case limit != nil:
		c.Limit = slotLimit(limit)
	}
	c.Now = s.opts.Now()
	res, err := s.store.UpdateSlots(ctx, k, c)
	if err == nil {
		s.admitAll(k, res.Admitted)
	}
	return err
}

// releaseSlot frees handler id's place in key k (it ended, or never
// started) and tells the handlers that admits.
func (s *Runtime) releaseSlot(k persistence.SlotKey, id string) {
	ctx := s.background
	if err := s.changeSlots(ctx, k, persistence.SlotChange{Release: id}); err != nil && ctx.Err() == nil {
		s.log.Warn("releasing a concurrency slot (the sweep retries)", "workflow", k.Workflow, "key", k.Key, "handler", id, "err", err)
	}
}

// admitAll tells the handlers ids of key k that they are admitted, in the
// background.
func (s *Runtime) admitAll(k persistence.SlotKey, ids []string) {
	if len(ids) == 0 {
		return
	}
	s.stats.SlotsAdmitted.Add(int64(len(ids)))
	s.Go(func() {
		for _, id := range ids {
			s.admit(s.background, k, id, s.opts.Now())
		}
	})
}

// admit tells handler id it holds a slot of k (admitted at at), and marks
// it told. A handler another replica has in memory is left pending: that
// replica's sweep tells it.
func (s *Runtime) admit(ctx context.Context, k persistence.SlotKey, id string, at time.Time) {
	err := s.WithLive(ctx, id, func(h *engine.Handler) error {
		return h.SendEvent(ctx, engine.Event{Type: engine.AdmitEvent}, engine.SendOptions{IdempotencyKey: "wfd.admit", FromWfd: true})
	})
	var owned *apierr.Owned
	switch {
	case err == nil:
		err = s.changeSlots(ctx, k, persistence.SlotChange{Delivered: id})
	case errors.Is(err, engine.ErrHandlerDone):
		s.releaseSlot(k, id)
		return
	case errors.Is(err, apierr.ErrNotFound):
		if s.opts.Now().Sub(at) > slotGrace {
			s.releaseSlot(k, id) // its start never came
		}
		return
	case errors.As(err, &owned):
		return
	}
	if err != nil && ctx.Err() == nil {
		s.log.Warn("admitting a queued handler (the sweep retries)", "workflow", k.Workflow, "key", k.Key, "handler", id, "err", err)
	}
}

// slotSweeper tells pending admissions, admits from keys the rate lets in
// again, and now and then releases the slots of handlers that ended
// without releasing them.
type slotSweeper struct {
	s *Runtime
}

func (w *slotSweeper) run(ctx context.Context) {
	w.reconcile(ctx)
	t := time.NewTicker(slotSweepEvery)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.sweep(ctx)
		if time.Since(last) >= slotReconcileEvery {
			w.reconcile(ctx)
			last = time.Now()
		}
	}
}

// sweep tells the pending admissions and admits from due keys.
func (w *slotSweeper) sweep(ctx context.Context) {
	s := w.s
	pending, err := s.store.PendingSlots(ctx, slotSweepBatch)
	if err == nil {
		for _, p := range pending {
			s.admit(ctx, p.SlotKey, p.HandlerID, p.At)
		}
	}
	due, err := s.store.DueSlots(ctx, s.opts.Now(), slotSweepBatch)
	if err != nil {
		return
	}
	for _, k := range due {
		// A workflow this replica does not know is another's to admit.
		if _, _, err := s.engine.ConcurrencyOf(k.Workflow, ""); err == nil {
			_ = s.changeSlots(ctx, k, persistence.SlotChange{}) // the sweep tries again
		}
	}
}

// reconcile releases every slot held by a handler that ended (or, past
// slotGrace, never started).
func (w *slotSweeper) reconcile(ctx context.Context) {
	s := w.s
	var after persistence.SlotKey
	for ctx.Err() == nil {
		keys, err := s.store.SlotKeys(ctx, after, slotSweepBatch)
		if err != nil || len(keys) == 0 {
			return
		}
		for _, k := range keys {
			if k.Holding == 0 {
				continue
			}
			holders, _, err := s.store.ListSlots(ctx, k.SlotKey, 1)
			if err != nil {
				continue
			}
			for _, e := range holders {
				meta, err := s.store.GetHandler(ctx, e.HandlerID)
				switch {
				case errors.Is(err, persistence.ErrNotFound) && s.opts.Now().Sub(e.At) > slotGrace,
					err == nil && meta.Status.Terminal():
					s.releaseSlot(k.SlotKey, e.HandlerID)
				}
			}
		}
		after = keys[len(keys)-1].SlotKey
	}
}

// slotChanged follows a committed change of a handler with a slot: an
// ended one frees it; a queued one in memory leaves it (it waits for
// something outside it, and it is told wherever it is loaded).
func (s *Runtime) slotChanged(c *engine.Change) {
	switch {
	case c.Status.Terminal():
		s.Go(func() { s.releaseSlot(persistence.SlotKey{Workflow: c.Workflow, Key: c.Slot.Key}, c.HandlerID) })
	case c.Slot.Queued && !c.Released && c.Idle != nil:
		id := c.HandlerID
		s.Go(func() {
			if h, ok := s.engine.Handler(id); ok {
				_, _ = h.Release(s.background) // not idle, or gone: nothing to do
			}
		})
	}
}

// refusal says why a start was refused, and when to try again if the rate
// says.
func refusal(workflow, key string, limit *engine.Concurrency, res persistence.SlotResult) error {
	var why []string
	if limit.Max > 0 {
		why = append(why, fmt.Sprintf("%d running of at most %d", res.Holding, limit.Max))
	}
	if limit.Rate > 0 {
		why = append(why, fmt.Sprintf("at most %d starts per %v", limit.Rate, limit.Per))
	}
	retry := "try again once one of them ends"
	if !res.NextDue.IsZero() {
		retry = "try again after " + res.NextDue.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Errorf("%w: workflow %q refuses starts over its limit: key %q has %s; %s",
		ErrSlotRefused, workflow, key, strings.Join(why, ", "), retry)
}
