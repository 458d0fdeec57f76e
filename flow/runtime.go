package flow

// What a host (the engine, a server that runs steps elsewhere) needs of a
// StepContext beyond what step code calls. Step code has no use for it.

// Runtime carries out a [StepContext]'s calls for one run: the engine
// implements it over the run's handler. Besides the step's [Context] it
// has the calls a host makes on the run's StepContext (see
// [StepContext.Rewind]).
type Runtime interface {
	Context
	Rewind()
	Blocked(on string)
	ResolvedWaits() []ResolvedWait
	WaitPosition() int
}

// NewStepContext returns the StepContext of a run whose calls rt carries
// out. The engine makes one for each run.
func NewStepContext(rt Runtime) *StepContext { return &StepContext{rt: rt} }

// ResolvedWait is the result of one of a run's waits that an earlier run
// resolved, by the wait's position in the run (0 for its first wait).
type ResolvedWait struct {
	Position int
	Event    Event
	TimedOut bool
}

// Rewind makes the run start over from its beginning on this context: its
// waits, collects and children are numbered from the first again, and what
// it sent, wrote or parked on so far is dropped. It is for a step that
// executes its code elsewhere (the server's proxy for remote workers) and
// hands the run to another executor after the first was lost: the second
// then reaches the same wait ids, memos and children, as a re-run does.
// Durable effects of the lost executor (Set, Once) stay, as after a crash.
func (sc *StepContext) Rewind() { sc.rt.Rewind() }

// Blocked reports that the run waits for something outside the handler
// to execute it (on, e.g. "worker": a server's proxy step with no worker
// to take it), or, with on == "", that it no longer does. The handler's
// stream records each change (the engine's RecordBlocked), so clients see
// why a busy handler does not move. Repeating the current state records
// nothing.
func (sc *StepContext) Blocked(on string) { sc.rt.Blocked(on) }

// ResolvedWaits lists the run's waits that earlier runs resolved, by
// position: what WaitFor, Sleep and the other waits at those positions
// will answer at once. A server's proxy step hands them to a remote
// worker, which then answers those waits itself.
func (sc *StepContext) ResolvedWaits() []ResolvedWait { return sc.rt.ResolvedWaits() }

// WaitPosition is the position the run's next wait will have.
func (sc *StepContext) WaitPosition() int { return sc.rt.WaitPosition() }
