package histcheck_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/histcheck"
)

const (
	running   = wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING
	completed = wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED
	failed    = wfdv1.HandlerStatus_HANDLER_STATUS_FAILED
	released  = wfdv1.Residency_RESIDENCY_RELEASED
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// op is an attempt through r1 from s to s+0.1 seconds; code "" is
// acknowledged.
func op(kind histcheck.OpKind, code string, s float64) histcheck.Op {
	return histcheck.Op{Kind: kind, Handler: "h", Replica: "r1", Start: at(s), End: at(s + 0.1), Code: code}
}

func obs(st wfdv1.HandlerStatus, seq uint64, from, to float64) histcheck.Observation {
	return histcheck.Observation{Handler: "h", Replica: "r2", Status: st, LastSeq: seq, Start: at(from), End: at(to)}
}

// recs returns records 1..n, the ones listed in term terminal.
func recs(n int, term map[uint64]histcheck.Rec) []histcheck.Rec {
	var out []histcheck.Rec
	for i := uint64(1); i <= uint64(n); i++ {
		if r, ok := term[i]; ok {
			r.Seq, r.Terminal, r.Kind = i, true, "handler_finished"
			out = append(out, r)
			continue
		}
		out = append(out, histcheck.Rec{Seq: i, Kind: "step_state_changed"})
	}
	return out
}

var (
	yes       = histcheck.Answer{Approved: true, Comment: "for h"}
	yesResult = map[string]any{"approved": true, "comment": "for h", "request": map[string]any{"amount": 3.0}}
	noResult  = map[string]any{"approved": false, "comment": "for h"}
	expiredR  = map[string]any{"expired": true}
	approval  = histcheck.Spec{Workflow: histcheck.Approval, Answer: &yes}
	unplanned = histcheck.Spec{Workflow: histcheck.Approval}
	expense   = histcheck.Spec{Workflow: histcheck.Expense, DeadlineS: 2}
	doneRec   = map[uint64]histcheck.Rec{6: {Status: completed, Result: yesResult}}
	answered  = []histcheck.Op{op(histcheck.OpStart, "", 0), op(histcheck.OpAnswer, "", 1)}
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  histcheck.Spec
		ops   []histcheck.Op
		obs   []histcheck.Observation
		final *histcheck.Final // nil: not read
		want  []histcheck.Kind
	}{
		{
			name: "answered and completed with its answer", spec: approval, ops: answered,
			obs:   []histcheck.Observation{obs(running, 4, 0.5, 0.6), obs(completed, 6, 2, 2.1)},
			final: &histcheck.Final{Status: completed, LastSeq: 6, Result: yesResult, Records: recs(6, doneRec)},
		},
		{
			name: "started, idle, never answered", spec: unplanned, ops: answered[:1],
			final: &histcheck.Final{Status: running, LastSeq: 4, Residency: released, Idle: true, Records: recs(4, nil)},
		},
		{
			name: "expense expired once", spec: expense, ops: answered[:1],
			final: &histcheck.Final{Status: completed, LastSeq: 8, Result: expiredR, Records: recs(8, map[uint64]histcheck.Rec{8: {Status: completed, Result: expiredR}})},
		},
		{
			name: "answer not acknowledged, completed with it", spec: approval,
			ops:   []histcheck.Op{op(histcheck.OpStart, "", 0), op(histcheck.OpAnswer, "deadline_exceeded", 1)},
			final: &histcheck.Final{Status: completed, LastSeq: 6, Result: yesResult, Records: recs(6, doneRec)},
		},
		{
			name: "answer refused as finished, completed with it", spec: approval,
			ops:   []histcheck.Op{op(histcheck.OpStart, "", 0), {Kind: histcheck.OpAnswer, Handler: "h", Replica: "r3", Start: at(1), End: at(1.1), Code: "failed_precondition", Finished: true}},
			final: &histcheck.Final{Status: completed, LastSeq: 6, Result: yesResult, Records: recs(6, doneRec)},
		},
		{
			name: "start not acknowledged, absent", spec: unplanned,
			ops:   []histcheck.Op{op(histcheck.OpStart, "unavailable", 0)},
			final: &histcheck.Final{NotFound: true},
		},
		{
			name: "concurrent observations are not ordered", spec: approval, ops: answered,
			obs:   []histcheck.Observation{obs(completed, 6, 1, 3), obs(running, 4, 2, 4)},
			final: &histcheck.Final{Status: completed, LastSeq: 6, Result: yesResult, Records: recs(6, doneRec)},
		},
		{
			name: "acknowledged start, absent", spec: unplanned, ops: answered[:1],
			final: &histcheck.Final{NotFound: true},
			want:  []histcheck.Kind{histcheck.Lost},
		},
		{
			name: "acknowledged answer, still waiting", spec: approval, ops: answered,
			final: &histcheck.Final{Status: running, LastSeq: 4, Idle: true, Records: recs(4, nil)},
			want:  []histcheck.Kind{histcheck.Lost},
		},
		{
			// Issue 23, point 1: the records say completed, GetHandler
			// says running, released, idle.
			name: "completion undone by a stale write", spec: approval, ops: answered,
			obs:   []histcheck.Observation{obs(completed, 9, 2, 2.1)},
			final: &histcheck.Final{Status: running, LastSeq: 9, Residency: released, Idle: true, Records: recs(9, map[uint64]histcheck.Rec{9: {Status: completed, Result: yesResult}})},
			want:  []histcheck.Kind{histcheck.Undone, histcheck.StatusContradiction},
		},
		{
			// Issue 23, point 2: #8 completed {"expired":true}, #9 failed.
			name: "timer fired twice", spec: expense, ops: answered[:1],
			final: &histcheck.Final{Status: failed, LastSeq: 9, Error: "cannot restore its checkpoint: handler is finished", Records: recs(9, map[uint64]histcheck.Rec{
				8: {Status: completed, Result: expiredR},
				9: {Status: failed, Error: "cannot restore its checkpoint: handler is finished"},
			})},
			want: []histcheck.Kind{histcheck.Undone, histcheck.DoubleTerminal, histcheck.TimerTwice},
		},
		{
			name: "expense timer never fired", spec: expense, ops: answered[:1],
			final: &histcheck.Final{Status: running, LastSeq: 5, Records: recs(5, nil)},
			want:  []histcheck.Kind{histcheck.Lost},
		},
		{
			name: "a record after the terminal one", spec: approval, ops: answered,
			final: &histcheck.Final{Status: completed, LastSeq: 7, Result: yesResult, Records: recs(7, doneRec)},
			want:  []histcheck.Kind{histcheck.DoubleTerminal},
		},
		{
			name: "sequence gap", spec: approval, ops: answered,
			final: &histcheck.Final{Status: completed, LastSeq: 6, Result: yesResult, Records: slices.Delete(recs(6, doneRec), 2, 3)},
			want:  []histcheck.Kind{histcheck.Gap},
		},
		{
			name: "last_seq beyond the records", spec: approval, ops: answered,
			final: &histcheck.Final{Status: completed, LastSeq: 7, Result: yesResult, Records: recs(6, doneRec)},
			want:  []histcheck.Kind{histcheck.StatusContradiction},
		},
		{
			name: "completed without a terminal record", spec: approval, ops: answered,
			final: &histcheck.Final{Status: completed, LastSeq: 6, Result: yesResult, Records: recs(6, nil)},
			want:  []histcheck.Kind{histcheck.StatusContradiction},
		},
		{
			name: "observed completed, later running", spec: approval, ops: answered,
			obs:   []histcheck.Observation{obs(completed, 6, 2, 2.1), obs(running, 6, 3, 3.1)},
			final: &histcheck.Final{Status: completed, LastSeq: 6, Result: yesResult, Records: recs(6, doneRec)},
			want:  []histcheck.Kind{histcheck.Undone},
		},
		{
			name: "last_seq went down", spec: unplanned, ops: answered[:1],
			obs:   []histcheck.Observation{obs(running, 7, 2, 2.1), obs(running, 5, 3, 3.1)},
			final: &histcheck.Final{Status: running, LastSeq: 7, Records: recs(7, nil)},
			want:  []histcheck.Kind{histcheck.Undone},
		},
		{
			name: "final last_seq below an observed one", spec: unplanned, ops: answered[:1],
			obs:   []histcheck.Observation{obs(running, 7, 2, 2.1)},
			final: &histcheck.Final{Status: running, LastSeq: 5, Records: recs(5, nil)},
			want:  []histcheck.Kind{histcheck.Undone},
		},
		{
			name: "completed with another answer", spec: approval, ops: answered,
			final: &histcheck.Final{Status: completed, LastSeq: 6, Result: noResult, Records: recs(6, map[uint64]histcheck.Rec{6: {Status: completed, Result: noResult}})},
			want:  []histcheck.Kind{histcheck.Lost, histcheck.WrongResult},
		},
		{
			name: "completed though never answered", spec: unplanned, ops: answered[:1],
			final: &histcheck.Final{Status: completed, LastSeq: 6, Result: yesResult, Records: recs(6, doneRec)},
			want:  []histcheck.Kind{histcheck.WrongResult},
		},
		{
			name: "final read failed", spec: approval, ops: answered,
			final: &histcheck.Final{ReadErr: "unavailable: no replica answered"},
			want:  []histcheck.Kind{histcheck.Unreadable},
		},
		{
			name: "acknowledged but not read", spec: approval, ops: answered,
			want: []histcheck.Kind{histcheck.Unreadable},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := histcheck.Data{Start: t0, Specs: map[string]histcheck.Spec{"h": tc.spec}, Ops: tc.ops, Obs: tc.obs}
			finals := map[string]histcheck.Final{}
			if tc.final != nil {
				finals["h"] = *tc.final
			}
			r := histcheck.Check(d, finals)
			var got []histcheck.Kind
			for _, v := range r.Violations {
				got = append(got, v.Kind)
				if v.Handler != "h" || v.Evidence == "" {
					t.Errorf("violation without handler or evidence: %+v", v)
				}
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("kinds %v, want %v; report:\n%s", got, want, violationsText(r))
			}
		})
	}
}

// TestCheckEvidence: a violation says what shows it, with the records and
// the acknowledgement named.
func TestCheckEvidence(t *testing.T) {
	d := histcheck.Data{Start: t0, Specs: map[string]histcheck.Spec{"h": approval}, Ops: answered}
	final := histcheck.Final{Status: running, LastSeq: 9, Residency: released, Idle: true,
		Records: recs(9, map[uint64]histcheck.Rec{9: {Status: completed, Result: yesResult}})}
	r := histcheck.Check(d, map[string]histcheck.Final{"h": final})
	text := violationsText(r)
	for _, want := range []string{"#9 completed", `"comment":"for h"`, "RUNNING last_seq 9 RELEASED idle", "at +1.100s through r1"} {
		if !strings.Contains(text, want) {
			t.Errorf("evidence lacks %q:\n%s", want, text)
		}
	}
	if r.Count(histcheck.Undone) != 1 || r.Handlers != 1 {
		t.Errorf("counts: undone %d, handlers %d", r.Count(histcheck.Undone), r.Handlers)
	}
}

func violationsText(r histcheck.Report) string {
	var b strings.Builder
	for _, v := range r.Violations {
		b.WriteString(string(v.Kind) + " " + v.Handler + ": " + v.Evidence + "\n")
	}
	return b.String()
}
