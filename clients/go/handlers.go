package client

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// Workflows returns the workflows the server runs, each with the JSON
// Schema of its input (GetInputSchema) and the event types it takes from
// outside (GetEventTypes): their schemas, and whether a handler takes them
// at any time (GetExternal) or while a step waits for them. Run and Send
// fail with codes.InvalidArgument, naming the failing fields, for an input
// or event data that does not match its schema.
func (c *Client) Workflows(ctx context.Context) ([]*wfdv1.Workflow, error) {
	res, err := c.svc.ListWorkflows(ctx, &wfdv1.ListWorkflowsRequest{})
	if err != nil {
		return nil, err
	}
	return res.GetWorkflows(), nil
}

// RunOption configures Run.
type RunOption func(*wfdv1.RunWorkflowRequest)

// WithHandlerID names the handler (at most 128 of [A-Za-z0-9._:-]). Running
// again with the same id and workflow returns the existing handler; with
// another workflow it fails with codes.AlreadyExists.
func WithHandlerID(id string) RunOption {
	return func(r *wfdv1.RunWorkflowRequest) { r.HandlerId = id }
}

// WithVersion runs that version of the workflow (wfdv1.Workflow.GetVersions
// lists them) rather than the current one.
func WithVersion(version string) RunOption {
	return func(r *wfdv1.RunWorkflowRequest) { r.Version = version }
}

// WithInputStruct sets the input as a Struct, in place of Run's map.
func WithInputStruct(s *structpb.Struct) RunOption {
	return func(r *wfdv1.RunWorkflowRequest) { r.Input = s }
}

// WithEvents delivers events to the new handler after its start event, in
// order, in the commit that creates it: nobody ever sees the handler
// without them (at most 64; [NewEvent] makes one from a map). Each must be
// of a type the workflow accepts from outside, and match its schema
// (codes.InvalidArgument naming it otherwise, and nothing is created). A
// repeated Run with the same id delivers them no second time.
func WithEvents(events ...*wfdv1.Event) RunOption {
	return func(r *wfdv1.RunWorkflowRequest) { r.Events = append(r.Events, events...) }
}

// NewEvent is an event of eventType with data, for [WithEvents].
func NewEvent(eventType string, data map[string]any) (*wfdv1.Event, error) {
	d, err := toStruct("data", data)
	if err != nil {
		return nil, err
	}
	return &wfdv1.Event{Type: eventType, Data: d}, nil
}

// Run starts a handler of workflow with input as its start event's data
// and returns it as the server first recorded it (with [WithWait], as it
// is once it finished or the wait ended).
//
// Without [WithHandlerID] the client makes up a UUIDv7 id, so that a retry
// after a lost answer returns the handler rather than starting another.
func (c *Client) Run(ctx context.Context, workflow string, input map[string]any, opts ...RunOption) (*wfdv1.Handler, error) {
	in, err := toStruct("input", input)
	if err != nil {
		return nil, err
	}
	req := &wfdv1.RunWorkflowRequest{Workflow: workflow, Input: in}
	for _, opt := range opts {
		opt(req)
	}
	if err := defaultID(&req.HandlerId, "handler id"); err != nil {
		return nil, err
	}
	ctx, cancel := c.waitContext(ctx, req.GetWait().AsDuration())
	defer cancel()
	res, err := c.svc.RunWorkflow(ctx, req)
	if err != nil {
		return nil, err
	}
	return res.GetHandler(), nil
}

// Get returns the handler with that id.
func (c *Client) Get(ctx context.Context, id string) (*wfdv1.Handler, error) {
	res, err := c.svc.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id})
	if err != nil {
		return nil, err
	}
	return res.GetHandler(), nil
}

// GetAt returns the handler, and the handler as its stream shows it at
// record seq (folded from its records, not re-executed): its status, what
// it waited for then, its steps' runs and the events written so far.
// Two of them, at two records, say what changed in between. A seq past
// the stream's end is codes.OutOfRange.
func (c *Client) GetAt(ctx context.Context, id string, seq uint64) (*wfdv1.Handler, *wfdv1.HandlerAt, error) {
	res, err := c.svc.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id, AtSeq: seq})
	if err != nil {
		return nil, nil, err
	}
	return res.GetHandler(), res.GetAt(), nil
}

// SendOption configures Send.
type SendOption func(*wfdv1.SendEventRequest)

// WithDataStruct sets the event's data as a Struct, in place of Send's map.
func WithDataStruct(s *structpb.Struct) SendOption {
	return func(r *wfdv1.SendEventRequest) { r.Event.Data = s }
}

// WithIdempotencyKey sets the key that makes a repeated send (by this
// client's retries, or by the caller after an error) a no-op on the
// server. Send makes up a UUIDv7 key when none is given.
func WithIdempotencyKey(key string) SendOption {
	return func(r *wfdv1.SendEventRequest) { r.IdempotencyKey = key }
}

// Send delivers an event of eventType with data to the handler and returns
// the handler once the event is durable. The type must be one the workflow
// accepts from outside or one a waiter of the handler waits for
// (codes.InvalidArgument otherwise); a finished handler is
// codes.FailedPrecondition. A released handler is loaded again. Every call
// carries an idempotency key, so retries deliver the event once.
func (c *Client) Send(ctx context.Context, id, eventType string, data map[string]any, opts ...SendOption) (*wfdv1.Handler, error) {
	d, err := toStruct("data", data)
	if err != nil {
		return nil, err
	}
	req := &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: eventType, Data: d}}
	for _, opt := range opts {
		opt(req)
	}
	if err := defaultID(&req.IdempotencyKey, "idempotency key"); err != nil {
		return nil, err
	}
	ctx, cancel := c.waitContext(ctx, req.GetWait().AsDuration())
	defer cancel()
	res, err := c.svc.SendEvent(ctx, req)
	if err != nil {
		return nil, err
	}
	return res.GetHandler(), nil
}

// WithStartVersion makes [Client.SendOrStart] start that version of the
// workflow rather than the current one, if it starts the handler.
func WithStartVersion(version string) SendOption {
	return func(r *wfdv1.SendEventRequest) {
		if r.Start != nil {
			r.Start.Version = version
		}
	}
}

// WithStartInput sets the input [Client.SendOrStart] starts the handler
// with as a Struct, in place of its map.
func WithStartInput(s *structpb.Struct) SendOption {
	return func(r *wfdv1.SendEventRequest) {
		if r.Start != nil {
			r.Start.Input = s
		}
	}
}

// SendOrStart delivers an event as [Client.Send] does to handler id, and
// if there is no handler with that id yet, starts one of workflow with
// input and the event in the commit that creates it (Temporal's
// signal-with-start): there is no moment at which the handler exists
// without its event. started says whether this call created it. A handler
// that exists but runs another workflow is codes.AlreadyExists; one that
// has finished refuses the event (codes.FailedPrecondition). Calls racing
// for one id create one handler, and each delivers its event once; the
// idempotency key every call carries makes a retry deliver nothing again,
// whether or not its first attempt started the handler.
func (c *Client) SendOrStart(ctx context.Context, id, workflow string, input map[string]any, eventType string, data map[string]any, opts ...SendOption) (h *wfdv1.Handler, started bool, err error) {
	in, err := toStruct("input", input)
	if err != nil {
		return nil, false, err
	}
	d, err := toStruct("data", data)
	if err != nil {
		return nil, false, err
	}
	req := &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: eventType, Data: d}, Start: &wfdv1.StartIfMissing{Workflow: workflow, Input: in}}
	for _, opt := range opts {
		opt(req)
	}
	if err := defaultID(&req.IdempotencyKey, "idempotency key"); err != nil {
		return nil, false, err
	}
	ctx, cancel := c.waitContext(ctx, req.GetWait().AsDuration())
	defer cancel()
	res, err := c.svc.SendEvent(ctx, req)
	if err != nil {
		return nil, false, err
	}
	return res.GetHandler(), res.GetStarted(), nil
}

// Cancel ends a running handler as cancelled and returns it.
func (c *Client) Cancel(ctx context.Context, id string) (*wfdv1.Handler, error) {
	res, err := c.svc.CancelHandler(ctx, &wfdv1.CancelHandlerRequest{HandlerId: id})
	if err != nil {
		return nil, err
	}
	return res.GetHandler(), nil
}

// Release writes an idle handler to the server's store and drops it from
// memory; the next event wakes it. A busy or finished handler is
// codes.FailedPrecondition.
func (c *Client) Release(ctx context.Context, id string) (*wfdv1.Handler, error) {
	res, err := c.svc.ReleaseHandler(ctx, &wfdv1.ReleaseHandlerRequest{HandlerId: id})
	if err != nil {
		return nil, err
	}
	return res.GetHandler(), nil
}

// toStruct converts a map for the wire; nil is an empty Struct.
func toStruct(what string, m map[string]any) (*structpb.Struct, error) {
	if m == nil {
		return &structpb.Struct{}, nil
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "client: %s: %v", what, err)
	}
	return s, nil
}

// Delete removes a finished handler (completed, failed or cancelled) with
// its stream, checkpoint and tasks; events published for it stay in the
// log. A running handler is codes.FailedPrecondition (cancel it first), as
// is a finished child whose parent still runs; an unknown one
// codes.NotFound, which a retried call also gets once the first attempt
// deleted it. The handler's id may be used again afterwards.
func (c *Client) Delete(ctx context.Context, id string) error {
	_, err := c.svc.DeleteHandler(ctx, &wfdv1.DeleteHandlerRequest{HandlerId: id})
	return err
}
