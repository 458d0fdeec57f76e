package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// statusName is a status without its enum prefix: running, completed, ...
func statusName(s wfdv1.HandlerStatus) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "HANDLER_STATUS_"))
}

// handlerState is the status, with running split into busy (running),
// idle and released.
func handlerState(h *wfdv1.Handler) string {
	if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
		return statusName(h.GetStatus())
	}
	switch {
	case h.GetResidency() == wfdv1.Residency_RESIDENCY_RELEASED:
		return "released"
	case h.GetIdle() != nil:
		return "idle"
	case len(h.GetWaitingForWorker()) > 0:
		return "waiting for a worker"
	}
	return "running"
}

// handlerDetail is the result, the error, or what an idle handler waits for.
func handlerDetail(h *wfdv1.Handler) string {
	switch h.GetStatus() {
	case wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED:
		return jsonText(h.GetResult())
	case wfdv1.HandlerStatus_HANDLER_STATUS_FAILED, wfdv1.HandlerStatus_HANDLER_STATUS_CANCELLED:
		return h.GetError()
	}
	return waitsText(h.GetIdle())
}

func handlerLine(h *wfdv1.Handler) string {
	return strings.TrimSpace(fmt.Sprintf("%s  %s  %s  %s", h.GetHandlerId(), h.GetWorkflow(), handlerState(h), handlerDetail(h)))
}

// handlerFields are the lines of get's output.
func handlerFields(h *wfdv1.Handler) [][2]string {
	out := [][2]string{
		{"handler", h.GetHandlerId()},
		{"workflow", h.GetWorkflow()},
	}
	if h.GetWorkflowVersion() != "" {
		out = append(out, [2]string{"version", h.GetWorkflowVersion()})
	}
	out = append(out, [2]string{"status", statusName(h.GetStatus())})
	if h.GetParentId() != "" {
		out = append(out, [2]string{"parent", h.GetParentId()})
	}
	if sl := h.GetSlot(); sl != nil {
		q := fmt.Sprintf("key %q", sl.GetKey())
		if sl.GetQueued() {
			q += fmt.Sprintf(", queued at %d", sl.GetPosition())
		}
		out = append(out, [2]string{"concurrency", q})
	}
	if st := h.GetStatus(); st == wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING || st == wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED {
		out = append(out, [2]string{"residency", strings.ToLower(strings.TrimPrefix(h.GetResidency().String(), "RESIDENCY_"))})
	}
	if h.GetOwner() != "" {
		out = append(out, [2]string{"owner", h.GetOwner()})
	}
	out = append(out, [2]string{"created", timeText(h.GetCreatedAt())}, [2]string{"updated", timeText(h.GetUpdatedAt())})
	if h.GetCompletedAt() != nil {
		out = append(out, [2]string{"completed", timeText(h.GetCompletedAt())})
	}
	if i := h.GetIdle(); i != nil {
		out = append(out, [2]string{"idle since", timeText(i.GetSince())}, [2]string{"idle", waitsText(i)})
	}
	for _, w := range h.GetWaitingForWorker() {
		out = append(out, [2]string{"waiting for a worker", waitingText(h, w)})
	}
	if a := h.GetAttributes(); len(a.GetFields()) > 0 {
		out = append(out, [2]string{"attributes", jsonText(a)})
	}
	if h.GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		out = append(out, [2]string{"result", jsonText(h.GetResult())})
	}
	if h.GetError() != "" {
		out = append(out, [2]string{"error", h.GetError()})
	}
	// One child per line; the key is left empty after the first.
	for i, c := range h.GetChildren() {
		key := ""
		if i == 0 {
			key = fmt.Sprintf("children (%d)", len(h.GetChildren()))
		}
		out = append(out, [2]string{key, c})
	}
	return append(out, [2]string{"last seq", fmt.Sprint(h.GetLastSeq())})
}

// waitingText is a run waiting for a worker, in get's output: "step
// review attempt 1 since ..., for a worker serving expense@v1".
func waitingText(h *wfdv1.Handler, w *wfdv1.RunWaitingForWorker) string {
	s := fmt.Sprintf("step %s attempt %d since %s", w.GetStep(), w.GetAttempt(), timeText(w.GetSince()))
	if v := w.GetWorkflowVersion(); v != "" {
		s += ", for a worker serving " + h.GetWorkflow() + "@" + v
	}
	if w.GetNoneConnected() {
		s += " (none is connected)"
	}
	return s
}

// waitsText says what an idle handler waits for: "waits for approval
// (step decide)", "asks ada: "Approve expense" (task T, step review)",
// "waits for key payment:A1 (step s)", "waits for 3 children (step s)",
// "sleeps until ... (step s)", "accepts answer".
func waitsText(i *wfdv1.IdleInfo) string {
	if i == nil {
		return ""
	}
	var parts []string
	for _, w := range i.GetWaiters() {
		var s string
		notes := []string{"step " + w.GetStep()}
		switch {
		case w.GetTask() != nil:
			t := w.GetTask()
			s = fmt.Sprintf("asks %s: %q", assigneeText(t.GetAssignee()), t.GetTitle())
			notes = append([]string{"task " + t.GetTaskId()}, notes...)
		case w.GetKey() != "":
			s = "waits for key " + w.GetKey()
		case len(w.GetChildren()) > 0:
			s = fmt.Sprintf("waits for %d %s", len(w.GetChildren()), plural(len(w.GetChildren()), "child", "children"))
		case w.GetEventType() == "":
			s = "sleeps"
		default:
			s = "waits for " + w.GetEventType()
			if len(w.GetMatch().GetFields()) > 0 {
				s += " matching " + jsonText(w.GetMatch())
			}
		}
		if w.GetDeadline() != nil {
			s += " until " + timeText(w.GetDeadline())
		}
		parts = append(parts, s+" ("+strings.Join(notes, ", ")+")")
	}
	if ext := i.GetExternalEventTypes(); len(ext) > 0 {
		parts = append(parts, "accepts "+strings.Join(ext, ", "))
	}
	return strings.Join(parts, "; ")
}

// recordLine is one stream record for people: "#3 step decide ended
// (waiting)", "#4 idle: waits for approval (step decide)".
func recordLine(r *wfdv1.Record) string {
	prefix := fmt.Sprintf("#%d ", r.GetSeq())
	switch k := r.GetKind().(type) {
	case *wfdv1.Record_StepStateChanged:
		return prefix + stepText(k.StepStateChanged)
	case *wfdv1.Record_EventWritten:
		return prefix + "event " + k.EventWritten.GetType() + " " + jsonText(k.EventWritten.GetData())
	case *wfdv1.Record_IdleChanged:
		if !k.IdleChanged.GetIdle() {
			return prefix + "busy"
		}
		return prefix + "idle: " + waitsText(k.IdleChanged.GetInfo())
	case *wfdv1.Record_HandlerFinished:
		f := k.HandlerFinished
		if f.GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
			return prefix + "completed " + jsonText(f.GetResult())
		}
		return prefix + statusName(f.GetStatus()) + ": " + f.GetError()
	case *wfdv1.Record_HandlerReleased:
		return prefix + "released"
	case *wfdv1.Record_HandlerRestored:
		return prefix + "restored"
	case *wfdv1.Record_HandlerAdmitted:
		return prefix + "admitted: got a slot of its concurrency key"
	case *wfdv1.Record_TaskChanged:
		return prefix + taskChangeText(k.TaskChanged)
	case *wfdv1.Record_MemoSet:
		return prefix + "memo of step " + k.MemoSet.GetStep() + ": " + k.MemoSet.GetKey() + " = " + valueText(k.MemoSet.GetValue())
	case *wfdv1.Record_HandlerUpgraded:
		u := k.HandlerUpgraded
		return prefix + "upgraded from " + orDash(u.GetFromVersion()) + " to " + u.GetToVersion()
	case *wfdv1.Record_RunWaitingForWorker:
		w := k.RunWaitingForWorker
		serves := "the workflow"
		if w.GetWorkflowVersion() != "" {
			serves = "version " + w.GetWorkflowVersion()
		}
		switch {
		case w.GetLostWorker() != "":
			return prefix + fmt.Sprintf("step %s (attempt %d): worker %s was lost mid-run; the run is dispatched again", w.GetStep(), w.GetAttempt(), w.GetLostWorker())
		case w.GetWaiting() && w.GetNoneConnected():
			return prefix + fmt.Sprintf("step %s waits for a worker (attempt %d): no worker that serves %s is connected", w.GetStep(), w.GetAttempt(), serves)
		case w.GetWaiting():
			return prefix + fmt.Sprintf("step %s waits for a worker (attempt %d): every worker that serves %s is busy", w.GetStep(), w.GetAttempt(), serves)
		}
		return prefix + fmt.Sprintf("step %s taken by a worker (attempt %d)", w.GetStep(), w.GetAttempt())
	}
	return prefix + "unknown record"
}

func stepText(s *wfdv1.StepStateChanged) string {
	var notes []string
	if s.GetRunning() {
		notes = append(notes, "input "+s.GetInputEventType())
	}
	if s.GetWorker() > 0 {
		notes = append(notes, fmt.Sprintf("worker %d", s.GetWorker()))
	}
	if s.GetAttempt() > 1 {
		notes = append(notes, fmt.Sprintf("attempt %d", s.GetAttempt()))
	}
	verb := "ended"
	switch {
	case s.GetRunning():
		verb = "started"
	case s.GetError() != "":
		verb = "failed"
	case s.GetWaiting():
		notes = append(notes, "waiting")
	case len(s.GetEmittedEventTypes()) > 0:
		notes = append(notes, "emitted "+strings.Join(s.GetEmittedEventTypes(), ", "))
	}
	out := "step " + s.GetStep() + " " + verb
	if len(notes) > 0 {
		out += " (" + strings.Join(notes, ", ") + ")"
	}
	if s.GetError() != "" {
		out += ": " + s.GetError()
	}
	return out
}

// jsonText is a Struct as compact JSON with sorted keys.
func jsonText(s *structpb.Struct) string {
	b, err := json.Marshal(s.AsMap())
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}

func timeText(t *timestamppb.Timestamp) string {
	if t == nil {
		return "-"
	}
	return t.AsTime().Local().Format(time.RFC3339)
}

// orDash is s, or "-" for none.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func list(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// assigneeText is who a task is for; "" is anyone.
func assigneeText(a string) string {
	if a == "" {
		return "anyone"
	}
	return a
}

// taskStatusName is a task status without its enum prefix: pending, ...
func taskStatusName(s wfdv1.TaskStatus) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "TASK_STATUS_"))
}

// shortDuration is d in its largest whole unit: 45s, 12m, 3h, 2d.
func shortDuration(d time.Duration) string {
	d = d.Abs()
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// relativeText is t relative to now: "in 5m", "3h ago", "-" for none.
func relativeText(t *timestamppb.Timestamp, now time.Time) string {
	if t == nil {
		return "-"
	}
	d := t.AsTime().Sub(now)
	if d > 0 {
		return "in " + shortDuration(d)
	}
	return shortDuration(d) + " ago"
}

// taskAge is how long ago the task was created.
func taskAge(t *wfdv1.Task, now time.Time) string {
	if t.GetCreatedAt() == nil {
		return "-"
	}
	return shortDuration(now.Sub(t.GetCreatedAt().AsTime()))
}

// taskLine is one task on one line: its id and status, and who completed
// it with what answer.
func taskLine(t *wfdv1.Task) string {
	s := t.GetTaskId() + "  " + taskStatusName(t.GetStatus())
	if r := t.GetCancelReason(); r != "" {
		if t.GetCompletedBy() != "" {
			s += " by " + t.GetCompletedBy()
		}
		return s + "  " + strconv.Quote(r)
	}
	if t.GetStatus() != wfdv1.TaskStatus_TASK_STATUS_COMPLETED {
		if c := t.GetClaimedBy(); c != "" {
			s += "  claimed by " + c
		}
		return s + "  " + assigneeText(t.GetAssignee()) + "  " + t.GetTitle()
	}
	if t.GetCompletedBy() != "" {
		s += " by " + t.GetCompletedBy()
	}
	return s + "  " + jsonText(t.GetAnswer())
}

// taskFields are the lines of task's output.
func taskFields(t *wfdv1.Task) [][2]string {
	out := [][2]string{
		{"task", t.GetTaskId()},
		{"status", taskStatusName(t.GetStatus())},
		{"title", t.GetTitle()},
	}
	if t.GetDescription() != "" {
		out = append(out, [2]string{"description", t.GetDescription()})
	}
	out = append(out,
		[2]string{"assignee", assigneeText(t.GetAssignee())},
		[2]string{"handler", t.GetHandlerId()},
		[2]string{"workflow", t.GetWorkflow()},
		[2]string{"step", t.GetStep()},
		[2]string{"created", timeText(t.GetCreatedAt())},
	)
	if t.GetDeadline() != nil {
		out = append(out, [2]string{"deadline", timeText(t.GetDeadline())})
	}
	if in := t.GetInput(); in != nil {
		out = append(out, [2]string{"input", jsonText(in)})
	}
	if t.GetCompletedAt() != nil {
		out = append(out, [2]string{"completed", timeText(t.GetCompletedAt())})
	}
	if t.GetCompletedBy() != "" {
		out = append(out, [2]string{"completed by", t.GetCompletedBy()})
	}
	if r := t.GetCancelReason(); r != "" {
		out = append(out, [2]string{"cancel reason", r})
	}
	if c := t.GetClaimedBy(); c != "" {
		out = append(out, [2]string{"claimed by", c + " since " + timeText(t.GetClaimedAt())})
	}
	for _, c := range t.GetComments() {
		out = append(out, [2]string{"comment", c.GetBy() + " at " + timeText(c.GetAt()) + ": " + c.GetText()})
	}
	if t.GetAnswer() != nil {
		out = append(out, [2]string{"answer", jsonText(t.GetAnswer())})
	}
	if s := t.GetAnswerSchema(); s != nil {
		if f := schemaFieldsText(s); f != "" {
			out = append(out, [2]string{"answer fields", f})
		}
		out = append(out, [2]string{"answer schema", jsonText(s)})
	}
	return out
}

// schemaFieldsText sums up an object schema's properties for people:
// "approved boolean (required), reason string". Conditions (if/then,
// oneOf, ...) are left to the full schema.
func schemaFieldsText(s *structpb.Struct) string {
	props := s.GetFields()["properties"].GetStructValue().GetFields()
	required := map[string]bool{}
	for _, v := range s.GetFields()["required"].GetListValue().GetValues() {
		required[v.GetStringValue()] = true
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		p := n
		if typ := props[n].GetStructValue().GetFields()["type"]; typ.GetStringValue() != "" {
			p += " " + typ.GetStringValue()
		}
		if required[n] {
			p += " (required)"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// publishedText says where an event went and whom it woke.
func publishedText(key string, r *wfdv1.PublishEventResponse) string {
	return fmt.Sprintf("published %s: seq %d, woke %d %s (event %s)",
		key, r.GetSeq(), r.GetWoken(), plural(int(r.GetWoken()), "handler", "handlers"), r.GetEventId())
}

// statusOrder is the order stats lists handler statuses in; others follow
// by name.
var statusOrder = []string{"running", "completed", "failed", "cancelled"}

// statsFields are the lines of stats' output.
func statsFields(s *wfdv1.GetStatsResponse) [][2]string {
	by := s.GetHandlersByStatus()
	names := slices.Clone(statusOrder)
	var rest []string
	for n := range by {
		if !slices.Contains(statusOrder, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	var counts []string
	for _, n := range append(names, rest...) {
		counts = append(counts, fmt.Sprintf("%s %d", n, by[n]))
	}
	latency := "-"
	if s.GetRehydrationsTotal() > 0 {
		latency = fmt.Sprintf("p50 %v, p99 %v",
			s.GetRehydrateLatencyP50().AsDuration().Round(time.Microsecond), s.GetRehydrateLatencyP99().AsDuration().Round(time.Microsecond))
	}
	return [][2]string{
		{"active", fmt.Sprintf("%d (in memory, %d idle)", s.GetHandlersActive(), s.GetHandlersIdleInMemory())},
		{"released", fmt.Sprint(s.GetHandlersReleased())},
		{"by status", strings.Join(counts, ", ")},
		{"tasks pending", fmt.Sprint(s.GetTasksPending())},
		{"releases", fmt.Sprint(s.GetReleasesTotal())},
		{"rehydrations", fmt.Sprint(s.GetRehydrationsTotal())},
		{"rehydrate latency", latency},
		{"streams", fmt.Sprint(s.GetStreams())},
		{"commits", fmt.Sprintf("%d (%d changes)", s.GetCommitsTotal(), s.GetChangesTotal())},
		{"workers", fmt.Sprint(s.GetWorkersConnected())},
		{"dispatches", dispatchText(s)},
	}
}

// dispatchText sums up the step runs dispatched to workers.
func dispatchText(s *wfdv1.GetStatsResponse) string {
	if s.GetDispatchesTotal() == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%d redispatched; latency p50 %v, p99 %v)", s.GetDispatchesTotal(), s.GetRedispatchesTotal(),
		s.GetDispatchLatencyP50().AsDuration().Round(time.Microsecond), s.GetDispatchLatencyP99().AsDuration().Round(time.Microsecond))
}

// handlerAtFields are the lines of `wfd get HANDLER --at SEQ`.
func handlerAtFields(a *wfdv1.HandlerAt) [][2]string {
	out := [][2]string{
		{"at", fmt.Sprintf("#%d %s", a.GetSeq(), timeText(a.GetTime()))},
		{"status", statusName(a.GetStatus())},
	}
	if v := a.GetWorkflowVersion(); v != "" {
		out = append(out, [2]string{"version", v})
	}
	if a.GetReleased() {
		out = append(out, [2]string{"residency", "released"})
	}
	if i := a.GetIdle(); i != nil {
		out = append(out, [2]string{"idle since", timeText(i.GetSince())}, [2]string{"idle", waitsText(i)})
	}
	for i, s := range a.GetSteps() {
		key := ""
		if i == 0 {
			key = "steps"
		}
		line := fmt.Sprintf("%s: %d ended", s.GetStep(), s.GetEnded())
		if s.GetRunning() > 0 {
			line += fmt.Sprintf(", %d running (attempt %d, for %s)", s.GetRunning(), s.GetAttempt(), s.GetInputEventType())
		}
		if s.GetError() != "" {
			line += ", last failed: " + s.GetError()
		}
		out = append(out, [2]string{key, line})
	}
	out = append(out, [2]string{"written", fmt.Sprintf("%d events", a.GetWrittenTotal())})
	for _, m := range a.GetMemos() {
		out = append(out, [2]string{"memo", m.GetStep() + ": " + m.GetKey() + " = " + valueText(m.GetValue())})
	}
	for _, t := range a.GetTasks() {
		out = append(out, [2]string{"task", taskAtText(t)})
	}
	if a.GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		out = append(out, [2]string{"result", jsonText(a.GetResult())})
	}
	if a.GetError() != "" {
		out = append(out, [2]string{"error", a.GetError()})
	}
	return out
}

// taskChangeText says what happened to a task: "task "Approve expense"
// (ada) asked", "... cancelled by bob: trip called off".
func taskChangeText(t *wfdv1.TaskChanged) string {
	s := fmt.Sprintf("task %q", t.GetTitle())
	if t.GetAssignee() != "" {
		s += " (" + t.GetAssignee() + ")"
	}
	s += " " + strings.ToLower(strings.TrimPrefix(t.GetChange().String(), "TASK_CHANGE_"))
	if t.GetBy() != "" {
		s += " by " + t.GetBy()
	}
	if t.GetTo() != "" {
		s += " to " + t.GetTo()
	}
	if t.GetReason() != "" {
		s += ": " + t.GetReason()
	}
	if t.GetText() != "" {
		s += ": " + strconv.Quote(t.GetText())
	}
	return s
}

// taskAtText is a task as a look back shows it: "task-1 "Approve
// expense" (ada): answered by ada, 1 comment, answer {...}".
func taskAtText(t *wfdv1.TaskAt) string {
	s := fmt.Sprintf("%s %q (%s): %s", t.GetTaskId(), t.GetTitle(), assigneeText(t.GetAssignee()),
		strings.ToLower(strings.TrimPrefix(t.GetChange().String(), "TASK_CHANGE_")))
	if t.GetBy() != "" {
		s += " by " + t.GetBy()
	}
	if c := t.GetClaimedBy(); c != "" && t.GetChange() != wfdv1.TaskChange_TASK_CHANGE_CLAIMED {
		s += ", held by " + c
	}
	if n := t.GetComments(); n > 0 {
		s += fmt.Sprintf(", %d comments", n)
	}
	if a := t.GetAnswer(); a != nil {
		s += ", answer " + jsonText(a)
	}
	return s
}

// valueText is a Value as compact JSON.
func valueText(v *structpb.Value) string {
	b, err := protojson.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}
