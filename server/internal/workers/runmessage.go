package workers

import (
	"math"
	"net/http"
	"slices"

	"connectrpc.com/connect"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
)

// Framing of a run's effects on the wire (FinishRun, StepCall), on top of
// their payloads.
const (
	// runItemFraming is what one event a run sends or writes, or one wait
	// it answered itself (LocalWait), costs besides its data: a type of
	// at most 256 bytes (the engine's limit on names), an id, a small
	// match, and the protobuf tags and lengths.
	runItemFraming = 512
	// runMessageSlack is room for the rest: ids, the error message (the
	// engine keeps 4 KiB of it), the operation of a StepCall.
	runMessageSlack = 64 << 10
)

// runMessageBytes is the largest StepCall, FinishRun or FinishRuns (for
// all its runs together: a worker batches only runs that ended small) the
// server reads:
// what one step run may send and write in all (engine.Limits
// MaxRunOutputBytes, 16 × MaxPayloadBytes), framing for each event and
// local wait it may carry (MaxQueuedEvents of each), and room for the
// rest; never less than MaxMessageBytes. About 26 MiB with the defaults.
// A run whose effects are larger fails in the engine (ErrLimit) if they
// fit, and is refused here (ResourceExhausted) if they do not; the
// worker SDKs then finish the run with that error (a step failure).
func (r *Registry) runMessageBytes() int {
	l := r.eng.Limits()
	n := int64(l.MaxRunOutputBytes()) + 2*int64(l.MaxQueuedEvents)*runItemFraming + runMessageSlack
	// gRPC frames a message's length in 32 bits.
	return int(min(max(n, int64(r.opts.MaxMessageBytes)), math.MaxUint32))
}

// Mount serves WorkerService on mux: its StepCall, FinishRun and
// FinishRuns, which carry runs' effects, with the read limit of
// runMessageBytes, its other calls with opts' (MaxMessageBytes).
func (r *Registry) Mount(mux *http.ServeMux, opts []connect.HandlerOption) {
	mux.Handle(wfdv1connect.NewWorkerServiceHandler(&service{r: r}, opts...))
	_, runs := wfdv1connect.NewWorkerServiceHandler(&service{r: r}, append(slices.Clip(opts), connect.WithReadMaxBytes(r.runMessageBytes()))...)
	mux.Handle(wfdv1connect.WorkerServiceStepCallProcedure, runs)
	mux.Handle(wfdv1connect.WorkerServiceFinishRunProcedure, runs)
	mux.Handle(wfdv1connect.WorkerServiceFinishRunsProcedure, runs)
}
