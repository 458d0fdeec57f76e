package rpc

import (
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"

	"github.com/wfd-dev/wfd/internal/payload"
)

// Limits on request fields.
const (
	maxHandlerIDLen = 128
	maxNameLen      = 256
	maxPageSize     = 1000
	// maxStartEvents bounds RunWorkflowRequest.events.
	maxStartEvents = 64
)

// checkHandlerID accepts [A-Za-z0-9._:-]{1,128}.
func checkHandlerID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: handler_id is required", apierr.ErrInvalid)
	}
	if len(id) > maxHandlerIDLen {
		return fmt.Errorf("%w: handler_id is longer than %d characters", apierr.ErrInvalid, maxHandlerIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return fmt.Errorf("%w: handler_id %q: character %q not allowed (use A-Z a-z 0-9 . _ : -)", apierr.ErrInvalid, id, c)
		}
	}
	return nil
}

// checkName accepts a non-empty printable UTF-8 name of bounded length.
func checkName(field, s string) error {
	if s == "" {
		return fmt.Errorf("%w: %s is required", apierr.ErrInvalid, field)
	}
	if len(s) > maxNameLen {
		return fmt.Errorf("%w: %s is longer than %d bytes", apierr.ErrInvalid, field, maxNameLen)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s is not valid UTF-8", apierr.ErrInvalid, field)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: %s %q contains a control character", apierr.ErrInvalid, field, s)
		}
	}
	return nil
}

// payloadLimits are the engine's payload limits, which the edge applies to
// what clients send, so that a payload the server takes is one the engine
// takes too.
func (s *Service) payloadLimits() payload.Limits {
	l := s.engine.Limits()
	return payload.Limits{MaxDepth: l.MaxPayloadDepth, MaxBytes: l.MaxPayloadBytes}
}

// checkPayload refuses a payload JSON cannot hold (NaN, ±Infinity, a value
// with no kind), or one past the limits, naming the value:
// "input.items[3].x: NaN is not allowed".
func checkPayload(lim payload.Limits, name string, s *structpb.Struct) error {
	if err := payload.Check(lim, name, s); err != nil {
		return fmt.Errorf("%w: %w", apierr.ErrInvalid, err)
	}
	return nil
}

func validateRun(r *wfdv1.RunWorkflowRequest, lim payload.Limits) error {
	if err := checkName("workflow", r.GetWorkflow()); err != nil {
		return err
	}
	if r.GetHandlerId() != "" {
		if err := checkHandlerID(r.GetHandlerId()); err != nil {
			return err
		}
	}
	if r.GetVersion() != "" {
		if err := checkName("version", r.GetVersion()); err != nil {
			return err
		}
	}
	if _, err := checkWait("wait", r.GetWait()); err != nil {
		return err
	}
	if n := len(r.GetEvents()); n > maxStartEvents {
		return fmt.Errorf("%w: events has %d entries, at most %d", apierr.ErrInvalid, n, maxStartEvents)
	}
	for i, ev := range r.GetEvents() {
		if ev == nil {
			return fmt.Errorf("%w: events[%d] is empty", apierr.ErrInvalid, i)
		}
		if err := checkName(fmt.Sprintf("events[%d].type", i), ev.GetType()); err != nil {
			return err
		}
		if err := checkPayload(lim, fmt.Sprintf("events[%d].data", i), ev.GetData()); err != nil {
			return err
		}
	}
	return checkPayload(lim, "input", r.GetInput())
}

func validateSend(r *wfdv1.SendEventRequest, lim payload.Limits) error {
	if err := checkHandlerID(r.GetHandlerId()); err != nil {
		return err
	}
	if r.GetEvent() == nil {
		return fmt.Errorf("%w: event is required", apierr.ErrInvalid)
	}
	if err := checkName("event.type", r.GetEvent().GetType()); err != nil {
		return err
	}
	if k := r.GetIdempotencyKey(); k != "" {
		if len(k) > maxHandlerIDLen {
			return fmt.Errorf("%w: idempotency_key is longer than %d characters", apierr.ErrInvalid, maxHandlerIDLen)
		}
		if err := checkName("idempotency_key", k); err != nil {
			return err
		}
	}
	if _, err := checkWait("wait", r.GetWait()); err != nil {
		return err
	}
	if st := r.GetStart(); st != nil {
		if err := checkName("start.workflow", st.GetWorkflow()); err != nil {
			return err
		}
		if st.GetVersion() != "" {
			if err := checkName("start.version", st.GetVersion()); err != nil {
				return err
			}
		}
		if err := checkPayload(lim, "start.input", st.GetInput()); err != nil {
			return err
		}
	}
	return checkPayload(lim, "event.data", r.GetEvent().GetData())
}

func validateList(r *wfdv1.ListHandlersRequest) error {
	if r.GetWorkflow() != "" {
		if err := checkName("workflow", r.GetWorkflow()); err != nil {
			return err
		}
	}
	if r.GetWorkflowVersion() != "" {
		if r.GetWorkflow() == "" {
			return fmt.Errorf("%w: workflow_version needs workflow", apierr.ErrInvalid)
		}
		if err := checkName("workflow_version", r.GetWorkflowVersion()); err != nil {
			return err
		}
	}
	for _, s := range r.GetStatuses() {
		if _, ok := wfdv1.HandlerStatus_name[int32(s)]; !ok || s == wfdv1.HandlerStatus_HANDLER_STATUS_UNSPECIFIED {
			return fmt.Errorf("%w: statuses: unknown status %d", apierr.ErrInvalid, s)
		}
	}
	if _, ok := wfdv1.Residency_name[int32(r.GetResidency())]; !ok {
		return fmt.Errorf("%w: residency: unknown value %d", apierr.ErrInvalid, r.GetResidency())
	}
	if r.GetPageSize() < 0 || r.GetPageSize() > maxPageSize {
		return fmt.Errorf("%w: page_size %d is outside 0..%d", apierr.ErrInvalid, r.GetPageSize(), maxPageSize)
	}
	if d := r.GetIdleFor(); d != nil {
		if err := d.CheckValid(); err != nil {
			return fmt.Errorf("%w: idle_for: %w", apierr.ErrInvalid, err)
		}
		if d.AsDuration() < 0 {
			return fmt.Errorf("%w: idle_for is negative", apierr.ErrInvalid)
		}
	}
	return nil
}

// checkTaskID accepts "<handler id>:<waiter id>"-shaped ids.
func checkTaskID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: task_id is required", apierr.ErrInvalid)
	}
	if len(id) > 2*maxNameLen {
		return fmt.Errorf("%w: task_id is longer than %d bytes", apierr.ErrInvalid, 2*maxNameLen)
	}
	return checkName("task_id", id)
}

func validateListTasks(r *wfdv1.ListTasksRequest) error {
	if _, ok := wfdv1.TaskClaim_name[int32(r.GetClaim())]; !ok {
		return fmt.Errorf("%w: claim: unknown value %d", apierr.ErrInvalid, r.GetClaim())
	}
	for _, s := range r.GetStatuses() {
		if _, ok := wfdv1.TaskStatus_name[int32(s)]; !ok || s == wfdv1.TaskStatus_TASK_STATUS_UNSPECIFIED {
			return fmt.Errorf("%w: statuses: unknown task status %d", apierr.ErrInvalid, s)
		}
	}
	if r.GetPageSize() < 0 || r.GetPageSize() > maxPageSize {
		return fmt.Errorf("%w: page_size %d is outside 0..%d", apierr.ErrInvalid, r.GetPageSize(), maxPageSize)
	}
	if r.GetMine() && r.GetAssignee() != "" {
		return fmt.Errorf("%w: mine and assignee together", apierr.ErrInvalid)
	}
	for _, f := range []struct{ name, v string }{{"assignee", r.GetAssignee()}, {"workflow", r.GetWorkflow()}} {
		if f.v != "" {
			if err := checkName(f.name, f.v); err != nil {
				return err
			}
		}
	}
	if r.GetHandlerId() != "" {
		return checkHandlerID(r.GetHandlerId())
	}
	return nil
}

func validateCompleteTask(r *wfdv1.CompleteTaskRequest, lim payload.Limits) error {
	if err := checkTaskID(r.GetTaskId()); err != nil {
		return err
	}
	if b := r.GetCompletedBy(); b != "" {
		if err := checkName("completed_by", b); err != nil {
			return err
		}
	}
	return checkPayload(lim, "answer", r.GetAnswer())
}

func validateCancelTask(r *wfdv1.CancelTaskRequest) error {
	if err := checkTaskID(r.GetTaskId()); err != nil {
		return err
	}
	if b := r.GetCancelledBy(); b != "" {
		if err := checkName("cancelled_by", b); err != nil {
			return err
		}
	}
	if n := len(r.GetReason()); n == 0 || n > maxCancelReason || !utf8.ValidString(r.GetReason()) {
		return fmt.Errorf("%w: reason: want 1 to %d bytes of UTF-8, got %d", apierr.ErrInvalid, maxCancelReason, n)
	}
	return nil
}

// maxCancelReason bounds CancelTaskRequest.reason.
const maxCancelReason = 4096

func validatePublish(r *wfdv1.PublishEventRequest, lim payload.Limits) error {
	if err := checkName("key", r.GetKey()); err != nil {
		return err
	}
	if r.GetHandlerId() != "" {
		if err := checkHandlerID(r.GetHandlerId()); err != nil {
			return err
		}
	}
	if r.GetEventId() != "" {
		if err := checkHandlerID(r.GetEventId()); err != nil {
			return err
		}
	}
	return checkPayload(lim, "data", r.GetData())
}
