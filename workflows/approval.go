package workflows

import (
	"context"
	"errors"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/attrs"
	"github.com/wfd-dev/wfd/flow"
)

// ApprovalEvent is the event type that answers an approval handler. Its data
// must hold "approved" (bool); "comment" (string) is optional.
const ApprovalEvent = "approval"

// ApprovalEventSchema is the JSON Schema of an ApprovalEvent's data.
func ApprovalEventSchema() []byte {
	return jsonSchema(obj(map[string]any{
		"approved": map[string]any{"type": "boolean", "description": "true approves the request, false rejects it"},
		"comment":  map[string]any{"type": "string"},
	}, "approved"))
}

// Approval asks a person whether to approve its input and completes with
// the decision: {"approved": bool, "comment": string, "request": input}.
// It declares the search attributes requester (string) and priority
// (int), which a start may give.
//
// The step waits inside (StepContext.WaitFor), so the handler is idle until
// the answer arrives. It writes a "question" event to the stream when it
// parks. The workflow declares the "approval" event with its schema, so
// SendEvent refuses an answer without a boolean "approved"
// (INVALID_ARGUMENT); the step checks too, so that it stays correct in a
// definition without the declaration: such an answer gets an
// "invalid_answer" event, and the step waits again. Each park writes one
// event.
func Approval() flow.Workflow {
	return flow.Workflow{
		Name:        "approval",
		Description: `Waits for an "approval" event whose data holds "approved" (bool) and completes with the decision.`,
		InputSchema: anyObject("the request to approve"),
		// Given at start (wfd run approval --attrs '{"requester": "ada"}'),
		// for listing: wfd handlers --workflow approval --where 'requester = "ada"'.
		Attributes: attrs.Schema{"requester": attrs.String, "priority": attrs.Int},
		Events: []flow.EventType{{
			Type:        ApprovalEvent,
			Description: `The decision: {"approved": true|false, "comment": "..."}; the step waits for it.`,
			Schema:      ApprovalEventSchema(),
		}},
		Steps: []flow.Step{{
			Name:    "decide",
			Accepts: []string{flow.StartEvent},
			Emits:   []string{flow.StopEvent},
			Run:     decide,
		}},
	}
}

func decide(_ context.Context, sc *flow.StepContext, in flow.Event) error {
	// Whatever is written happens when the run parks, so that each park
	// writes once: a re-run passes the earlier waits again without writing.
	notice := &flow.Event{Type: "question", Data: &structpb.Struct{Fields: map[string]*structpb.Value{
		"question": structpb.NewStringValue("approve this request?"),
		"request":  structpb.NewStructValue(in.Data),
		"answer":   structpb.NewStringValue(`send an "approval" event with {"approved": true|false, "comment": "..."}`),
	}}}
	for {
		ev, err := sc.WaitFor(ApprovalEvent, flow.WaitOptions{})
		if errors.Is(err, flow.ErrWaiting) {
			sc.Write(notice.Type, notice.Data)
			return err
		}
		if err != nil {
			return err
		}
		approved, ok := ev.Data.GetFields()["approved"].GetKind().(*structpb.Value_BoolValue)
		if !ok {
			notice = &flow.Event{Type: "invalid_answer", Data: &structpb.Struct{Fields: map[string]*structpb.Value{
				"reason": structpb.NewStringValue(`"approved" must be a bool`),
			}}}
			continue
		}
		return sc.Send(flow.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
			"approved": structpb.NewBoolValue(approved.BoolValue),
			"comment":  structpb.NewStringValue(ev.Data.GetFields()["comment"].GetStringValue()),
			"request":  structpb.NewStructValue(in.Data),
		}})
	}
}
