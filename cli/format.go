package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

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
		{"status", statusName(h.GetStatus())},
	}
	if h.GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
		out = append(out, [2]string{"residency", strings.ToLower(strings.TrimPrefix(h.GetResidency().String(), "RESIDENCY_"))})
	}
	out = append(out, [2]string{"created", timeText(h.GetCreatedAt())}, [2]string{"updated", timeText(h.GetUpdatedAt())})
	if h.GetCompletedAt() != nil {
		out = append(out, [2]string{"completed", timeText(h.GetCompletedAt())})
	}
	if i := h.GetIdle(); i != nil {
		out = append(out, [2]string{"idle since", timeText(i.GetSince())}, [2]string{"idle", waitsText(i)})
	}
	if h.GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		out = append(out, [2]string{"result", jsonText(h.GetResult())})
	}
	if h.GetError() != "" {
		out = append(out, [2]string{"error", h.GetError()})
	}
	return append(out, [2]string{"last seq", fmt.Sprint(h.GetLastSeq())})
}

// waitsText says what an idle handler waits for: "waits for approval
// (step decide)", "sleeps until ... (step s)", "accepts answer".
func waitsText(i *wfdv1.IdleInfo) string {
	if i == nil {
		return ""
	}
	var parts []string
	for _, w := range i.GetWaiters() {
		var s string
		if w.GetEventType() == "" {
			s = "sleeps"
		} else {
			s = "waits for " + w.GetEventType()
			if len(w.GetMatch().GetFields()) > 0 {
				s += " matching " + jsonText(w.GetMatch())
			}
		}
		if w.GetDeadline() != nil {
			s += " until " + timeText(w.GetDeadline())
		}
		parts = append(parts, s+" (step "+w.GetStep()+")")
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

func list(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}
