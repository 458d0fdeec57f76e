package histcheck

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// errorIDRE finds the error id of an internal error's message; the
// replica that answered logged its cause under it.
var errorIDRE = regexp.MustCompile(`error id ([A-Z0-9]+)`)

// logCauseRE finds an error id and its cause in a replica's log line.
var logCauseRE = regexp.MustCompile(`error_id=([A-Z0-9]+) err="((?:[^"\\]|\\.)*)"`)

// Causes reads the causes of internal errors from the replicas' logs, by
// error id.
func (c *Cluster) Causes() map[string]string {
	out := map[string]string{}
	for _, r := range c.Replicas {
		causesFrom(r.Log(), out)
	}
	return out
}

func causesFrom(log string, into map[string]string) {
	for _, m := range logCauseRE.FindAllStringSubmatch(log, -1) {
		into[m[1]] = strings.ReplaceAll(m[2], `\"`, `"`)
	}
}

// examples is how many violations of each kind the summary shows.
const examples = 3

// Summary is the run's findings as text: acknowledged operations by kind,
// the faults, violations by kind with examples, the takeover times and
// the bounds checked.
func (r *Result) Summary() string {
	var b strings.Builder
	r.writeRun(&b)
	r.writeOps(&b)
	r.writeFaults(&b)
	r.writeViolations(&b)
	r.writeTakeovers(&b)
	if r.OK() {
		b.WriteString("result: PASS\n")
	} else {
		b.WriteString("result: FAIL\n")
	}
	return b.String()
}

// writeRun writes the run's settings and the handlers planned and checked.
func (r *Result) writeRun(b *strings.Builder) {
	cfg := r.Config
	fmt.Fprintf(b, "history: seed %d, ttl %v, %d replicas, %d clients, ran %v", cfg.Seed, cfg.TTL, or(cfg.Replicas, 3), or(cfg.Clients, 8), r.Elapsed.Round(time.Second))
	if cfg.Plan == nil {
		fmt.Fprintf(b, " (faults for %v)", cfg.Duration)
	}
	fmt.Fprintf(b, "\nhandlers: %d planned, %d checked\n", len(r.Data.Specs), r.Report.Handlers)
}

// writeOps writes the operations acknowledged by kind (and workflow, for
// starts) and the attempts that were not, by code and, when the faults do
// not explain them, by message.
func (r *Result) writeOps(b *strings.Builder) {
	acked, attempts := map[string]int{}, map[string]int{}
	codes := map[string]int{}
	timedOutUp := 0
	for _, o := range r.Data.Ops {
		if o.Code == "deadline_exceeded" && !o.Paused {
			timedOutUp++
		}
		k := string(o.Kind)
		if o.Kind == OpStart {
			k += " " + r.Data.Specs[o.Handler].Workflow
		}
		attempts[k]++
		if o.Acked() {
			acked[k]++
		} else {
			codes[o.Code]++
		}
	}
	b.WriteString("ops acknowledged (of attempts):")
	for _, k := range slices.Sorted(maps.Keys(attempts)) {
		fmt.Fprintf(b, " %s %d (%d)", k, acked[k], attempts[k])
	}
	fmt.Fprintf(b, "; observations %d\n", len(r.Data.Obs))
	if len(codes) > 0 {
		b.WriteString("attempts not acknowledged, by code:")
		for _, c := range slices.Sorted(maps.Keys(codes)) {
			fmt.Fprintf(b, " %s %d", c, codes[c])
		}
		fmt.Fprintf(b, "; calls failed for good: %d\n", r.Errors)
	}
	if odd := unexpected(r.Data.Ops, r.Causes); len(odd) > 0 {
		b.WriteString("attempts that failed for another reason than the faults (distinct messages, at most 5):\n")
		for _, m := range odd {
			b.WriteString("  " + m + "\n")
		}
	}
	if timedOutUp > 0 {
		// Not a violation (nothing acknowledged is at stake) but against
		// the design notes: a replica that cannot serve a call answers
		// Unavailable with a retry hint.
		fmt.Fprintf(b, "attempts through a replica not paused that ran out of time (DeadlineExceeded, not Unavailable): %d\n", timedOutUp)
	}
}

// writeFaults writes the nemesis' actions, counted by schedule and one a
// line, and those that failed.
func (r *Result) writeFaults(b *strings.Builder) {
	counts := map[string]int{}
	var failed []string
	for _, a := range r.Actions {
		counts[a.Schedule]++
		if a.Err != "" {
			failed = append(failed, fmt.Sprintf("  %s on %s at %s: %s", a.Schedule, a.Victim, rel(r.Data, a.Start), a.Err))
		}
	}
	b.WriteString("nemesis:")
	for _, s := range Schedules {
		if counts[s] > 0 {
			fmt.Fprintf(b, " %s ×%d", s, counts[s])
		}
	}
	b.WriteString("\n")
	for _, a := range r.Actions {
		fmt.Fprintf(b, "  %s %s %s: %s\n", rel(r.Data, a.Start), a.Schedule, a.Victim, a.Note)
	}
	if len(failed) > 0 {
		b.WriteString("nemesis steps that failed:\n" + strings.Join(failed, "\n") + "\n")
	}
}

// writeViolations writes the violations counted by kind, with the first
// few (examples) of each.
func (r *Result) writeViolations(b *strings.Builder) {
	b.WriteString("violations:")
	for _, k := range Kinds {
		fmt.Fprintf(b, " %s %d", k, r.Report.Count(k))
	}
	b.WriteString("\n")
	for _, k := range Kinds {
		n := 0
		for _, v := range r.Report.Violations {
			if v.Kind == k && n < examples {
				fmt.Fprintf(b, "  %s %s: %s\n", v.Kind, v.Handler, v.Evidence)
				n++
			}
		}
	}
	if r.Unsettled > 0 {
		fmt.Fprintf(b, "handlers that had to finish and had not when settling ended: %d\n", r.Unsettled)
	}
}

// writeTakeovers writes the takeover times against their bound and what
// broke, ran late or crashed.
func (r *Result) writeTakeovers(b *strings.Builder) {
	fmt.Fprintf(b, "takeover (first call served elsewhere; bound ttl+2s = %v):\n", r.Bound)
	fmt.Fprintf(b, "  kills:  %s\n", TakeoverStats(r.Takeovers, "kill"))
	fmt.Fprintf(b, "  pauses: %s\n", TakeoverStats(r.Takeovers, "pause"))
	if s := EachStats(r.Takeovers, SchedulePausedOwner); s.N > 0 {
		fmt.Fprintf(b, "  paused-owner, each handler: %s\n", s)
	}
	for _, s := range r.Broken {
		b.WriteString("BROKEN: " + s + "\n")
	}
	for _, s := range r.Late {
		b.WriteString("over the bound (reported; -history.strict fails the run on it): " + s + "\n")
	}
	for _, c := range r.Crashes {
		b.WriteString("REPLICA CRASHED: " + c + "\n")
	}
}

// unexpected lists the distinct messages (handler ids left out) of the
// attempts that failed with a code the faults do not explain: not
// Unavailable, DeadlineExceeded or Canceled, not an answer to a finished
// handler.
func unexpected(ops []Op, causes map[string]string) []string {
	seen := map[string]int{}
	var out []string
	for _, o := range ops {
		switch o.Code {
		case "", "unavailable", "deadline_exceeded", "canceled":
			continue
		}
		if o.Finished || (o.Code == "internal" || o.Code == "unknown") && transportMsg(o.Err) {
			continue
		}
		msg := o.Err
		if m := errorIDRE.FindStringSubmatch(msg); m != nil && causes[m[1]] != "" {
			msg = "internal error: " + causes[m[1]] // the same cause under each error id
		}
		m := fmt.Sprintf("%s %s: %s", o.Kind, o.Code, strings.ReplaceAll(msg, o.Handler, "<id>"))
		if seen[m]++; seen[m] == 1 && len(out) < 5 {
			out = append(out, m)
		}
	}
	for i, m := range out {
		out[i] = fmt.Sprintf("%s (×%d)", m, seen[m])
	}
	return out
}

// or is n, or def when n is zero (a default left to the callee).
func or(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}
