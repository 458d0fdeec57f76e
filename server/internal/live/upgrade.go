package live

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"

	"github.com/wfd-dev/wfd/engine"
)

// Upgrade moves handler id, a running handler of version from of
// workflow, to version to (UpgradeHandlers), or with dryRun says whether
// it could. A released handler is checked from its checkpoint without
// loading it, and loaded to be moved; the move is the handler's own
// change (engine Handler.Upgrade). What the outcome is not MOVED or
// CAN_MOVE for comes with the reason; err is for a failure to find out
// (the store cannot be read).
func (s *Runtime) Upgrade(ctx context.Context, id, workflow, from, to string, dryRun bool) (wfdv1.UpgradeOutcome, string, error) {
	snap, err := s.upgradeState(ctx, id)
	if err != nil {
		return judgeUpgrade(err)
	}
	switch pinned := s.engine.PinnedVersion(snap.GetWorkflow(), snap.GetWorkflowVersion()); {
	case snap.GetWorkflow() != workflow:
		return wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_REFUSED, fmt.Sprintf("it runs workflow %q, not %q", snap.GetWorkflow(), workflow), nil
	case pinned != from:
		return wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_REFUSED, fmt.Sprintf("it runs version %s, not %s", pinned, from), nil
	}
	if dryRun {
		if err := s.engine.CheckUpgrade(snap, to); err != nil {
			return judgeUpgrade(err)
		}
		return wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_CAN_MOVE, "", nil
	}
	h, err := s.Live(ctx, id)
	if err == nil {
		err = h.Upgrade(ctx, to)
	}
	if err != nil {
		return judgeUpgrade(err)
	}
	s.log.Info("handler upgraded", "handler", id, "workflow", workflow, "from", from, "to", to)
	if s.workers.ServedElsewhere(ctx, workflow, to) {
		// Its next run would wait here for a worker: released, it is
		// loaded where workers of its new version are.
		if _, err := h.Release(ctx); err != nil {
			s.log.Warn("releasing an upgraded handler whose workers are on another replica", "handler", id, "err", err)
		}
	}
	return wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_MOVED, "", nil
}

// upgradeState is handler id's state: in memory, or its checkpoint.
func (s *Runtime) upgradeState(ctx context.Context, id string) (*statev1.HandlerState, error) {
	if h, ok := s.engine.Handler(id); ok {
		return h.Snapshot(ctx)
	}
	meta, raw, err := s.store.LoadHandler(ctx, id)
	if errors.Is(err, persistence.ErrNotFound) {
		return nil, fmt.Errorf("handler %q %w", id, apierr.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	if meta.Status != persistence.StatusRunning {
		return nil, ErrDone(id, meta.Status)
	}
	var st statev1.HandlerState
	if err := proto.Unmarshal(raw, &st); err != nil || raw == nil {
		return nil, fmt.Errorf("%w: its checkpoint cannot be read", engine.ErrUpgradeRefused)
	}
	return &st, nil
}

// judgeUpgrade turns what stopped an upgrade of one handler into its
// outcome: the handler's own reasons are outcomes, anything else is err
// (an *apierr.Owned for a handler in memory on another replica, which the
// caller forwards).
func judgeUpgrade(err error) (wfdv1.UpgradeOutcome, string, error) {
	var refused *engine.UpgradeRefusedError
	switch {
	case errors.As(err, &refused):
		return wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_REFUSED, refused.Reason, nil
	case errors.Is(err, engine.ErrNotIdle):
		return wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_BUSY, "a step of it is running or due: retry once it is idle", nil
	case errors.Is(err, engine.ErrHandlerDone):
		return wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_REFUSED, "it has finished", nil
	case errors.Is(err, engine.ErrUpgradeRefused), errors.Is(err, engine.ErrUnknownVersion):
		return wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_REFUSED, err.Error(), nil
	case errors.Is(err, apierr.ErrNotFound):
		return wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_REFUSED, "no such handler", nil
	}
	return 0, "", err
}
