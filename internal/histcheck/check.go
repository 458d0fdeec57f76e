package histcheck

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// Kind is a kind of violation.
type Kind string

// The kinds a check reports. The first six are the invariants of the
// design notes; WrongResult (a completion no client asked for) and
// Unreadable (a handler the final read could not read, so nothing about
// it is known) keep the report honest about what fits none of them.
const (
	Lost                Kind = "lost"                 // acknowledged, not there
	Undone              Kind = "undone"               // was there (observed or recorded), went back
	DoubleTerminal      Kind = "double_terminal"      // more than one terminal record, or one not last
	TimerTwice          Kind = "timer_twice"          // an expense handler's timer acted after it had completed
	StatusContradiction Kind = "status_contradiction" // GetHandler disagrees with the records
	Gap                 Kind = "gap"                  // sequence numbers not 1..last
	WrongResult         Kind = "wrong_result"         // completed with data no client sent
	Unreadable          Kind = "unreadable"           // final read failed
)

// Kinds lists every kind in report order.
var Kinds = []Kind{Lost, Undone, DoubleTerminal, TimerTwice, StatusContradiction, Gap, WrongResult, Unreadable}

// Violation is one handler breaking one invariant, with what shows it.
type Violation struct {
	Kind     Kind   `json:"kind"`
	Handler  string `json:"handler"`
	Evidence string `json:"evidence"`
}

// Report is what Check found.
type Report struct {
	Handlers   int         `json:"handlers"`
	Violations []Violation `json:"violations"`
}

// Count returns how many handlers broke the invariant of kind k.
func (r Report) Count(k Kind) int {
	n := 0
	for _, v := range r.Violations {
		if v.Kind == k {
			n++
		}
	}
	return n
}

// Rec is one record of a handler as the final read saw it.
type Rec struct {
	Seq      uint64              `json:"seq"`
	Kind     string              `json:"kind"` // the oneof's name, for evidence
	Terminal bool                `json:"terminal,omitempty"`
	Status   wfdv1.HandlerStatus `json:"status,omitempty"` // of a terminal record
	Result   map[string]any      `json:"result,omitempty"`
	Error    string              `json:"error,omitempty"`
}

// Final is a handler as the final read saw it, once everything healed:
// GetHandler's answer and every record.
type Final struct {
	NotFound  bool                `json:"not_found,omitempty"`
	ReadErr   string              `json:"read_err,omitempty"`
	Replica   string              `json:"replica,omitempty"` // the one GetHandler asked
	Status    wfdv1.HandlerStatus `json:"status"`
	LastSeq   uint64              `json:"last_seq"`
	Residency wfdv1.Residency     `json:"residency,omitempty"`
	Idle      bool                `json:"idle,omitempty"`
	Result    map[string]any      `json:"result,omitempty"`
	Error     string              `json:"error,omitempty"`
	Records   []Rec               `json:"records"`
}

// Check holds every planned handler of the history to the invariants,
// against the final reads. It is a pure function: the same history and
// reads give the same report.
func Check(d Data, finals map[string]Final) Report {
	ops := map[string][]Op{}
	for _, o := range d.Ops {
		ops[o.Handler] = append(ops[o.Handler], o)
	}
	obs := map[string][]Observation{}
	for _, o := range d.Obs {
		obs[o.Handler] = append(obs[o.Handler], o)
	}
	ids := make([]string, 0, len(d.Specs))
	for id := range d.Specs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	r := Report{Handlers: len(ids)}
	for _, id := range ids {
		f, ok := finals[id]
		c := &handlerCheck{id: id, spec: d.Specs[id], ops: ops[id], obs: obs[id], final: f, read: ok, d: d}
		c.run()
		r.Violations = append(r.Violations, c.found...)
	}
	slices.SortStableFunc(r.Violations, func(a, b Violation) int {
		return cmp.Compare(slices.Index(Kinds, a.Kind), slices.Index(Kinds, b.Kind))
	})
	return r
}

// handlerCheck checks one handler; found holds at most one violation per
// kind, its evidence joined.
type handlerCheck struct {
	id    string
	spec  Spec
	ops   []Op
	obs   []Observation
	final Final
	read  bool
	d     Data
	found []Violation
}

func (c *handlerCheck) add(k Kind, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for i := range c.found {
		if c.found[i].Kind == k {
			c.found[i].Evidence += "; " + msg
			return
		}
	}
	c.found = append(c.found, Violation{Kind: k, Handler: c.id, Evidence: msg})
}

func (c *handlerCheck) run() {
	start := c.firstAcked(OpStart)
	switch {
	case !c.read && start == nil:
		return // never acknowledged and not read: nothing to hold it to
	case !c.read:
		c.add(Unreadable, "start acknowledged %s; no final read", c.opText(start))
		return
	case c.final.ReadErr != "":
		if start != nil || len(c.obs) > 0 {
			c.add(Unreadable, "final read: %s", c.final.ReadErr)
		}
		return
	case c.final.NotFound:
		if start != nil {
			c.add(Lost, "start acknowledged %s; the handler does not exist", c.opText(start))
		} else if len(c.obs) > 0 {
			c.add(Undone, "observed %s; the handler does not exist", c.obsText(c.obs[0]))
		}
		return
	}
	c.checkRecords()
	c.checkStatus()
	c.checkAnswer()
	c.checkTimer()
	c.checkObservations()
}

// checkRecords: sequence numbers 1..last, one terminal record, the last.
func (c *handlerCheck) checkRecords() {
	recs := c.final.Records
	if len(recs) == 0 {
		c.add(Gap, "no records; GetHandler last_seq %d", c.final.LastSeq)
		return
	}
	for i, r := range recs {
		if r.Seq != uint64(i+1) {
			c.add(Gap, "record #%d where #%d was due (read %d records, last #%d)", r.Seq, i+1, len(recs), recs[len(recs)-1].Seq)
			break
		}
	}
	terms := c.terminals()
	if len(terms) > 1 || len(terms) == 1 && terms[0] != len(recs)-1 {
		c.add(DoubleTerminal, "%d terminal records in %d: %s", len(terms), len(recs), c.recsText())
		if c.spec.Workflow == Expense {
			c.add(TimerTwice, "records after the completion: %s", c.recsText())
		}
	}
}

// checkStatus: GetHandler agrees with the records.
func (c *handlerCheck) checkStatus() {
	f, recs := c.final, c.final.Records
	if len(recs) == 0 {
		return
	}
	last := recs[len(recs)-1]
	terms := c.terminals()
	switch {
	case f.Status == wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING && len(terms) > 0:
		c.add(StatusContradiction, "GetHandler %s but the records hold a terminal one: %s", c.finalText(), c.recsText())
	case terminal(f.Status) && len(terms) == 0:
		c.add(StatusContradiction, "GetHandler %s but no record is terminal: %s", c.finalText(), c.recsText())
	case terminal(f.Status) && last.Terminal && last.Status != f.Status:
		c.add(StatusContradiction, "GetHandler %s but the last record says %s", c.finalText(), recText(last))
	case f.Status == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED && last.Terminal && !sameResult(f.Result, last.Result):
		c.add(StatusContradiction, "GetHandler %s but the last record says %s", c.finalText(), recText(last))
	}
	if f.LastSeq != last.Seq {
		c.add(StatusContradiction, "GetHandler last_seq %d, last record #%d", f.LastSeq, last.Seq)
	}
}

// checkAnswer: an approval handler completes only with the answer sent to
// it, and an acknowledged answer is reflected in the final state.
func (c *handlerCheck) checkAnswer() {
	if c.spec.Workflow != Approval {
		return
	}
	a := c.spec.Answer
	for _, i := range c.terminals() {
		r := c.final.Records[i]
		if r.Status == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED && (a == nil || !answers(r.Result, *a)) {
			c.add(WrongResult, "%s; answer sent: %s", recText(r), answerText(a))
		}
	}
	if c.final.Status == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED && (a == nil || !answers(c.final.Result, *a)) {
		c.add(WrongResult, "GetHandler %s; answer sent: %s", c.finalText(), answerText(a))
	}
	ack := c.firstAcked(OpAnswer)
	if ack == nil || a == nil {
		return
	}
	done := func(st wfdv1.HandlerStatus, res map[string]any) bool {
		return st == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED && answers(res, *a)
	}
	c.reflected(ack, "answer", done)
}

// checkTimer: an acknowledged expense handler completes {"expired": true}
// once its deadline passes (nobody answers it).
func (c *handlerCheck) checkTimer() {
	if c.spec.Workflow != Expense {
		return
	}
	for _, i := range c.terminals() {
		r := c.final.Records[i]
		if r.Status == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED && !expired(r.Result) {
			c.add(WrongResult, "%s, want {\"expired\":true}", recText(r))
		}
	}
	ack := c.firstAcked(OpStart)
	if ack == nil {
		return
	}
	done := func(st wfdv1.HandlerStatus, res map[string]any) bool {
		return st == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED && expired(res)
	}
	c.reflected(ack, fmt.Sprintf("start (deadline %gs)", c.spec.DeadlineS), done)
}

// reflected checks that what ack promised (done) holds in the final
// GetHandler: if it held in a record or an observation and no longer
// does, it was undone; if it never held, it was lost.
func (c *handlerCheck) reflected(ack *Op, what string, done func(wfdv1.HandlerStatus, map[string]any) bool) {
	if done(c.final.Status, c.final.Result) {
		return
	}
	for _, i := range c.terminals() {
		if r := c.final.Records[i]; done(r.Status, r.Result) {
			c.add(Undone, "%s acknowledged %s, completed in record #%d, but GetHandler %s", what, c.opText(ack), r.Seq, c.finalText())
			return
		}
	}
	for _, o := range c.obs {
		if o.Status == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
			c.add(Undone, "%s acknowledged %s, observed %s, but GetHandler %s", what, c.opText(ack), c.obsText(o), c.finalText())
			return
		}
	}
	c.add(Lost, "%s acknowledged %s, never completed: GetHandler %s; records %s", what, c.opText(ack), c.finalText(), c.recsText())
}

// checkObservations: a status observed terminal stays that status, and
// last_seq never goes down, between observations ordered in real time
// (one ended before the other started) and up to the final read.
func (c *handlerCheck) checkObservations() {
	byStart := slices.Clone(c.obs)
	slices.SortFunc(byStart, func(a, b Observation) int { return a.Start.Compare(b.Start) })
	byEnd := slices.Clone(c.obs)
	slices.SortFunc(byEnd, func(a, b Observation) int { return a.End.Compare(b.End) })
	var term, maxSeq *Observation // among the observations ended so far
	j := 0
	see := func(o Observation) bool {
		if term != nil && o.Status != term.Status {
			c.add(Undone, "observed %s, later %s", c.obsText(*term), c.obsText(o))
			return false
		}
		if maxSeq != nil && o.LastSeq < maxSeq.LastSeq {
			c.add(Undone, "observed %s, later %s", c.obsText(*maxSeq), c.obsText(o))
			return false
		}
		return true
	}
	for _, b := range byStart {
		for ; j < len(byEnd) && byEnd[j].End.Before(b.Start); j++ {
			if o := &byEnd[j]; term == nil && terminal(o.Status) {
				term = o
			}
			if o := &byEnd[j]; maxSeq == nil || o.LastSeq > maxSeq.LastSeq {
				maxSeq = o
			}
		}
		if !see(b) {
			return
		}
	}
	for _, o := range c.obs {
		if term == nil && terminal(o.Status) {
			term = &o
		}
		if maxSeq == nil || o.LastSeq > maxSeq.LastSeq {
			maxSeq = &o
		}
	}
	f := c.final
	see(Observation{Handler: c.id, Replica: f.Replica + " (final read)", Status: f.Status, LastSeq: f.LastSeq, Start: c.d.Start.Add(-1)})
}

func (c *handlerCheck) terminals() []int {
	var out []int
	for i, r := range c.final.Records {
		if r.Terminal {
			out = append(out, i)
		}
	}
	return out
}

func (c *handlerCheck) firstAcked(k OpKind) *Op {
	for i := range c.ops {
		if c.ops[i].Kind == k && c.ops[i].Acked() {
			return &c.ops[i]
		}
	}
	return nil
}

func (c *handlerCheck) opText(o *Op) string {
	s := fmt.Sprintf("at %s through %s", rel(c.d, o.End), o.Replica)
	if o.Finished {
		s += " (FailedPrecondition: finished)"
	}
	return s
}

func (c *handlerCheck) obsText(o Observation) string {
	if o.End.IsZero() {
		return fmt.Sprintf("%s last_seq %d through %s", short(o.Status), o.LastSeq, o.Replica)
	}
	return fmt.Sprintf("%s last_seq %d at %s through %s", short(o.Status), o.LastSeq, rel(c.d, o.End), o.Replica)
}

func (c *handlerCheck) finalText() string {
	f := c.final
	s := fmt.Sprintf("%s last_seq %d", short(f.Status), f.LastSeq)
	if f.Status == wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
		s += " " + strings.TrimPrefix(f.Residency.String(), "RESIDENCY_")
		if f.Idle {
			s += " idle"
		}
	}
	if f.Result != nil {
		s += " " + mapText(f.Result)
	}
	if f.Error != "" {
		s += ": " + f.Error
	}
	return s
}

// recsText shows the terminal records and the last three.
func (c *handlerCheck) recsText() string {
	recs := c.final.Records
	var parts []string
	for i, r := range recs {
		if r.Terminal || i >= len(recs)-3 {
			parts = append(parts, recText(r))
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
