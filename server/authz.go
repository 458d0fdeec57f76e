package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/namespace"
	"github.com/wfd-dev/wfd/server/auth"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// Authentication happens in two halves. The HTTP half (authenticate) sees
// the *http.Request, where the bearer token and the TLS client
// certificate are, and leaves a lazy credential check in the context; the
// Connect half (authorizer, an interceptor) knows the method, runs the
// check and applies the policy, so its errors reach every protocol
// (Connect, gRPC, gRPC-Web) in their own form. Open endpoints (health,
// reflection, probes) never run the check.

type credentialsKey struct{}

// credentials is the request's identity, computed at most once.
type credentials func() (auth.Identity, error)

// authenticate leaves the lazy credential check of a in every request's
// context.
func authenticate(a *auth.Authenticator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		creds := credentials(sync.OnceValues(func() (auth.Identity, error) { return a.Authenticate(r) }))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), credentialsKey{}, creds)))
	})
}

// authorizer admits a call whose caller's roles allow its method
// (auth.Allowed), and gives the handler the identity (auth.FromContext).
type authorizer struct {
	auth  *auth.Authenticator // nil: every call is allowed
	fails *authFailures
	log   *slog.Logger
}

var _ connect.Interceptor = authorizer{}

func (a authorizer) check(ctx context.Context, procedure, peer, ns string) (context.Context, error) {
	if a.auth == nil {
		return ctx, nil
	}
	creds, ok := ctx.Value(credentialsKey{}).(credentials)
	if !ok {
		// Handler was served without its authenticating wrapper.
		return ctx, fmt.Errorf("%w: %w", apierr.ErrUnauthenticated, auth.ErrNoCredentials)
	}
	fails := a.fails
	if wait, blocked := fails.blocked(peer); blocked {
		a.refused("call refused: too many failed authentications", procedure, peer, "retry_in", wait.Round(time.Second))
		return ctx, fmt.Errorf("%w: too many failed authentications from %s; retry in %s", apierr.ErrResourceExhausted, host(peer), wait.Round(time.Second))
	}
	id, err := creds()
	if err != nil {
		if !errors.Is(err, auth.ErrNoCredentials) {
			fails.failed(peer) // credentials that do not verify: a guess, maybe
		}
		a.refused("call refused: unauthenticated", procedure, peer, "err", err)
		return ctx, fmt.Errorf("%w: %w", apierr.ErrUnauthenticated, err)
	}
	if procedure == wfdv1connect.WorkflowServiceListNamespacesProcedure {
		// It answers with the caller's roles in each namespace.
		return auth.NewContext(ctx, id), nil
	}
	// The caller's roles in the call's namespace: the same refusal
	// whether or not the namespace exists (namespaceGate says which,
	// after this, to those who may use it).
	ns = namespace.Of(ns)
	in := id.In(ns)
	if !auth.Allowed(in, procedure) {
		a.refused("call refused: permission denied", procedure, peer, "subject", id.Subject, "roles", id.Roles, "namespace", ns)
		if ns != namespace.Default {
			return ctx, fmt.Errorf("%w: %s may not call %s in namespace %q: it needs one of the roles %v or %s there",
				apierr.ErrPermissionDenied, id.Subject, procedure, ns, auth.RolesFor(procedure), auth.RoleAdmin)
		}
		return ctx, fmt.Errorf("%w: %s (roles %v) may not call %s: it needs one of the roles %v or %s",
			apierr.ErrPermissionDenied, id.Subject, in.Roles, procedure, auth.RolesFor(procedure), auth.RoleAdmin)
	}
	return auth.NewContext(ctx, in), nil
}

// refused logs a refused call at INFO with the client's address, at most
// a line a second (authFailures), saying how many were held back.
func (a authorizer) refused(msg, procedure, peer string, attrs ...any) {
	ok, suppressed := a.fails.log.Allow()
	if !ok {
		return
	}
	a.log.Info(msg, append([]any{"procedure", procedure, "client", peer, "suppressed", suppressed}, attrs...)...)
}

func (a authorizer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		ctx, err := a.check(ctx, req.Spec().Procedure, req.Peer().Addr, req.Header().Get(namespace.Header))
		if err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

func (a authorizer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (a authorizer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		ctx, err := a.check(ctx, conn.Spec().Procedure, conn.Peer().Addr, conn.RequestHeader().Get(namespace.Header))
		if err != nil {
			return err
		}
		return next(ctx, conn)
	}
}
