package server

// Forwarding (replica mode): a call that delivers to a handler live on
// another replica is answered by that replica. The replica that took the
// call runs it as usual; when it is refused with an ownedError (the
// handler's lease is held by another live replica, so nothing was done),
// the forwarder calls the same method on the owner's advertised address
// and answers with the owner's answer. Forwarding, not a queue in the
// database: the owner holds the handler's state in memory, and its answer
// (the handler after a SendEvent, a CompleteTask's field errors) must come
// back to the caller, which a queue could only do through a second channel.
//
// A forwarded call carries the caller's Authorization header, which the
// owner authenticates as usual: replicas share the auth configuration, and
// the addresses come from the database, which every replica trusts as much
// as itself. It is marked with forwardedHeader, and a replica never
// forwards a marked call again: one hop at most, no loops (an owner that
// lost the lease meanwhile answers Unavailable, as without forwarding).
// Forwarding is plaintext HTTP/2: with TLS on it is off and calls are
// refused naming the owner, as before.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"

	"github.com/wfd-dev/wfd/persistence"
)

// forwardedHeader marks a forwarded call with the id of the replica that
// forwarded it.
const forwardedHeader = "Wfd-Forwarded"

// forwarder is the interceptor that forwards refused calls to the owner.
// It is inert outside replica mode and with TLS on.
type forwarder struct {
	s *Server

	mu      sync.Mutex
	hc      *http.Client
	clients map[string]wfdv1connect.WorkflowServiceClient
}

func newForwarder(s *Server) *forwarder {
	return &forwarder{s: s, clients: map[string]wfdv1connect.WorkflowServiceClient{}}
}

func (f *forwarder) on() bool { return f.s.leases != nil && f.s.opts.TLSConfig == nil }

// client is the Connect client of the replica at addr.
func (f *forwarder) client(addr string) wfdv1connect.WorkflowServiceClient {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hc == nil {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		f.hc = &http.Client{Transport: &http.Transport{Protocols: &p}}
	}
	c, ok := f.clients[addr]
	if !ok {
		c = wfdv1connect.NewWorkflowServiceClient(f.hc, "http://"+addr)
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
		var owned *ownedError
		if err == nil || !f.on() || req.Header().Get(forwardedHeader) != "" ||
			!errors.As(err, &owned) || owned.address == "" {
			return res, err
		}
		fres, ferr := f.forward(ctx, owned.address, req)
		if ferr == nil && fres == nil {
			return res, err // not a method that forwards
		}
		f.s.log.Debug("call forwarded", "procedure", req.Spec().Procedure, "handler", owned.handler, "owner", owned.owner, "err", ferr)
		return fres, ferr
	}
}

func (f *forwarder) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (f *forwarder) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// forward calls req's method on the replica at addr; nil, nil for a
// method that is not forwarded.
func (f *forwarder) forward(ctx context.Context, addr string, req connect.AnyRequest) (connect.AnyResponse, error) {
	c := f.client(addr)
	switch m := req.Any().(type) {
	case *wfdv1.SendEventRequest:
		return forwardCall(ctx, f, req, m, c.SendEvent)
	case *wfdv1.CompleteTaskRequest:
		return forwardCall(ctx, f, req, m, c.CompleteTask)
	case *wfdv1.CancelHandlerRequest:
		return forwardCall(ctx, f, req, m, c.CancelHandler)
	case *wfdv1.ReleaseHandlerRequest:
		return forwardCall(ctx, f, req, m, c.ReleaseHandler)
	}
	return nil, nil
}

func forwardCall[Req, Res any](ctx context.Context, f *forwarder, in connect.AnyRequest, m *Req,
	call func(context.Context, *Req) (*Res, error),
) (connect.AnyResponse, error) {
	ctx, info := connect.NewClientContext(ctx)
	if a := in.Header().Get("Authorization"); a != "" {
		info.RequestHeader().Set("Authorization", a)
	}
	info.RequestHeader().Set(forwardedHeader, f.s.leases.id())
	res, err := call(ctx, m)
	if err != nil {
		return nil, ownerError(err)
	}
	return connect.NewResponse(res), nil
}

// ownerError is the owner's code, message and details, without its
// protocol headers; failing to reach it is Unavailable.
func ownerError(err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return connect.NewError(connect.CodeUnavailable, err)
	}
	e := connect.NewError(ce.Code(), errors.New(ce.Message()))
	for _, d := range ce.Details() {
		e.AddDetail(d)
	}
	return e
}

// forwarded reports whether the call being handled in ctx was forwarded
// by another replica.
func forwarded(ctx context.Context) bool {
	info, ok := connect.CallInfoForHandlerContext(ctx)
	return ok && info.RequestHeader().Get(forwardedHeader) != ""
}

// publication has the owner of a handler deliver publication p to it: a
// PublishEvent of the same event id (the log keeps the first, so nothing
// is published twice) addressed to that handler, made in the name of the
// caller of the PublishEvent being handled in ctx. took reports the
// owner woke it; err is the refusal when it did not forward (off, a
// forwarded call, no address) or the owner's error.
func (f *forwarder) publication(ctx context.Context, owned *ownedError, p *persistence.Published) (took bool, err error) {
	info, ok := connect.CallInfoForHandlerContext(ctx)
	if !f.on() || !ok || info.RequestHeader().Get(forwardedHeader) != "" || owned.address == "" {
		return false, owned
	}
	var data structpb.Struct
	if err := proto.Unmarshal(p.Data, &data); err != nil {
		return false, fmt.Errorf("forwarding publication %s: %w", p.ID, err)
	}
	cctx, out := connect.NewClientContext(ctx)
	if a := info.RequestHeader().Get("Authorization"); a != "" {
		out.RequestHeader().Set("Authorization", a)
	}
	out.RequestHeader().Set(forwardedHeader, f.s.leases.id())
	res, err := f.client(owned.address).PublishEvent(cctx, &wfdv1.PublishEventRequest{
		EventId: p.ID, Key: p.Key, Data: &data, HandlerId: owned.handler,
	})
	if err != nil {
		return false, fmt.Errorf("forwarding publication %s to replica %q: %w", p.ID, owned.owner, err)
	}
	return res.GetWoken() > 0, nil
}
