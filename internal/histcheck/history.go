package histcheck

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// OpKind is what a client asked a replica.
type OpKind string

// The calls the workload and the nemesis make. GetHandler calls are
// recorded as Observations, not as Ops.
const (
	OpStart   OpKind = "start"
	OpAnswer  OpKind = "answer"
	OpRelease OpKind = "release"
)

// Workflows the history uses (both built into wfd serve).
const (
	Approval = "approval"
	Expense  = "expense"
)

// Op is one attempt of a call through one replica. A logical call retried
// through other replicas is several Ops of the same kind and handler.
type Op struct {
	Kind    OpKind    `json:"kind"`
	Handler string    `json:"handler"`
	Replica string    `json:"replica"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	// Code is "" for an acknowledged call, else the Connect code's name
	// ("unavailable", ...) with Err its message.
	Code string `json:"code,omitempty"`
	Err  string `json:"err,omitempty"`
	// Finished marks an answer refused FailedPrecondition because the
	// handler had finished: an earlier attempt of the same answer may have
	// taken effect, so it counts as acknowledged if the handler completed
	// with this answer (the checker holds it to that).
	Finished bool `json:"finished,omitempty"`
	// Paused: the replica was paused when the attempt was made (a caller
	// of a paused replica may time out; a caller of one that is up should
	// be told Unavailable, never left to time out).
	Paused bool `json:"paused,omitempty"`
}

// Acked says whether the call was acknowledged.
func (o Op) Acked() bool { return o.Code == "" || o.Finished }

// Observation is one GetHandler answer: what a replica said the handler's
// stored state was, between Start and End.
type Observation struct {
	Handler   string              `json:"handler"`
	Replica   string              `json:"replica"`
	Start     time.Time           `json:"start"`
	End       time.Time           `json:"end"`
	Status    wfdv1.HandlerStatus `json:"status"`
	LastSeq   uint64              `json:"last_seq"`
	Residency wfdv1.Residency     `json:"residency"`
	Owner     string              `json:"owner,omitempty"`
}

// Answer is the data of the approval event a client sends a handler:
// {"approved": Approved, "comment": Comment}.
type Answer struct {
	Approved bool   `json:"approved"`
	Comment  string `json:"comment"`
}

// Spec is what the run meant a handler to be: its workflow and, once the
// client decides to answer it, the one answer it will ever send.
type Spec struct {
	Workflow string  `json:"workflow"`
	Answer   *Answer `json:"answer,omitempty"`
	// DeadlineS is an expense handler's deadline_s input.
	DeadlineS float64 `json:"deadline_s,omitempty"`
}

// Data is a history as the checker reads it.
type Data struct {
	Start time.Time       `json:"start"`
	Specs map[string]Spec `json:"specs"`
	Ops   []Op            `json:"ops"`
	Obs   []Observation   `json:"obs"`
}

// History records a run's calls and observations; its methods are safe
// for concurrent use.
type History struct {
	mu    sync.Mutex
	start time.Time
	specs map[string]Spec
	ids   []string // in planning order, for sampling
	ops   []Op
	obs   []Observation
}

// NewHistory returns an empty history starting now.
func NewHistory() *History {
	return &History{start: time.Now(), specs: map[string]Spec{}}
}

// Plan adds a handler the run is about to start.
func (h *History) Plan(id string, s Spec) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.specs[id]; !ok {
		h.ids = append(h.ids, id)
	}
	h.specs[id] = s
}

// PlanAnswer records the answer the run is about to send handler id,
// before it is sent: an attempt whose acknowledgement is lost may still
// have taken effect, and the checker must know its data.
func (h *History) PlanAnswer(id string, a Answer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.specs[id]
	s.Answer = &a
	h.specs[id] = s
}

// AddOp records one call attempt.
func (h *History) AddOp(o Op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, o)
}

// Observe records one GetHandler answer.
func (h *History) Observe(o Observation) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.obs = append(h.obs, o)
}

// RandomHandler returns a handler planned so far, or "".
func (h *History) RandomHandler(rng *rand.Rand) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ids) == 0 {
		return ""
	}
	return h.ids[rng.IntN(len(h.ids))]
}

// Handlers returns every planned handler, in planning order.
func (h *History) Handlers() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ids...)
}

// Spec returns what the run planned for handler id.
func (h *History) Spec(id string) Spec {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.specs[id]
}

// Acked says whether a call of this kind for handler id was acknowledged.
func (h *History) Acked(kind OpKind, id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.ops) - 1; i >= 0; i-- {
		if o := h.ops[i]; o.Kind == kind && o.Handler == id && o.Acked() {
			return true
		}
	}
	return false
}

// Data returns a copy of what was recorded so far.
func (h *History) Data() Data {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := Data{Start: h.start, Specs: make(map[string]Spec, len(h.specs)),
		Ops: append([]Op(nil), h.ops...), Obs: append([]Observation(nil), h.obs...)}
	for k, v := range h.specs {
		d.Specs[k] = v
	}
	return d
}

// WriteFile writes the history as JSON, for replaying the checker or
// reading a failure after the run.
func (d Data) WriteFile(path string) error {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("histcheck: encode history: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("histcheck: write history: %w", err)
	}
	return nil
}
