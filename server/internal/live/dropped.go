package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"
	"github.com/wfd-dev/wfd/persistence"

	"github.com/wfd-dev/wfd/engine"
)

// Dropped says what start-up does with the running handlers of a version
// of a built-in workflow that the program no longer registers.
type Dropped uint8

const (
	// DroppedRefuse refuses to start, naming them: the program is
	// probably not the one meant to run (the default).
	DroppedRefuse Dropped = iota
	// DroppedFail marks them failed, with the reason.
	DroppedFail
	// DroppedUpgrade moves each to the workflow's current version; if one
	// cannot move, start-up is refused with its reason.
	DroppedUpgrade
)

// droppedShown bounds the handlers a refusal names.
const droppedShown = 5

// CheckDropped looks, before recovery, for running handlers of versions of
// the built-in workflows that are not registered, and deals with them as
// policy says. It asks the store which versions running handlers run
// (RunningVersions, a few index keys per version): start-up reads nothing
// per handler, however many are stored. (A scan of the version index, as
// CountVersions makes, mapped most of a large bbolt file into the
// process: about 1.1 KB of RSS per released handler.)
func (s *Runtime) CheckDropped(ctx context.Context, policy Dropped) error {
	var problems []string
	for _, name := range s.builtIn {
		defs, current := s.engine.Versions(name)
		running, err := s.store.RunningVersions(ctx, name)
		if err != nil {
			return fmt.Errorf("server: listing the versions running handlers of %q run: %w", name, err)
		}
		for _, version := range droppedVersions(defs, running) {
			msg, err := s.dropped(ctx, name, version, current, policy)
			if err != nil {
				return err
			}
			if msg != "" {
				problems = append(problems, msg)
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("server: %s; register those versions again, or start with Options.DroppedVersions set to DroppedUpgrade "+
			"(move them to the current version) or DroppedFail", strings.Join(problems, "; "))
	}
	return nil
}

// droppedVersions are the versions of running handlers (running) that
// defs (the registered versions) lacks. Handlers from before versions ("")
// run the first registered version: never dropped.
func droppedVersions(defs []engine.Workflow, running []string) []string {
	var out []string
	for _, v := range running {
		if v == "" {
			continue
		}
		if !slices.ContainsFunc(defs, func(w engine.Workflow) bool { return w.Version == v }) {
			out = append(out, v)
		}
	}
	return out
}

// dropped deals with the running handlers of workflow@version, a page at
// a time, and returns what refuses start-up ("" for nothing).
func (s *Runtime) dropped(ctx context.Context, workflow, version, current string, policy Dropped) (string, error) {
	var refused []string
	total := 0
	token := ""
	for {
		hs, next, err := s.store.ListHandlers(ctx, persistence.Query{Workflow: workflow, Version: version,
			Statuses: []persistence.Status{persistence.StatusRunning}, PageSize: persistence.MaxPageSize, PageToken: token})
		if err != nil {
			return "", fmt.Errorf("server: listing the handlers of %s@%s: %w", workflow, version, err)
		}
		for i := range hs {
			total++
			why, err := s.dealWithDropped(ctx, hs[i], current, policy)
			if err != nil {
				return "", err
			}
			if why != "" {
				refused = append(refused, why)
			}
		}
		if next == "" || policy == DroppedRefuse && len(refused) >= droppedShown {
			break
		}
		token = next
	}
	if len(refused) == 0 {
		return "", nil
	}
	shown := refused[:min(len(refused), droppedShown)]
	return fmt.Sprintf("%s@%s is not registered, and %d running handlers need it (%s)", workflow, version, total, strings.Join(shown, ", ")), nil
}

// dealWithDropped fails or upgrades one handler of a dropped version, or
// says why start-up is refused for it.
func (s *Runtime) dealWithDropped(ctx context.Context, meta persistence.Handler, current string, policy Dropped) (string, error) {
	cause := fmt.Errorf("its workflow version %s@%s is no longer registered", meta.Workflow, meta.WorkflowVersion)
	switch policy {
	case DroppedFail:
		// failHandler's error says it failed the handler (ErrHandlerDone)
		// or why it could not.
		if err := s.failHandler(ctx, meta, cause); !errors.Is(err, engine.ErrHandlerDone) {
			return "", err
		}
		return "", nil
	case DroppedUpgrade:
		err := s.restoreUpgraded(ctx, meta.ID, current)
		var refused *engine.UpgradeRefusedError
		if errors.As(err, &refused) {
			return fmt.Sprintf("%s cannot move to %s: %s", meta.ID, current, refused.Reason), nil
		}
		if err != nil {
			return "", fmt.Errorf("server: upgrading %s to %s: %w", meta.ID, current, err)
		}
		s.log.Info("handler of a dropped version upgraded", "handler", meta.ID, "workflow", meta.Workflow, "from", meta.WorkflowVersion, "to", current)
		return "", nil
	}
	return meta.ID, nil
}

// restoreUpgraded brings handler id into memory on version to of its
// workflow (engine.RestoreOptions.UpgradeTo), under its lease.
func (s *Runtime) restoreUpgraded(ctx context.Context, id, to string) (err error) {
	if err := s.owners.Acquire(ctx, id); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			s.releaseUnused(id)
		}
	}()
	_, raw, err := s.store.LoadHandler(ctx, id)
	if err != nil {
		return err
	}
	var st statev1.HandlerState
	if err := proto.Unmarshal(raw, &st); err != nil || raw == nil {
		return &engine.UpgradeRefusedError{HandlerID: id, To: to, Reason: "its checkpoint cannot be read"}
	}
	_, _, err = s.engine.Restore(ctx, &st, engine.RestoreOptions{UpgradeTo: to})
	return err
}
