package replica

// Forwarding (replica mode): a call that delivers to a handler live on
// another replica is answered by that replica. The replica that took the
// call runs it as usual; when it is refused with an apierr.Owned (the
// handler's lease is held by another live replica, so nothing was done),
// the forwarder calls the same method on the owner's advertised address
// and answers with the owner's answer. Forwarding, not a queue in the
// database: the owner holds the handler's state in memory, and its answer
// (the handler after a SendEvent, a CompleteTask's field errors) must come
// back to the caller, which a queue could only do through a second channel.
//
// A forwarded call is made in the caller's name (forwarder.credentials: its
// Authorization header, or the identity its client certificate gave,
// signed with the replicas' peer secret), and the owner authenticates and
// authorizes it as usual: replicas share the auth configuration, and the
// addresses come from the database, which every replica trusts as much
// as itself. It is marked with forwardedHeader, and a replica never
// forwards a marked call again: one hop at most, no loops (an owner that
// lost the lease meanwhile answers Unavailable, as without forwarding).
// Forwarding speaks HTTP/2, over TLS when the server does
// (forwarder.newHTTPClient), and continues the caller's trace.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/server/auth"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/observe"

	"github.com/wfd-dev/wfd/persistence"
)

// forwardedHeader marks a forwarded call with the id of the replica that
// forwarded it.
const forwardedHeader = "Wfd-Forwarded"

// forwarder is the interceptor that forwards refused calls to the owner.
// It is inert with TLS on but no Options.PeerTLS.
type forwarder struct {
	// id is this replica's, which marks the calls it forwards.
	id  string
	log *slog.Logger
	// tls says the server speaks TLS; peer configures the connections to
	// other replicas then.
	tls     bool
	peer    func(addr string) (*tls.Config, error)
	auth    *auth.Authenticator
	tracing *observe.Tracing
	opts    []connect.ClientOption
	// unsigned throttles the warning that a caller's identity cannot
	// travel (no peer secret): one line per minute, with a count.
	unsigned *observe.LogThrottle

	mu      sync.Mutex
	hc      *http.Client
	clients map[string]wfdv1connect.WorkflowServiceClient
}

func newForwarder(id string, o Options) (*forwarder, error) {
	f := &forwarder{id: id, log: o.Logger, tls: o.TLS, peer: o.PeerTLS, auth: o.Auth, tracing: o.Tracing,
		clients: map[string]wfdv1connect.WorkflowServiceClient{}, unsigned: observe.NewLogThrottle(time.Minute, o.Now)}
	var err error
	f.opts, err = f.clientOptions()
	return f, err
}

func (f *forwarder) on() bool { return !f.tlsOn() || f.peer != nil }

// client is the Connect client of the replica at addr.
func (f *forwarder) client(addr string) wfdv1connect.WorkflowServiceClient {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hc == nil {
		f.hc = f.newHTTPClient()
	}
	c, ok := f.clients[addr]
	if !ok {
		c = wfdv1connect.NewWorkflowServiceClient(f.hc, f.baseURL(addr), f.opts...)
		f.clients[addr] = c
	}
	return c
}

// close drops the idle connections to other replicas.
func (f *forwarder) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hc != nil {
		f.hc.CloseIdleConnections()
	}
}

func (f *forwarder) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		res, err := next(ctx, req)
		var owned *apierr.Owned
		if err == nil || !f.on() || req.Header().Get(forwardedHeader) != "" ||
			!errors.As(err, &owned) || owned.Address == "" {
			return res, err
		}
		fres, ok, ferr := f.forward(ctx, owned, req)
		if !ok {
			if ferr != nil {
				f.warnUnsigned("call refused naming its owner rather than forwarded", "procedure", req.Spec().Procedure, "handler", owned.Handler,
					"owner", owned.Owner, "err", ferr)
			}
			return res, err // not a method that forwards, or not in the caller's name
		}
		f.log.Debug("call forwarded", "procedure", req.Spec().Procedure, "handler", owned.Handler, "owner", owned.Owner, "err", ferr)
		return fres, ferr
	}
}

func (f *forwarder) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (f *forwarder) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// WrapUnary forwards a call refused for a handler another replica owns
// to it (the forwarder); a single process (nil) forwards nothing.
func (r *Replica) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	if r == nil {
		return next
	}
	return r.fwd.WrapUnary(next)
}

// WrapStreamingClient is next: streams are not forwarded.
func (r *Replica) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler is next: streams are not forwarded.
func (r *Replica) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// forward calls req's method on the replica at addr, in the name of
// req's caller; ok is false when it did not: a method that is not
// forwarded, or (with err saying why) a caller whose identity cannot
// travel.
func (f *forwarder) forward(ctx context.Context, owned *apierr.Owned, req connect.AnyRequest) (res connect.AnyResponse, ok bool, err error) {
	addr := owned.Address
	var call func(context.Context) (connect.AnyResponse, error)
	c := f.client(addr)
	switch m := req.Any().(type) {
	case *wfdv1.RunWorkflowRequest: // to a replica with its workers (the workers' routes)
		call = forwardCall(m, c.RunWorkflow)
	case *wfdv1.SendEventRequest:
		call = forwardCall(m, c.SendEvent)
	case *wfdv1.CompleteTaskRequest:
		call = forwardCall(m, c.CompleteTask)
	case *wfdv1.CancelTaskRequest:
		call = forwardCall(m, c.CancelTask)
	case *wfdv1.ClaimTaskRequest:
		call = forwardCall(m, c.ClaimTask)
	case *wfdv1.UnclaimTaskRequest:
		call = forwardCall(m, c.UnclaimTask)
	case *wfdv1.ReassignTaskRequest:
		call = forwardCall(m, c.ReassignTask)
	case *wfdv1.CommentTaskRequest:
		call = forwardCall(m, c.CommentTask)
	case *wfdv1.CancelHandlerRequest:
		call = forwardCall(m, c.CancelHandler)
	case *wfdv1.ReleaseHandlerRequest:
		call = forwardCall(m, c.ReleaseHandler)
	default:
		return nil, false, nil
	}
	cctx, info := connect.NewClientContext(ctx)
	if err := f.credentials(ctx, req.Header(), info.RequestHeader(), req.Spec().Procedure); err != nil {
		return nil, false, err
	}
	fctx, cancel := ownerDeadline(cctx, owned.Until)
	defer cancel()
	res, err = call(fctx)
	if err != nil {
		return nil, true, ownerError(ctx, err)
	}
	return res, true, nil
}

// forwardCall is the forwarded call of m with the client's method call.
func forwardCall[Req, Res any](m *Req, call func(context.Context, *Req) (*Res, error)) func(context.Context) (connect.AnyResponse, error) {
	return func(ctx context.Context) (connect.AnyResponse, error) {
		res, err := call(ctx, m)
		if err != nil {
			return nil, err
		}
		return connect.NewResponse(res), nil
	}
}

// ownerGrace is how long past the owner's lease expiry (as known when
// the call was refused here) a forwarded call may take: a live owner
// renews its lease and answers in milliseconds.
const ownerGrace = 500 * time.Millisecond

// ownerDeadline is the deadline of a forwarded call: a little before the
// caller's (a fifth of the time left, at most a second), and shortly
// after the owner's lease would expire unrenewed (leaseEnd, if known), so
// that an owner that does not answer in time (paused, overloaded, on the
// far side of a partition) is reported as Unavailable, which the caller
// retries and which reaches the handler's next owner once the lease has
// expired, rather than hanging the caller until its own deadline turns it
// into DeadlineExceeded.
func ownerDeadline(ctx context.Context, leaseEnd time.Time) (context.Context, context.CancelFunc) {
	var end time.Time
	if d, ok := ctx.Deadline(); ok {
		end = d.Add(-min(time.Until(d)/5, time.Second))
	}
	if !leaseEnd.IsZero() && (end.IsZero() || leaseEnd.Add(ownerGrace).Before(end)) {
		end = leaseEnd.Add(ownerGrace)
	}
	if end.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, end)
}

// ownerError is the owner's code, message and details, without its
// protocol headers. An error that did not come from the owner (it could
// not be reached, its connection broke mid-call, which connect-go reports
// as Canceled, or it did not answer by ownerDeadline) is Unavailable
// while the caller (ctx) still waits: the owner may have died or
// stopped, and a retry reaches the replica that takes its handlers over.
func ownerError(ctx context.Context, err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) || !connect.IsWireError(ce) {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return connect.NewError(connect.CodeDeadlineExceeded, ctx.Err())
		case ctx.Err() != nil:
			return connect.NewError(connect.CodeCanceled, ctx.Err())
		}
		return apierr.WithRetryHint(connect.NewError(connect.CodeUnavailable, fmt.Errorf("the owner did not answer: %w", err)))
	}
	e := connect.NewError(ce.Code(), errors.New(ce.Message()))
	for _, d := range ce.Details() {
		e.AddDetail(d)
	}
	return e
}

// Forwarded reports whether the call being handled in ctx was forwarded
// by another replica.
func Forwarded(ctx context.Context) bool {
	info, ok := connect.CallInfoForHandlerContext(ctx)
	return ok && info.RequestHeader().Get(forwardedHeader) != ""
}

// Publication has the owner of a handler deliver publication p to it: a
// PublishEvent of the same event id (the log keeps the first, so nothing
// is published twice) addressed to that handler, made in the name of the
// caller of the PublishEvent being handled in ctx. took reports the
// owner woke it; err is the refusal when it did not forward (off, a
// forwarded call, no address) or the owner's error.
func (r *Replica) Publication(ctx context.Context, owned *apierr.Owned, p *persistence.Published) (took bool, err error) {
	return r.fwd.publication(ctx, owned, p)
}

// publication is Publication.
func (f *forwarder) publication(ctx context.Context, owned *apierr.Owned, p *persistence.Published) (took bool, err error) {
	info, ok := connect.CallInfoForHandlerContext(ctx)
	if !f.on() || !ok || info.RequestHeader().Get(forwardedHeader) != "" || owned.Address == "" {
		return false, owned
	}
	var data structpb.Struct
	if err := proto.Unmarshal(p.Data, &data); err != nil {
		return false, fmt.Errorf("forwarding publication %s: %w", p.ID, err)
	}
	cctx, out := connect.NewClientContext(ctx)
	if err := f.credentials(ctx, info.RequestHeader(), out.RequestHeader(), wfdv1connect.WorkflowServicePublishEventProcedure); err != nil {
		f.warnUnsigned("publication not forwarded", "event", p.ID, "handler", owned.Handler, "owner", owned.Owner, "err", err)
		return false, owned
	}
	res, err := f.client(owned.Address).PublishEvent(cctx, &wfdv1.PublishEventRequest{
		EventId: p.ID, Key: p.Key, Data: &data, HandlerId: owned.Handler,
	})
	if err != nil {
		return false, fmt.Errorf("forwarding publication %s to replica %q: %w", p.ID, owned.Owner, err)
	}
	return res.GetWoken() > 0, nil
}

// UpgradeOn has the owner of a handler upgrade it: req (an
// UpgradeHandlers of that handler alone) made there in the name of the
// caller of the call being handled in ctx. Without forwarding (a single
// process, a forwarded call, no address, a caller whose identity cannot
// travel) it returns owned.
func (r *Replica) UpgradeOn(ctx context.Context, owned *apierr.Owned, req *wfdv1.UpgradeHandlersRequest) (*wfdv1.UpgradeHandlersResponse, error) {
	if r == nil {
		return nil, owned
	}
	f := r.fwd
	info, ok := connect.CallInfoForHandlerContext(ctx)
	if !f.on() || !ok || info.RequestHeader().Get(forwardedHeader) != "" || owned.Address == "" {
		return nil, owned
	}
	cctx, out := connect.NewClientContext(ctx)
	if err := f.credentials(ctx, info.RequestHeader(), out.RequestHeader(), wfdv1connect.WorkflowServiceUpgradeHandlersProcedure); err != nil {
		f.warnUnsigned("upgrade not forwarded", "handler", owned.Handler, "owner", owned.Owner, "err", err)
		return nil, owned
	}
	fctx, cancel := ownerDeadline(cctx, owned.Until)
	defer cancel()
	res, err := f.client(owned.Address).UpgradeHandlers(fctx, req)
	if err != nil {
		return nil, ownerError(ctx, err)
	}
	return res, nil
}

// Forwarded reports whether the call of ctx was forwarded by another
// replica (Forwarded; a method so that the rooms' ports take a Replica).
func (r *Replica) Forwarded(ctx context.Context) bool { return Forwarded(ctx) }
