package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1grpc"

	"github.com/wfd-dev/wfd/flow"
)

// Context is what a step uses to talk to its handler (flow.Context):
// *flow.StepContext, which the engine passes to a step in process,
// satisfies it, so a step written against Context runs in process (see
// InProcess) and in a worker alike.
type Context = flow.Context

// remoteContext is a Context whose operations are StepCalls to the server,
// which executes them on the run's real StepContext. Sends and writes are
// kept and travel with FinishRun. Like a StepContext it is used from the
// run's goroutine only.
type remoteContext struct {
	ctx      context.Context
	svc      wfdv1grpc.WorkerServiceClient
	workerID string
	d        *wfdv1.Dispatch
	// seq numbers the run's StepCalls, so a retried call is answered
	// without being executed again.
	seq     uint64
	emits   map[string]bool
	sent    []*wfdv1.Event
	written []*wfdv1.Event
	// lost is the error of a call that failed: the run is no longer
	// this worker's (or the server is gone) and is abandoned, with no
	// FinishRun.
	lost error
	// fault is an operation the server refused: the run fails with it
	// whatever the step returns, as in process.
	fault error
	// refused is a call too large to be taken (ResourceExhausted): the
	// run fails with it, and makes no more calls.
	refused error

	// Local waits (Dispatch.local_waits): pos is the position of the
	// run's next wait, resolved the answers the dispatch carried, pending
	// the waits answered here since the last call, sent with the next
	// StepCall or FinishRun.
	local    bool
	pos      uint32
	resolved map[uint32]*wfdv1.ResolvedWait
	pending  []*wfdv1.LocalWait
}

func newRemoteContext(ctx context.Context, svc wfdv1grpc.WorkerServiceClient, workerID string, d *wfdv1.Dispatch, emits map[string]bool) *remoteContext {
	c := &remoteContext{ctx: ctx, svc: svc, workerID: workerID, d: d, emits: emits, local: d.GetLocalWaits()}
	if len(d.GetResolved()) > 0 {
		c.resolved = make(map[uint32]*wfdv1.ResolvedWait, len(d.GetResolved()))
		for _, r := range d.GetResolved() {
			c.resolved[r.GetPosition()] = r
		}
	}
	return c
}

// localWait answers a WaitFor or Sleep here when the dispatch allows it:
// from the dispatch's resolved waits, or by parking. ok is false when the
// wait must be a StepCall.
func (c *remoteContext) localWait(lw *wfdv1.LocalWait) (r *wfdv1.ResolvedWait, ok bool) {
	if !c.local || c.lost != nil || c.refused != nil {
		return nil, false
	}
	lw.Position = c.pos
	c.pos++
	r, lw.Resolved = c.resolved[lw.Position]
	c.pending = append(c.pending, lw)
	return r, true
}

var _ Context = (*remoteContext)(nil)

func (c *remoteContext) HandlerID() string { return c.d.GetHandlerId() }
func (c *remoteContext) Step() string      { return c.d.GetStep() }
func (c *remoteContext) Attempt() int      { return int(c.d.GetAttempt()) }

// Send keeps an event for FinishRun; the step must declare its type.
func (c *remoteContext) Send(typ string, data *structpb.Struct) error {
	if !c.emits[typ] {
		return fmt.Errorf("step %q sends %q: %w", c.Step(), typ, flow.ErrUndeclaredEvent)
	}
	c.sent = append(c.sent, &wfdv1.Event{Type: typ, Data: data})
	return nil
}

// Write keeps a stream record for FinishRun.
func (c *remoteContext) Write(typ string, data *structpb.Struct) {
	c.written = append(c.written, &wfdv1.Event{Type: typ, Data: data})
}

// call makes one StepCall and turns its answer's waiting, timed_out and
// error into the errors a StepContext returns (what names the wait).
func (c *remoteContext) call(req *wfdv1.StepCallRequest, what string) (*wfdv1.StepCallResponse, error) {
	switch {
	case c.lost != nil:
		return nil, c.lost
	case c.refused != nil:
		return nil, c.refused
	}
	c.seq++
	req.RunId, req.WorkerId, req.Seq, req.LocalWaits = c.d.GetRunId(), c.workerID, c.seq, c.pending
	c.pending = nil
	switch req.GetOperation().(type) {
	case *wfdv1.StepCallRequest_WaitFor, *wfdv1.StepCallRequest_Sleep, *wfdv1.StepCallRequest_AskHuman,
		*wfdv1.StepCallRequest_WaitForKey, *wfdv1.StepCallRequest_WaitForChildren:
		c.pos++ // a wait: it takes the next position on the server too
	}
	resp, err := c.svc.StepCall(c.ctx, req, callOptions...)
	switch {
	case tooLarge(err):
		c.refused = fmt.Errorf("step %q: %s", c.Step(), refusal(what, proto.Size(req), err))
		return nil, c.refused
	case err != nil:
		c.lost = fmt.Errorf("worker: step call: %w", err)
		return nil, c.lost
	case resp.GetWaiting():
		return resp, flow.ErrWaiting
	case resp.GetTimedOut():
		return resp, fmt.Errorf("%s: %w", what, flow.ErrTimeout)
	case resp.GetError() != "":
		err := errors.New(resp.GetError())
		if c.fault == nil {
			c.fault = err
		}
		return resp, err
	}
	return resp, nil
}

func (c *remoteContext) WaitFor(typ string, opts flow.WaitOptions) (flow.Event, error) {
	wf := &wfdv1.WaitFor{Type: typ, Match: opts.Match, Timeout: dur(opts.Timeout)}
	what := fmt.Sprintf("waiting for %q", typ)
	if r, ok := c.localWait(&wfdv1.LocalWait{Kind: &wfdv1.LocalWait_WaitFor{WaitFor: wf}}); ok {
		switch {
		case r == nil:
			return flow.Event{}, flow.ErrWaiting
		case r.GetTimedOut():
			return flow.Event{}, fmt.Errorf("%s: %w", what, flow.ErrTimeout)
		}
		return eventFrom(r.GetEvent()), nil
	}
	resp, err := c.call(&wfdv1.StepCallRequest{Operation: &wfdv1.StepCallRequest_WaitFor{WaitFor: wf}}, what)
	if err != nil {
		return flow.Event{}, err
	}
	return eventFrom(resp.GetEvent()), nil
}

func (c *remoteContext) Sleep(d time.Duration) error {
	if r, ok := c.localWait(&wfdv1.LocalWait{Kind: &wfdv1.LocalWait_Sleep{Sleep: durationpb.New(d)}}); ok {
		if r == nil {
			return flow.ErrWaiting
		}
		return nil
	}
	_, err := c.call(&wfdv1.StepCallRequest{Operation: &wfdv1.StepCallRequest_Sleep{Sleep: durationpb.New(d)}}, "sleeping")
	return err
}

func (c *remoteContext) Collect(ev flow.Event, types ...string) ([]flow.Event, error) {
	resp, err := c.call(&wfdv1.StepCallRequest{Operation: &wfdv1.StepCallRequest_Collect{Collect: &wfdv1.Collect{
		Event: &wfdv1.Event{Id: ev.ID, Type: ev.Type, Data: ev.Data}, Types: types}}}, "collecting")
	if err != nil {
		return nil, err
	}
	var out []flow.Event
	for _, e := range resp.GetEvents() {
		out = append(out, eventFrom(e))
	}
	return out, nil
}

func (c *remoteContext) Get(key string) (*structpb.Value, bool) {
	resp, err := c.call(&wfdv1.StepCallRequest{Operation: &wfdv1.StepCallRequest_Get{Get: key}}, "getting")
	if err != nil || !resp.GetFound() {
		return nil, false
	}
	return resp.GetValue(), true
}

func (c *remoteContext) Set(key string, v *structpb.Value) error {
	_, err := c.call(&wfdv1.StepCallRequest{Operation: &wfdv1.StepCallRequest_Set{Set: &wfdv1.SetValue{Key: key, Value: v}}}, "setting")
	return err
}

// SetAttributes sends the update to the server, which checks it against
// the workflow's declarations and keeps it for the run's next change.
func (c *remoteContext) SetAttributes(update *structpb.Struct) error {
	_, err := c.call(&wfdv1.StepCallRequest{Operation: &wfdv1.StepCallRequest_SetAttributes{SetAttributes: update}}, "setting search attributes")
	return err
}

// Once looks the memo up on the server, and stores what fn computes if
// there is none; a worker lost between the two runs fn again, as an
// in-process run that crashes there does.
func (c *remoteContext) Once(key string, fn func() (*structpb.Value, error)) (*structpb.Value, error) {
	resp, err := c.call(&wfdv1.StepCallRequest{Operation: &wfdv1.StepCallRequest_OnceGet{OnceGet: key}}, "Once")
	if err != nil {
		return nil, err
	}
	if resp.GetFound() {
		return resp.GetValue(), nil
	}
	v, err := fn()
	if err != nil {
		return nil, err
	}
	if v == nil {
		v = structpb.NewNullValue()
	}
	resp, err = c.call(&wfdv1.StepCallRequest{Operation: &wfdv1.StepCallRequest_OncePut{OncePut: &wfdv1.SetValue{Key: key, Value: v}}}, "Once")
	if err != nil {
		return nil, err
	}
	return resp.GetValue(), nil
}

func (c *remoteContext) AskHuman(t flow.Task) (flow.TaskAnswer, error) {
	a := &wfdv1.AskHuman{Title: t.Title, Description: t.Description, AnswerSchema: t.Schema, Assignee: t.Assignee, Deadline: dur(t.Deadline),
		Input: t.Input, InputSchema: t.InputSchema}
	if e := t.Escalation; e != nil {
		a.Escalation = &wfdv1.TaskEscalation{After: dur(e.After), Reassign: e.Reassign, Notify: e.Notify}
	}
	resp, err := c.call(&wfdv1.StepCallRequest{Operation: &wfdv1.StepCallRequest_AskHuman{AskHuman: a}},
		fmt.Sprintf("task %q", t.Title))
	if err != nil {
		return flow.TaskAnswer{}, err
	}
	return flow.TaskAnswerOf(resp.GetEvent().GetData()), nil
}

func (c *remoteContext) WaitForKey(key string, opts flow.KeyOptions) (flow.Published, error) {
	k := &wfdv1.WaitForKey{Key: key, Timeout: dur(opts.Timeout)}
	if !opts.Since.IsZero() {
		k.Since = timestamppb.New(opts.Since)
	}
	resp, err := c.call(&wfdv1.StepCallRequest{Operation: &wfdv1.StepCallRequest_WaitForKey{WaitForKey: k}}, fmt.Sprintf("waiting for key %q", key))
	if err != nil {
		return flow.Published{}, err
	}
	f := resp.GetEvent().GetData().GetFields()
	at, _ := time.Parse(time.RFC3339Nano, f["published_at"].GetStringValue())
	return flow.Published{ID: f["event_id"].GetStringValue(), Key: f["key"].GetStringValue(), Data: f["data"].GetStructValue(),
		At: at, HandlerID: f["handler_id"].GetStringValue()}, nil
}

func (c *remoteContext) StartChild(workflow string, input *structpb.Struct) (string, error) {
	resp, err := c.call(&wfdv1.StepCallRequest{Operation: &wfdv1.StepCallRequest_StartChild{StartChild: &wfdv1.StartChild{
		Workflow: workflow, Input: input}}}, "starting a child")
	if err != nil {
		return "", err
	}
	return resp.GetChildId(), nil
}

func (c *remoteContext) WaitForChildren(ids []string, timeout time.Duration) (flow.Children, error) {
	resp, err := c.call(&wfdv1.StepCallRequest{Operation: &wfdv1.StepCallRequest_WaitForChildren{WaitForChildren: &wfdv1.WaitForChildren{
		HandlerIds: ids, Timeout: dur(timeout)}}}, "waiting for children")
	p := resp.GetChildren()
	ch := flow.Children{Completed: p.GetCompleted(), Failed: p.GetFailed(), Pending: p.GetPending(), Results: map[string]flow.ChildResult{}}
	for id, r := range p.GetResults() {
		ch.Results[id] = flow.ChildResult{Status: flow.Status(r.GetStatus()), Result: r.GetResult(), Error: r.GetError()}
	}
	return ch, err
}

func dur(d time.Duration) *durationpb.Duration {
	if d <= 0 {
		return nil
	}
	return durationpb.New(d)
}

func eventFrom(e *wfdv1.Event) flow.Event {
	return flow.Event{ID: e.GetId(), Type: e.GetType(), Data: e.GetData()}
}
