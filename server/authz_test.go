package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"

	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/server/auth"
)

// roles are the roles of the README's table; the token file gives each a
// token "<role>-token" for the subject "<role>-user".
var roles = []string{"reader", "starter", "sender", "operator", "publisher", "tasks", "worker", "admin"}

// jwtIssuer signs JWTs with a key whose JWKS it writes to a file.
type jwtIssuer struct {
	key  *ecdsa.PrivateKey
	jwks string
}

func newJWTIssuer(t *testing.T) *jwtIssuer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "test", Algorithm: string(jose.ES256), Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return &jwtIssuer{key: k, jwks: p}
}

func (is *jwtIssuer) token(t *testing.T, subject, audience string, expires time.Time, roles ...string) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: is.key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "test"))
	if err != nil {
		t.Fatal(err)
	}
	c := jwt.Claims{Subject: subject, Issuer: "https://idp.test", Audience: jwt.Audience{audience}, Expiry: jwt.NewNumericDate(expires)}
	tok, err := jwt.Signed(s).Claims(c).Claims(map[string]any{"roles": roles}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// startAuthServer starts a server that authenticates with a token file
// (a token per role, and extra entries) and JWTs from is.
func startAuthServer(t *testing.T, is *jwtIssuer, extra string, more ...func(*server.Options)) *testServer {
	t.Helper()
	return startAuthServerAt(t, is, "", extra, more...)
}

// startAuthServerAt is startAuthServer on the store in dir ("": a new one).
func startAuthServerAt(t *testing.T, is *jwtIssuer, dir, extra string, more ...func(*server.Options)) *testServer {
	t.Helper()
	var b strings.Builder
	b.WriteString("tokens:\n")
	for _, r := range roles {
		fmt.Fprintf(&b, "  - {token: %s-token, subject: %s-user, roles: [%s]}\n", r, r, r)
	}
	b.WriteString(extra)
	file := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(context.Background(), auth.Config{TokensFile: file, JWKS: is.jwks, Issuer: "https://idp.test", Audience: "wfd"})
	if err != nil {
		t.Fatal(err)
	}
	return startServer(t, serverConfig{dir: dir, options: func(o *server.Options) {
		o.Auth = a
		for _, f := range more {
			f(o)
		}
	}})
}

// bearer sends token with every call.
func bearer(token string) connect.ClientOption {
	return connect.WithInterceptors(bearerInterceptor(token))
}

type bearerInterceptor string

func (b bearerInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set("Authorization", "Bearer "+string(b))
		return next(ctx, req)
	}
}

func (b bearerInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set("Authorization", "Bearer "+string(b))
		return conn
	}
}

func (b bearerInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// call is a representative call of one method; allowed or not, it fails
// with codes other than the auth ones (NotFound for a missing handler...).
type call struct {
	procedure string
	do        func(ctx context.Context, c wfdv1connect.WorkflowServiceClient, w wfdv1connect.WorkerServiceClient) error
}

var roleCalls = []call{
	{wfdv1connect.WorkflowServiceGetHandlerProcedure, func(ctx context.Context, c wfdv1connect.WorkflowServiceClient, _ wfdv1connect.WorkerServiceClient) error {
		_, err := c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: "nope"})
		return err
	}},
	{wfdv1connect.WorkflowServiceListTasksProcedure, func(ctx context.Context, c wfdv1connect.WorkflowServiceClient, _ wfdv1connect.WorkerServiceClient) error {
		_, err := c.ListTasks(ctx, &wfdv1.ListTasksRequest{})
		return err
	}},
	{wfdv1connect.WorkflowServiceStreamEventsProcedure, func(ctx context.Context, c wfdv1connect.WorkflowServiceClient, _ wfdv1connect.WorkerServiceClient) error {
		s, err := c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: "nope"})
		if err != nil {
			return err
		}
		defer func() { _ = s.Close() }()
		for s.Receive() {
		}
		return s.Err()
	}},
	{wfdv1connect.WorkflowServiceRunWorkflowProcedure, func(ctx context.Context, c wfdv1connect.WorkflowServiceClient, _ wfdv1connect.WorkerServiceClient) error {
		_, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "no-such-workflow"})
		return err
	}},
	{wfdv1connect.WorkflowServiceSendEventProcedure, func(ctx context.Context, c wfdv1connect.WorkflowServiceClient, _ wfdv1connect.WorkerServiceClient) error {
		_, err := c.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: "nope", Event: &wfdv1.Event{Type: "x"}})
		return err
	}},
	{wfdv1connect.WorkflowServiceCancelHandlerProcedure, func(ctx context.Context, c wfdv1connect.WorkflowServiceClient, _ wfdv1connect.WorkerServiceClient) error {
		_, err := c.CancelHandler(ctx, &wfdv1.CancelHandlerRequest{HandlerId: "nope"})
		return err
	}},
	{wfdv1connect.WorkflowServiceGetStatsProcedure, func(ctx context.Context, c wfdv1connect.WorkflowServiceClient, _ wfdv1connect.WorkerServiceClient) error {
		_, err := c.GetStats(ctx, &wfdv1.GetStatsRequest{})
		return err
	}},
	{wfdv1connect.WorkerServiceListWorkersProcedure, func(ctx context.Context, _ wfdv1connect.WorkflowServiceClient, w wfdv1connect.WorkerServiceClient) error {
		_, err := w.ListWorkers(ctx, &wfdv1.ListWorkersRequest{})
		return err
	}},
	{wfdv1connect.WorkflowServicePublishEventProcedure, func(ctx context.Context, c wfdv1connect.WorkflowServiceClient, _ wfdv1connect.WorkerServiceClient) error {
		_, err := c.PublishEvent(ctx, &wfdv1.PublishEventRequest{Key: "authz-test"})
		return err
	}},
	{wfdv1connect.WorkflowServiceCompleteTaskProcedure, func(ctx context.Context, c wfdv1connect.WorkflowServiceClient, _ wfdv1connect.WorkerServiceClient) error {
		_, err := c.CompleteTask(ctx, &wfdv1.CompleteTaskRequest{TaskId: "nope"})
		return err
	}},
	{wfdv1connect.WorkerServiceFinishRunProcedure, func(ctx context.Context, _ wfdv1connect.WorkflowServiceClient, w wfdv1connect.WorkerServiceClient) error {
		_, err := w.FinishRun(ctx, &wfdv1.FinishRunRequest{})
		return err
	}},
	{wfdv1connect.WorkerServiceFinishRunsProcedure, func(ctx context.Context, _ wfdv1connect.WorkflowServiceClient, w wfdv1connect.WorkerServiceClient) error {
		// Allowed, the call succeeds and answers each run: its result's
		// code stands for the call's (an unknown run: FailedPrecondition).
		res, err := w.FinishRuns(ctx, &wfdv1.FinishRunsRequest{Runs: []*wfdv1.FinishRunRequest{{RunId: "nope"}}})
		if err != nil {
			return err
		}
		r := res.GetResults()[0]
		return connect.NewError(connect.Code(r.GetCode()), errors.New(r.GetMessage()))
	}},
}

// TestRolesAllowAndRefuse: every role against a representative method of
// every group, over each protocol: allowed calls get past authorization
// (to NotFound and the like), refused ones are PermissionDenied.
func TestRolesAllowAndRefuse(t *testing.T) {
	ts := startAuthServer(t, newJWTIssuer(t), "")
	for _, p := range protocols {
		for _, role := range roles {
			c := ts.client(append(p.opts, bearer(role+"-token"))...)
			w := wfdv1connect.NewWorkerServiceClient(ts.http, "http://"+ts.addr, append(p.opts, bearer(role+"-token"))...)
			for _, k := range roleCalls {
				want := role == "admin" || containsRole(auth.RolesFor(k.procedure), role)
				err := k.do(ctxT(t), c, w)
				got := connect.CodeOf(err)
				switch {
				case want && (got == connect.CodePermissionDenied || got == connect.CodeUnauthenticated):
					t.Errorf("%s: %s refused %s: %v", p.name, role, k.procedure, err)
				case !want && got != connect.CodePermissionDenied:
					t.Errorf("%s: %s called %s: %v (code %v), want PermissionDenied", p.name, role, k.procedure, err, got)
				}
			}
		}
	}
}

func containsRole(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestUnauthenticated: no token, an unknown token, an expired JWT and a
// JWT for another audience are Unauthenticated; a valid JWT's roles apply.
func TestUnauthenticated(t *testing.T) {
	is := newJWTIssuer(t)
	ts := startAuthServer(t, is, "")
	now := time.Now()
	for _, p := range protocols {
		for name, opts := range map[string][]connect.ClientOption{
			"no token":       nil,
			"unknown token":  {bearer("guess")},
			"expired JWT":    {bearer(is.token(t, "frank", "wfd", now.Add(-time.Hour), "admin"))},
			"wrong audience": {bearer(is.token(t, "frank", "not-wfd", now.Add(time.Hour), "admin"))},
		} {
			c := ts.client(append(p.opts, opts...)...)
			_, err := c.ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{})
			if connect.CodeOf(err) != connect.CodeUnauthenticated {
				t.Errorf("%s, %s: ListWorkflows: %v, want Unauthenticated", p.name, name, err)
			}
			s, err := c.StreamEvents(ctxT(t), &wfdv1.StreamEventsRequest{HandlerId: "nope"})
			if err == nil {
				for s.Receive() {
				}
				err = s.Err()
				_ = s.Close()
			}
			if connect.CodeOf(err) != connect.CodeUnauthenticated {
				t.Errorf("%s, %s: StreamEvents: %v, want Unauthenticated", p.name, name, err)
			}
		}
		c := ts.client(append(p.opts, bearer(is.token(t, "frank", "wfd", now.Add(time.Hour), "reader")))...)
		if _, err := c.ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{}); err != nil {
			t.Errorf("%s: valid JWT with role reader: ListWorkflows: %v", p.name, err)
		}
		_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "expense"})
		wantCode(t, err, connect.CodePermissionDenied, "frank")
	}
}

// TestHealthOpenReflectionConfigurable: gRPC health answers without
// credentials; reflection is off by default with authentication on, and
// served (open) when turned on.
func TestHealthOpenReflectionConfigurable(t *testing.T) {
	is := newJWTIssuer(t)
	on := true
	for _, tc := range []struct {
		name       string
		reflection *bool
		want       int
	}{{"default", nil, http.StatusNotFound}, {"on", &on, http.StatusOK}} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startAuthServer(t, is, "", func(o *server.Options) { o.Reflection = tc.reflection })
			hc := grpchealth.NewClient(ts.http, "http://"+ts.addr, connect.WithGRPC())
			res, err := hc.Check(ctxT(t), &grpchealth.CheckRequest{})
			if err != nil || res.Status != grpchealth.StatusServing {
				t.Fatalf("health check without credentials: %v, %v", res, err)
			}
			// A reflection call over the Connect protocol: 404 when not served.
			req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, "http://"+ts.addr+"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/connect+json")
			resp, err := ts.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("reflection: HTTP %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}
