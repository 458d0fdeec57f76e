package engine

// Upgrades: moving a handler to another version of its workflow. wfd keeps
// a handler's state, not a history to replay, so a move is safe exactly
// when the target version can hold that state: checkUpgrade says so from
// the state alone, and Handler.Upgrade applies it as one change of the
// handler's own loop, recorded in its stream (RecordUpgraded).

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"
)

// ErrUpgradeRefused: the target version cannot carry the handler on from
// its state (an *UpgradeRefusedError says why). Nothing changed.
var ErrUpgradeRefused = errors.New("upgrade refused")

// UpgradeRefusedError is the first reason a handler cannot move to a
// version of its workflow.
type UpgradeRefusedError struct {
	HandlerID, From, To string
	Reason              string
}

func (e *UpgradeRefusedError) Error() string {
	return fmt.Sprintf("handler %s cannot move from version %s to %s: %s", e.HandlerID, e.From, e.To, e.Reason)
}

// Unwrap makes it ErrUpgradeRefused.
func (e *UpgradeRefusedError) Unwrap() error { return ErrUpgradeRefused }

// Upgraded is what a RecordUpgraded says: the versions before and after.
type Upgraded struct {
	From, To string
}

// CheckUpgrade says whether the handler whose state snap holds could move
// to version to of its workflow now: nil if it could; ErrNotIdle while a
// step of it runs or has work due (retry once it is idle); a finished
// handler's ErrHandlerDone; ErrUnknownWorkflow or ErrUnknownVersion for
// versions not registered; otherwise an *UpgradeRefusedError with the
// first reason found. It reads snap only, so a released handler is
// checked without loading it.
func (e *Engine) CheckUpgrade(snap *statev1.HandlerState, to string) error {
	from, err := e.lookupRestore(snap.GetWorkflow(), snap.GetWorkflowVersion())
	if err != nil {
		return err
	}
	target, err := e.lookup(snap.GetWorkflow(), to)
	if err != nil {
		return err
	}
	return checkUpgrade(from, target, snap)
}

// checkUpgrade is CheckUpgrade for compiled versions. from is nil for a
// version no longer registered: what the target must match of it (the
// types each step accepts, the types it declares) is then not checked.
func checkUpgrade(from, to *compiled, p *statev1.HandlerState) error {
	if st := Status(p.GetStatus()); st.Terminal() {
		return errHandlerDone(p.GetHandlerId(), st)
	}
	refuse := func(format string, args ...any) error {
		return &UpgradeRefusedError{HandlerID: p.GetHandlerId(), From: p.GetWorkflowVersion(), To: to.def.Version, Reason: fmt.Sprintf(format, args...)}
	}
	if p.GetIdleSince() == nil {
		return fmt.Errorf("%w: handler %s has work in progress; upgrade it once it is idle", ErrNotIdle, p.GetHandlerId())
	}
	if p.GetStart() != nil {
		if err := to.checkInputSchema(p.GetStart().GetData()); err != nil {
			return refuse("its input does not match the input schema of %s: %v", to.def.Version, err)
		}
	}
	for _, ps := range p.GetSteps() {
		if len(ps.GetInProgress()) > 0 {
			return fmt.Errorf("%w: handler %s has a run of step %q in progress; upgrade it once it is idle", ErrNotIdle, p.GetHandlerId(), ps.GetName())
		}
		if len(ps.GetQueue()) == 0 && len(ps.GetCollected()) == 0 && len(ps.GetWaiters()) == 0 {
			continue
		}
		if err := checkStep(from, to, ps); err != "" {
			return refuse("%s", err)
		}
	}
	return nil
}

// checkStep says why the target cannot hold what step ps holds ("" if it
// can): the step must be there, accept the same types, still declare the
// types its waits are for, and take the data it holds.
func checkStep(from, to *compiled, ps *statev1.StepState) string {
	name := ps.GetName()
	if !hasStep(to, name) {
		return fmt.Sprintf("step %q, which holds its work, is not in %s", name, to.def.Version)
	}
	if from == nil {
		from = to // the version left is not registered: nothing to compare
	}
	fromAccepts, toAccepts := stepAccepts(from, name), stepAccepts(to, name)
	if !slices.Equal(fromAccepts, toAccepts) {
		return fmt.Sprintf("step %q accepts [%s] in %s but [%s] in %s", name, strings.Join(fromAccepts, " "), from.def.Version,
			strings.Join(toAccepts, " "), to.def.Version)
	}
	for _, w := range ps.GetWaiters() {
		t := w.GetEventType()
		if t != "" && from.declares(t) && !to.declares(t) {
			return fmt.Sprintf("step %q waits for %q, which %s does not declare", name, t, to.def.Version)
		}
		if why := to.refusesData(w.GetResume()); why != "" {
			return fmt.Sprintf("step %q: %s", name, why)
		}
	}
	for _, q := range ps.GetQueue() {
		if why := to.refusesData(q); why != "" {
			return fmt.Sprintf("step %q: %s", name, why)
		}
	}
	for _, ev := range ps.GetCollected() {
		if err := to.checkEventSchema(eventFromProto(ev)); err != nil {
			return fmt.Sprintf("step %q holds a %q event that %s's schema refuses: %v", name, ev.GetType(), to.def.Version, err)
		}
	}
	return ""
}

// stepAccepts is what step name accepts in c, sorted (none if c has no
// such step).
func stepAccepts(c *compiled, name string) []string {
	i := slices.IndexFunc(c.def.Steps, func(s Step) bool { return s.Name == name })
	if i < 0 {
		return nil
	}
	return slices.Sorted(slices.Values(c.def.Steps[i].Accepts))
}

// retarget makes p, a state checkUpgrade let move to version to, a state of
// that version: steps the target lacks hold nothing, so they are left out.
func retarget(p *statev1.HandlerState, to *compiled) {
	p.WorkflowVersion = to.def.Version
	p.Steps = slices.DeleteFunc(p.Steps, func(ps *statev1.StepState) bool { return !hasStep(to, ps.GetName()) })
}

// hasStep reports whether c has a step of that name.
func hasStep(c *compiled, name string) bool {
	return slices.ContainsFunc(c.def.Steps, func(s Step) bool { return s.Name == name })
}

// declares reports whether c names event type t: taken from outside at any
// time, or declared with a schema.
func (c *compiled) declares(t string) bool {
	return c.external[t] || slices.ContainsFunc(c.def.Events, func(e EventType) bool { return e.Type == t })
}

// refusesData says why c's schemas refuse the events a work item holds
// (its own and those its earlier waits resolved), "" if they take them.
func (c *compiled) refusesData(it *statev1.WorkItem) string {
	evs := []*statev1.Event{it.GetEvent()}
	for _, k := range slices.Sorted(maps.Keys(it.GetResolved())) {
		if ev := it.GetResolved()[k].GetEvent(); ev != nil {
			evs = append(evs, ev)
		}
	}
	for _, ev := range evs {
		if ev == nil || ev.GetType() == "" {
			continue
		}
		if err := c.checkEventSchema(eventFromProto(ev)); err != nil {
			return fmt.Sprintf("it holds a %q event that %s's schema refuses: %v", ev.GetType(), c.def.Version, err)
		}
	}
	return ""
}

// Upgrade moves the handler to version to of its workflow if CheckUpgrade
// allows it, in one change of its loop: the state is carried over as it
// is (new steps start empty), the stream gets a RecordUpgraded, and it
// returns once the journal has made the change durable. Moving to the
// version it runs is a no-op.
func (h *Handler) Upgrade(ctx context.Context, to string) error {
	target, err := h.e.lookup(h.st.wf.def.Name, to)
	if err != nil {
		return err
	}
	ack := make(chan error, 1)
	if _, err := h.call(ctx, msg{kind: msgUpgrade, ack: ack, p: &payload{wf: target}}); err != nil {
		return err
	}
	select {
	case err := <-ack:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// restoreUpgraded is Restore with RestoreOptions.UpgradeTo: the handler
// restored on version to, if checkUpgrade allows it, with its move
// recorded and durable before it returns.
func (e *Engine) restoreUpgraded(ctx context.Context, snap *statev1.HandlerState, to string) (*Handler, Info, error) {
	target, err := e.lookup(snap.GetWorkflow(), to)
	if err != nil {
		return nil, Info{}, err
	}
	from, _ := e.lookupRestore(snap.GetWorkflow(), snap.GetWorkflowVersion())
	if err := checkUpgrade(from, target, snap); err != nil {
		return nil, Info{}, err
	}
	was := snap.GetWorkflowVersion()
	snap = proto.CloneOf(snap)
	retarget(snap, target)
	h, _, err := e.Restore(ctx, snap, RestoreOptions{})
	if err != nil {
		return nil, Info{}, err
	}
	ack := make(chan error, 1)
	if _, err := h.call(ctx, msg{kind: msgUpgrade, ack: ack, p: &payload{wf: target, key: was}}); err != nil {
		return h, Info{}, err
	}
	select {
	case err = <-ack:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return h, Info{}, err
	}
	info, err := h.Info(ctx)
	return h, info, err
}

// handleUpgrade applies an upgrade in the loop. A handler restored on its
// new version (restoreUpgraded: m.p.key is the version it left) only has
// the move recorded.
func (r *runner) handleUpgrade(m msg) error {
	r.update()
	if m.p.key != "" {
		r.record(Record{Kind: RecordUpgraded, Upgraded: &Upgraded{From: m.p.key, To: r.wf.def.Version}})
		r.acks = append(r.acks, m.ack)
		return nil
	}
	from, to := r.wf, m.p.wf
	if from == to {
		r.acks = append(r.acks, m.ack)
		return nil
	}
	p := r.s.toProto()
	if err := checkUpgrade(from, to, p); err != nil {
		return err
	}
	retarget(p, to)
	ns, err := stateFromProto(to, p)
	if err != nil {
		return fmt.Errorf("%w: handler %s: %w", ErrUpgradeRefused, r.s.id, err)
	}
	*r.s = *ns
	r.wf = to
	r.h.lc.timed = true // its deadlines are looked at afresh
	r.record(Record{Kind: RecordUpgraded, Upgraded: &Upgraded{From: from.def.Version, To: to.def.Version}})
	// The idle record carries what the handler now waits for under the
	// target (its external types may differ).
	r.record(Record{Kind: RecordIdle, Idle: r.s.buildIdle()})
	r.acks = append(r.acks, m.ack)
	return nil
}
