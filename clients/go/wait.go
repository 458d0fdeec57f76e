package client

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// Wait waits until the handler finishes, or until timeout has passed, and
// returns it then: its status says which (still running when the time ran
// out, or when the server began to shut down). 0 is the server's default
// (60 s); at most 1 hour. Waiting does not load a released handler: Wait
// answers when whatever wakes it (an event, a due timer) brings it to its
// end. An unknown handler is codes.NotFound.
//
// Without a deadline on ctx, the call may take timeout plus the client's
// [WithTimeout] (the default timeout alone would cut it short).
func (c *Client) Wait(ctx context.Context, id string, timeout time.Duration) (*wfdv1.Handler, error) {
	return c.wait(ctx, &wfdv1.WaitHandlerRequest{HandlerId: id}, timeout)
}

// WaitIdle waits as [Client.Wait] does, and also answers once the
// handler is idle (waiting only for outside input: an event, a person's
// answer, a timer) at or after the record afterSeq: ask a question, then
// wait for the next one. Pass the LastSeq of the handler a Send or Run
// returned, so that an idleness from before that event does not count; 0
// answers at once if the handler is idle now. The handler's Idle says
// what it waits for; its status says whether it finished instead.
func (c *Client) WaitIdle(ctx context.Context, id string, afterSeq uint64, timeout time.Duration) (*wfdv1.Handler, error) {
	return c.wait(ctx, &wfdv1.WaitHandlerRequest{HandlerId: id, UntilIdle: true, AfterSeq: afterSeq}, timeout)
}

func (c *Client) wait(ctx context.Context, req *wfdv1.WaitHandlerRequest, timeout time.Duration) (*wfdv1.Handler, error) {
	d := timeout
	if timeout != 0 {
		req.Timeout = durationpb.New(timeout)
	} else {
		d = time.Minute
	}
	ctx, cancel := c.waitContext(ctx, d)
	defer cancel()
	res, err := c.svc.WaitHandler(ctx, req)
	if err != nil {
		return nil, err
	}
	return res.GetHandler(), nil
}

// WithWait makes Run wait up to d (at most 1 hour) for the handler to
// finish, as [Client.Wait] does: Run then returns the handler as it is
// when it finished or d passed.
func WithWait(d time.Duration) RunOption {
	return func(r *wfdv1.RunWorkflowRequest) { r.Wait = durationpb.New(d) }
}

// WithSendWait makes Send wait, once the event is durable, up to d (at
// most 1 hour) for the handler to finish, as [Client.Wait] does.
func WithSendWait(d time.Duration) SendOption {
	return func(r *wfdv1.SendEventRequest) { r.Wait = durationpb.New(d) }
}

// waitContext gives a call that waits up to d on the server room for it:
// without a deadline on ctx the default timeout would end it first.
func (c *Client) waitContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || c.opts.timeout <= 0 || d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d+c.opts.timeout)
}

// Identity says who the caller is to the server: with authentication on
// (GetAuthentication), its subject and roles; without, every caller may do
// everything. Credentials the server refuses are codes.Unauthenticated.
func (c *Client) Identity(ctx context.Context) (*wfdv1.GetIdentityResponse, error) {
	return c.svc.GetIdentity(ctx, &wfdv1.GetIdentityRequest{})
}
