package workers

import (
	"errors"
	"fmt"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/engine"
)

// errLocalWaits: a wait a worker answered itself (Dispatch.local_waits)
// is answered otherwise by the engine; the run starts over without them.
var errLocalWaits = errors.New("local waits differ from the engine's")

// applyLocalWaits makes, on the run's real context, the waits a worker
// answered itself, in order, and checks that the engine answers each the
// same way: at the same position, resolved (an event, or timed out) when
// the worker took the answer from the dispatch, parked when it parked.
// That keeps the run's wait numbering, limits and parking the engine's.
func applyLocalWaits(sc *engine.StepContext, lws []*wfdv1.LocalWait) error {
	for _, lw := range lws {
		if pos := sc.WaitPosition(); uint32(pos) != lw.GetPosition() {
			return fmt.Errorf("%w: the worker's wait %d is the engine's wait %d", errLocalWaits, lw.GetPosition(), pos)
		}
		var err error
		switch k := lw.GetKind().(type) {
		case *wfdv1.LocalWait_WaitFor:
			_, err = sc.WaitFor(k.WaitFor.GetType(), engine.WaitOptions{Match: k.WaitFor.GetMatch(), Timeout: k.WaitFor.GetTimeout().AsDuration()})
		case *wfdv1.LocalWait_Sleep:
			err = sc.Sleep(k.Sleep.AsDuration())
		default:
			return fmt.Errorf("%w: wait %d is neither a wait_for nor a sleep", errLocalWaits, lw.GetPosition())
		}
		parked := errors.Is(err, engine.ErrWaiting)
		switch {
		case err != nil && !parked && !errors.Is(err, engine.ErrTimeout):
			return fmt.Errorf("%w: wait %d: %w", errLocalWaits, lw.GetPosition(), err)
		case parked == lw.GetResolved():
			return fmt.Errorf("%w: wait %d: the worker says resolved=%v, the engine parked=%v", errLocalWaits, lw.GetPosition(), lw.GetResolved(), parked)
		}
	}
	return nil
}
