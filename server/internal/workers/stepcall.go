package workers

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/flow"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"

	"github.com/wfd-dev/wfd/engine"
)

// errNotMemoized makes a once_get's Once call record nothing.
var errNotMemoized = errors.New("not memoized")

// execute runs one StepCall operation on the run's real StepContext, so
// a remote step's waits, memos, children and limits are the engine's own
// (docs/ARCHITECTURE.md "Step workers"). Parking, timing out and
// the operation's own error are answers (waiting, timed_out, error), not
// call failures; a malformed request is InvalidArgument.
func execute(_ context.Context, sc *engine.StepContext, req *wfdv1.StepCallRequest) (*wfdv1.StepCallResponse, error) {
	resp := &wfdv1.StepCallResponse{}
	var err error
	switch op := req.GetOperation().(type) {
	case *wfdv1.StepCallRequest_WaitFor:
		var ev engine.Event
		ev, err = sc.WaitFor(op.WaitFor.GetType(), engine.WaitOptions{Match: op.WaitFor.GetMatch(), Timeout: op.WaitFor.GetTimeout().AsDuration()})
		resp.Event = eventToProto(ev, err)
	case *wfdv1.StepCallRequest_Sleep:
		err = sc.Sleep(op.Sleep.AsDuration())
	case *wfdv1.StepCallRequest_Get:
		resp.Value, resp.Found = sc.Get(op.Get)
	case *wfdv1.StepCallRequest_Set:
		err = sc.Set(op.Set.GetKey(), op.Set.GetValue())
	case *wfdv1.StepCallRequest_SetAttributes:
		err = sc.SetAttributes(op.SetAttributes)
	case *wfdv1.StepCallRequest_Collect:
		e := op.Collect.GetEvent()
		var evs []engine.Event
		evs, err = sc.Collect(engine.Event{ID: e.GetId(), Type: e.GetType(), Data: e.GetData()}, op.Collect.GetTypes()...)
		for _, ev := range evs {
			resp.Events = append(resp.Events, eventToProto(ev, nil))
		}
	case *wfdv1.StepCallRequest_OnceGet:
		resp.Value, err = sc.Once(op.OnceGet, func() (*structpb.Value, error) { return nil, errNotMemoized })
		resp.Found = err == nil
		if errors.Is(err, errNotMemoized) {
			err = nil
		}
	case *wfdv1.StepCallRequest_OncePut:
		v := op.OncePut.GetValue()
		resp.Value, err = sc.Once(op.OncePut.GetKey(), func() (*structpb.Value, error) { return v, nil })
		resp.Found = err == nil
	case *wfdv1.StepCallRequest_AskHuman:
		resp.Event, err = askHuman(sc, op.AskHuman)
	case *wfdv1.StepCallRequest_WaitForKey:
		resp.Event, err = waitForKey(sc, op.WaitForKey)
	case *wfdv1.StepCallRequest_StartChild:
		resp.ChildId, err = sc.StartChild(op.StartChild.GetWorkflow(), op.StartChild.GetInput())
	case *wfdv1.StepCallRequest_WaitForChildren:
		var c engine.Children
		c, err = sc.WaitForChildren(op.WaitForChildren.GetHandlerIds(), op.WaitForChildren.GetTimeout().AsDuration())
		resp.Children = childrenToProto(c)
	default:
		return nil, fmt.Errorf("%w: step call with no operation", apierr.ErrInvalid)
	}
	switch {
	case err == nil:
	case errors.Is(err, engine.ErrWaiting):
		resp.Waiting = true
	case errors.Is(err, engine.ErrTimeout):
		resp.TimedOut = true
		resp.Error = err.Error()
	default:
		resp.Error = err.Error()
	}
	return resp, nil
}

// eventToProto is ev on the wire; nil if err says there is none.
func eventToProto(ev engine.Event, err error) *wfdv1.Event {
	if err != nil {
		return nil
	}
	return &wfdv1.Event{Id: ev.ID, Type: ev.Type, Data: ev.Data}
}

// childrenToProto is where a set of children stands, on the wire.
func childrenToProto(c engine.Children) *wfdv1.ChildrenState {
	p := &wfdv1.ChildrenState{Completed: c.Completed, Failed: c.Failed, Pending: c.Pending}
	if len(c.Results) > 0 {
		p.Results = map[string]*wfdv1.ChildResult{}
		for id, r := range c.Results {
			p.Results[id] = &wfdv1.ChildResult{Status: wfdv1.HandlerStatus(r.Status), Result: r.Result, Error: r.Error}
		}
	}
	return p
}

// askHuman is a remote step's AskHuman: the answer (or the cancellation,
// with its reason) comes back as the task event it arrived as.
func askHuman(sc *engine.StepContext, a *wfdv1.AskHuman) (*wfdv1.Event, error) {
	var esc *engine.Escalation
	if e := a.GetEscalation(); e != nil {
		esc = &engine.Escalation{After: e.GetAfter().AsDuration(), Reassign: e.GetReassign(), Notify: e.GetNotify()}
	}
	ans, err := sc.AskHuman(engine.Task{Escalation: esc, Title: a.GetTitle(), Description: a.GetDescription(), Schema: a.GetAnswerSchema(),
		Assignee: a.GetAssignee(), Deadline: a.GetDeadline().AsDuration(), Input: a.GetInput(), InputSchema: a.GetInputSchema()})
	if err != nil {
		return nil, err
	}
	return &wfdv1.Event{Type: engine.TaskEvent, Data: flow.TaskEventData("", ans)}, nil
}

// waitForKey is a remote step's WaitForKey: the publication comes back as
// an event with its id.
func waitForKey(sc *engine.StepContext, k *wfdv1.WaitForKey) (*wfdv1.Event, error) {
	opts := engine.KeyOptions{Timeout: k.GetTimeout().AsDuration()}
	if k.GetSince() != nil {
		opts.Since = k.GetSince().AsTime()
	}
	p, err := sc.WaitForKey(k.GetKey(), opts)
	if err != nil {
		return nil, err
	}
	ev := engine.PublishedEvent(p)
	ev.ID = p.ID
	return eventToProto(ev, nil), nil
}
