package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/attrs"
	"github.com/wfd-dev/wfd/flow"
)

// Expense asks a person to review an expense report: a human task with an
// answer schema ({"approved": bool, "reason": string}, reason required when
// rejecting) assigned to the input's "approver" (default "finance"), with
// an optional deadline in seconds ("deadline_s"). It completes with the
// decision, or {"expired": true} when the deadline passes first.
//
// Its search attributes say who is asked and, once answered, the
// decision: approver (string) and decision ("approved", "rejected" or
// "expired"), so that `wfd handlers --workflow expense --where 'approver
// = "ada" and status = running'` lists ada's open reviews.
func Expense() flow.Workflow {
	return flow.Workflow{
		Name:        "expense",
		Description: `Asks the input's "approver" to approve an expense (a human task with an answer schema).`,
		InputSchema: jsonSchema(obj(map[string]any{
			"approver":    nameSchema(`who is asked (default "finance")`),
			"deadline_s":  secondsSchema("how long the task stays open, in seconds (default: no deadline)"),
			"escalate_s":  secondsSchema(`after how long unanswered the task escalates, in seconds: it goes to "escalate_to" and an event is published under "` + EscalationKey + `" (default: never)`),
			"escalate_to": nameSchema(`who gets the task when it escalates (default "group:managers")`),
		})),
		CheckInput: func(in *structpb.Struct) error {
			_, deadline, err := parseExpense(in)
			if err != nil {
				return err
			}
			esc, err := parseEscalation(in)
			if err == nil && esc != nil && deadline > 0 && esc.After >= deadline {
				err = fmt.Errorf("escalate_s must be less than deadline_s: the deadline ends the task first")
			}
			return err
		},
		Attributes: attrs.Schema{"approver": attrs.String, "decision": attrs.String},
		Steps: []flow.Step{{
			Name:    "review",
			Accepts: []string{flow.StartEvent},
			Emits:   []string{flow.StopEvent},
			Run:     review,
		}},
	}
}

// ExpenseSchema is the JSON Schema of an expense review's answer.
func ExpenseSchema() *structpb.Struct {
	s, _ := structpb.NewStruct(map[string]any{
		"type":     "object",
		"required": []any{"approved"},
		"properties": map[string]any{
			"approved": map[string]any{"type": "boolean"},
			"reason":   map[string]any{"type": "string"},
		},
		"if":                   map[string]any{"properties": map[string]any{"approved": map[string]any{"const": false}}},
		"then":                 map[string]any{"required": []any{"reason"}},
		"additionalProperties": false,
	})
	return s
}

// EscalationKey is the key an expense review's escalation publishes under.
const EscalationKey = "expenses:escalated"

// parseEscalation reads the escalation (nil: none).
func parseEscalation(in *structpb.Struct) (*flow.Escalation, error) {
	f := in.GetFields()
	after, err := seconds(f, "escalate_s")
	if err != nil || after == 0 {
		return nil, err
	}
	to, ok, err := name(f, "escalate_to")
	if err != nil {
		return nil, err
	}
	if !ok {
		to = "group:managers"
	}
	return &flow.Escalation{After: after, Reassign: to, Notify: EscalationKey}, nil
}

// parseExpense reads the approver (default "finance") and the deadline.
func parseExpense(in *structpb.Struct) (string, time.Duration, error) {
	f := in.GetFields()
	approver, ok, err := name(f, "approver")
	if err != nil {
		return "", 0, err
	}
	if !ok {
		approver = "finance"
	}
	deadline, err := seconds(f, "deadline_s")
	return approver, deadline, err
}

func review(_ context.Context, sc *flow.StepContext, in flow.Event) error {
	approver, deadline, err := parseExpense(in.Data)
	if err != nil {
		return err
	}
	if err := sc.SetAttributes(attributes("approver", approver)); err != nil {
		return err
	}
	esc, err := parseEscalation(in.Data)
	if err != nil {
		return err
	}
	ans, err := sc.AskHuman(flow.Task{
		Escalation:  esc,
		Title:       "Approve expense",
		Description: "Approve or reject this expense report: " + jsonText(in.Data),
		// The report itself, for the person's screen (a table in the console).
		Input:    in.Data,
		Schema:   ExpenseSchema(),
		Assignee: approver,
		Deadline: deadline,
	})
	if errors.Is(err, flow.ErrTimeout) {
		if err := sc.SetAttributes(attributes("decision", "expired")); err != nil {
			return err
		}
		return sc.Send(flow.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"expired": structpb.NewBoolValue(true)}})
	}
	if err != nil {
		return err
	}
	if ans.Cancelled {
		// Nobody will answer (CancelTask): the report is withdrawn.
		if err := sc.SetAttributes(attributes("decision", "cancelled")); err != nil {
			return err
		}
		return sc.Send(flow.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
			"cancelled": structpb.NewBoolValue(true), "reason": structpb.NewStringValue(ans.Reason),
			"by": structpb.NewStringValue(ans.CompletedBy),
		}})
	}
	decision := "rejected"
	if ans.Data.GetFields()["approved"].GetBoolValue() {
		decision = "approved"
	}
	if err := sc.SetAttributes(attributes("decision", decision)); err != nil {
		return err
	}
	return sc.Send(flow.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
		"decision":    structpb.NewStructValue(ans.Data),
		"reviewed_by": structpb.NewStringValue(ans.CompletedBy),
		"expense":     structpb.NewStructValue(in.Data),
	}})
}

func jsonText(s *structpb.Struct) string {
	b, err := protojson.Marshal(s)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// attributes is a search-attribute update of one string attribute.
func attributes(name, value string) *structpb.Struct {
	return &structpb.Struct{Fields: map[string]*structpb.Value{name: structpb.NewStringValue(value)}}
}
