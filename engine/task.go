package engine

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/flow"
	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"
	"github.com/wfd-dev/wfd/internal/names"
	"github.com/wfd-dev/wfd/internal/schema"

	pl "github.com/wfd-dev/wfd/internal/payload"
)

// TaskEvent is the type of the event that answers a human task. The server
// sends it (after checking the answer against the task's schema); its data
// holds "task_id", "answer" (an object), "completed_by" and "completed_at"
// (RFC 3339).
const TaskEvent = "wfd.task"

// AskHuman carries out flow.StepContext.AskHuman.
func (sc *stepContext) AskHuman(t Task) (TaskAnswer, error) {
	if t.Title == "" {
		return TaskAnswer{}, sc.refuse(errors.New("engine: a task needs a title"))
	}
	err := names.Check("the title", t.Title, names.MaxNameBytes, true)
	if err == nil {
		err = names.Check("the description", t.Description, names.MaxTextBytes, false)
	}
	if err == nil {
		err = names.Check("the assignee", t.Assignee, names.MaxNameBytes, false)
	}
	if err == nil {
		err = pl.Check(sc.x.h.e.lim.payload(), "schema", t.Schema)
	}
	if err == nil {
		err = pl.Check(sc.x.h.e.lim.payload(), "input", t.Input)
	}
	if err == nil {
		err = pl.Check(sc.x.h.e.lim.payload(), "input schema", t.InputSchema)
	}
	if err == nil && t.InputSchema != nil {
		err = checkTaskInput(t.Input, t.InputSchema)
	}
	if err == nil && t.Escalation != nil {
		err = checkEscalation(t.Escalation, t.Deadline)
	}
	if err == nil && t.Schema != nil {
		// A schema that does not compile would refuse every answer: say
		// so now, to the step, rather than to the person answering.
		var raw []byte
		if raw, err = t.Schema.MarshalJSON(); err == nil {
			if _, err = schema.Compile(raw); err != nil {
				err = fmt.Errorf("its answer schema %w", err)
			}
		}
	}
	if err != nil {
		return TaskAnswer{}, sc.refuse(fmt.Errorf("step %q asks task %q: %w", sc.Step(), t.Title, err))
	}
	waitID := sc.nextWaitID()
	t.ID = sc.HandlerID() + ":" + waitID
	match := &structpb.Struct{Fields: map[string]*structpb.Value{"task_id": structpb.NewStringValue(t.ID)}}
	ev, err := sc.await(&waiter{eventType: TaskEvent, match: match, on: &waitOn{task: &t}}, waitID, t.Deadline,
		func() string { return fmt.Sprintf("task %q", t.Title) })
	if err != nil {
		return TaskAnswer{}, err
	}
	return flow.TaskAnswerOf(ev.Data), nil
}

func taskToProto(t *Task, life *TaskLife) *statev1.HumanTask {
	if t == nil {
		return nil
	}
	p := &statev1.HumanTask{TaskId: t.ID, Title: t.Title, Description: t.Description, AnswerSchema: t.Schema, Assignee: t.Assignee,
		Input: t.Input, InputSchema: t.InputSchema}
	if e := t.Escalation; e != nil {
		p.EscalateAfter, p.EscalateTo, p.NotifyKey = int64(e.After), e.Reassign, e.Notify
	}
	lifeToProto(life, p)
	return p
}

func taskFromProto(p *statev1.HumanTask) *Task {
	if p == nil {
		return nil
	}
	t := &Task{ID: p.GetTaskId(), Title: p.GetTitle(), Description: p.GetDescription(), Schema: p.GetAnswerSchema(), Assignee: p.GetAssignee(),
		Input: p.GetInput(), InputSchema: p.GetInputSchema()}
	if p.GetEscalateAfter() > 0 {
		t.Escalation = &Escalation{After: time.Duration(p.GetEscalateAfter()), Reassign: p.GetEscalateTo(), Notify: p.GetNotifyKey()}
	}
	return t
}

// checkTaskInput reports whether input matches its schema (which must
// compile): a task whose input does not match what it says it is would
// show a person something else than its author meant.
func checkTaskInput(input, inputSchema *structpb.Struct) error {
	raw, err := inputSchema.MarshalJSON()
	if err != nil {
		return err
	}
	s, err := schema.Compile(raw)
	if err != nil {
		return fmt.Errorf("its input schema %w", err)
	}
	if err := s.Validate(input); err != nil {
		return fmt.Errorf("its input does not match its input schema: %w", err)
	}
	return nil
}
