package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/clients/go/worker"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/namespace"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/persistence/faultstore"
	"github.com/wfd-dev/wfd/server"
)

// inNamespace names ns in every call.
func inNamespace(ns string) connect.ClientOption {
	return connect.WithInterceptors(nsInterceptor(ns))
}

type nsInterceptor string

func (n nsInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set(namespace.Header, string(n))
		return next(ctx, req)
	}
}

func (n nsInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set(namespace.Header, string(n))
		return conn
	}
}

func (n nsInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// withNamespaces serves the namespaces names, each on a bbolt file of its
// own in a temporary directory (closed after the server stops), with
// retention[name] as its Retention.
func withNamespaces(t *testing.T, retention map[string]time.Duration, names ...string) func(*server.Options) {
	t.Helper()
	dir := t.TempDir()
	var ns []server.Namespace
	for _, name := range names {
		store, err := bolt.Open(filepath.Join(dir, name+".db"), bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		ns = append(ns, server.Namespace{Name: name, Store: store, Retention: retention[name]})
	}
	return func(o *server.Options) { o.Namespaces = ns }
}

// TestNamespacesSeeOnlyTheirOwn: the same handler id and workflow name in
// two namespaces are two handlers; each namespace lists, reads, streams
// and answers its own only, over every protocol.
func TestNamespacesSeeOnlyTheirOwn(t *testing.T) {
	ts := startServer(t, serverConfig{options: withNamespaces(t, nil, "acme", "beta")})
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			ctx := ctxT(t)
			def := ts.client(p.opts...)
			acme := ts.client(append(slices.Clip(p.opts), inNamespace("acme"))...)
			beta := ts.client(append(slices.Clip(p.opts), inNamespace("beta"))...)
			id := "order-" + p.name
			for c, who := range map[wfdv1connect.WorkflowServiceClient]string{def: "default", acme: "acme"} {
				if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: id,
					Attributes: st(t, map[string]any{"requester": who})}); err != nil {
					t.Fatalf("RunWorkflow in %s: %v", who, err)
				}
			}
			for c, who := range map[wfdv1connect.WorkflowServiceClient]string{def: "default", acme: "acme"} {
				res, err := c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id})
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Handler.GetAttributes().GetFields()["requester"].GetStringValue(); got != who {
					t.Errorf("GetHandler %s in %s: requester = %q", id, who, got)
				}
			}
			// beta has neither.
			_, err := beta.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id})
			wantCode(t, err, connect.CodeNotFound, id)
			list, err := beta.ListHandlers(ctx, &wfdv1.ListHandlersRequest{})
			if err != nil || len(list.Handlers) != 0 {
				t.Fatalf("ListHandlers in beta = %v, %v; want none", list.GetHandlers(), err)
			}
			// An answer in acme moves acme's handler only.
			if _, err := acme.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "approval",
				Data: st(t, map[string]any{"approved": true})}}); err != nil {
				t.Fatal(err)
			}
			waitStatus(t, acme, id, wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED)
			res, err := def.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id})
			if err != nil || res.Handler.Status != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
				t.Fatalf("default's %s after acme's answer: %v, %v; want running", id, res.GetHandler().GetStatus(), err)
			}
			// The stream of acme's handler is acme's.
			stream, err := acme.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: id})
			if err != nil {
				t.Fatal(err)
			}
			for stream.Receive() {
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("acme's stream: %v", err)
			}
		})
	}
}

// TestNamespaceUnknownOrMalformed: a namespace not served is NotFound, a
// name no namespace can have is InvalidArgument; neither touches a store.
func TestNamespaceUnknownOrMalformed(t *testing.T) {
	ts := startServer(t, serverConfig{options: withNamespaces(t, nil, "acme")})
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			ctx := ctxT(t)
			_, err := ts.client(append(slices.Clip(p.opts), inNamespace("nope"))...).RunWorkflow(ctx,
				&wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: "x"})
			wantCode(t, err, connect.CodeNotFound, `namespace "nope" is not served here`)
			stream, err := ts.client(append(slices.Clip(p.opts), inNamespace("nope"))...).StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: "x"})
			if err == nil {
				for stream.Receive() {
				}
				err = stream.Err()
			}
			wantCode(t, err, connect.CodeNotFound, `namespace "nope"`)
			_, err = ts.client(append(slices.Clip(p.opts), inNamespace("Bad_NS"))...).ListHandlers(ctx, &wfdv1.ListHandlersRequest{})
			wantCode(t, err, connect.CodeInvalidArgument, "Wfd-Namespace header")
			// Who one is and where one may go answer in any namespace.
			id, err := ts.client(append(slices.Clip(p.opts), inNamespace("acme"))...).GetIdentity(ctx, &wfdv1.GetIdentityRequest{})
			if err != nil || id.Namespace != "acme" {
				t.Fatalf("GetIdentity in acme = %v, %v", id, err)
			}
			ns, err := ts.client(append(slices.Clip(p.opts), inNamespace("nope"))...).ListNamespaces(ctx, &wfdv1.ListNamespacesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if got := namespaceNames(ns.Namespaces); !slices.Equal(got, []string{"acme", "default"}) {
				t.Fatalf("ListNamespaces = %v", got)
			}
		})
	}
	// The store of the default namespace holds nothing of these calls.
	list, err := ts.client().ListHandlers(ctxT(t), &wfdv1.ListHandlersRequest{})
	if err != nil || len(list.Handlers) != 0 {
		t.Fatalf("default's handlers = %v, %v", list.GetHandlers(), err)
	}
}

func namespaceNames(ns []*wfdv1.Namespace) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
	}
	return out
}

// TestNamespaceRoles: roles are granted everywhere ("reader") or in one
// namespace ("acme/reader"); a caller without a role in a namespace is
// refused the same way whether or not it exists.
func TestNamespaceRoles(t *testing.T) {
	is := newJWTIssuer(t)
	ts := startAuthServer(t, is, "  - {token: acme-token, subject: acme-user, roles: [acme/reader, acme/starter]}\n",
		withNamespaces(t, nil, "acme", "beta"))
	ctx := ctxT(t)
	in := func(token, ns string) wfdv1connect.WorkflowServiceClient {
		return ts.client(bearer(token), inNamespace(ns))
	}
	// acme-user starts and reads in acme.
	if _, err := in("acme-token", "acme").RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := in("acme-token", "acme").GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: "a"}); err != nil {
		t.Fatal(err)
	}
	// ...but may not send there (no sender role), nor read elsewhere.
	_, err := in("acme-token", "acme").SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: "a", Event: &wfdv1.Event{Type: "approval"}})
	wantCode(t, err, connect.CodePermissionDenied, "SendEvent")
	_, err = ts.client(bearer("acme-token")).ListHandlers(ctx, &wfdv1.ListHandlersRequest{})
	wantCode(t, err, connect.CodePermissionDenied, "ListHandlers")
	_, errBeta := in("acme-token", "beta").ListHandlers(ctx, &wfdv1.ListHandlersRequest{})
	_, errNone := in("acme-token", "gamma").ListHandlers(ctx, &wfdv1.ListHandlersRequest{})
	wantCode(t, errBeta, connect.CodePermissionDenied, `in namespace "beta"`)
	wantCode(t, errNone, connect.CodePermissionDenied, `in namespace "gamma"`)
	if a, b := strings.ReplaceAll(errBeta.Error(), "beta", "X"), strings.ReplaceAll(errNone.Error(), "gamma", "X"); a != b {
		t.Errorf("refusals differ between a namespace that exists and one that does not:\n%s\n%s", a, b)
	}
	// A role everywhere reaches every namespace; an admin learns that
	// gamma is not served.
	if _, err := in("reader-token", "beta").ListHandlers(ctx, &wfdv1.ListHandlersRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err = in("admin-token", "gamma").ListHandlers(ctx, &wfdv1.ListHandlersRequest{})
	wantCode(t, err, connect.CodeNotFound, `namespace "gamma"`)
	// The reader in acme does not see acme's handler from default.
	_, err = in("reader-token", namespace.Default).GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: "a"})
	wantCode(t, err, connect.CodeNotFound, "a")
	// Identity and the namespace list say the same.
	id, err := in("acme-token", "acme").GetIdentity(ctx, &wfdv1.GetIdentityRequest{})
	if err != nil || !slices.Equal(id.Roles, []string{"reader", "starter"}) || id.Namespace != "acme" {
		t.Fatalf("GetIdentity of acme-user in acme = %v, %v", id, err)
	}
	ns, err := ts.client(bearer("acme-token")).ListNamespaces(ctx, &wfdv1.ListNamespacesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got := namespaceNames(ns.Namespaces); !slices.Equal(got, []string{"acme"}) || !slices.Equal(ns.Namespaces[0].Roles, []string{"reader", "starter"}) {
		t.Fatalf("ListNamespaces of acme-user = %v", ns.Namespaces)
	}
	ns, err = ts.client(bearer("reader-token")).ListNamespaces(ctx, &wfdv1.ListNamespacesRequest{})
	if err != nil || !slices.Equal(namespaceNames(ns.Namespaces), []string{"acme", "beta", "default"}) {
		t.Fatalf("ListNamespaces of reader-user = %v, %v", ns.GetNamespaces(), err)
	}
}

// TestNamespaceRetention: each namespace deletes its finished handlers
// after its own retention.
func TestNamespaceRetention(t *testing.T) {
	opts := withNamespaces(t, map[string]time.Duration{"acme": 50 * time.Millisecond}, "acme")
	ts := startServer(t, serverConfig{options: func(o *server.Options) {
		opts(o)
		o.RetentionInterval = 10 * time.Millisecond
	}})
	ctx := ctxT(t)
	def, acme := ts.client(), ts.client(inNamespace("acme"))
	for _, c := range []wfdv1connect.WorkflowServiceClient{def, acme} {
		if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: "done"}); err != nil {
			t.Fatal(err)
		}
	}
	waitStatus(t, def, "done", wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED)
	testwait.For(t, "acme's finished handler to be deleted", func() bool {
		_, err := acme.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: "done"})
		var ce *connect.Error
		return errors.As(err, &ce) && ce.Code() == connect.CodeNotFound
	})
	if _, err := def.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: "done"}); err != nil {
		t.Fatalf("default's finished handler (no retention): %v", err)
	}
	ns, err := def.ListNamespaces(ctx, &wfdv1.ListNamespacesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns.Namespaces {
		if want := map[string]time.Duration{"acme": 50 * time.Millisecond}[n.Name]; n.GetRetention().AsDuration() != want {
			t.Errorf("namespace %s retention %v, want %v", n.Name, n.GetRetention().AsDuration(), want)
		}
	}
}

// TestNamespaceOptionsRefused: a bad namespace configuration fails New.
func TestNamespaceOptionsRefused(t *testing.T) {
	store, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	for _, tc := range []struct {
		ns   []server.Namespace
		want string
	}{
		{[]server.Namespace{{Name: "Acme", Store: store}}, "invalid namespace"},
		{[]server.Namespace{{Name: "default", Store: store}}, "twice"},
		{[]server.Namespace{{Name: "acme"}}, "no Store"},
	} {
		_, err := server.New(context.Background(), server.Options{Store: store, Namespaces: tc.ns})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New with %+v = %v, want %q", tc.ns, err, tc.want)
		}
	}
}

// TestWorkerServesOneNamespace: a Go worker dialed WithNamespace serves
// its workflow in that namespace only: the workflow is unknown elsewhere,
// and two namespaces may each have a worker-defined workflow of one name.
func TestWorkerServesOneNamespace(t *testing.T) {
	ts := startServer(t, serverConfig{options: withNamespaces(t, nil, "acme")})
	startWorkerDial(t, ts, "acme-worker", 4, worker.Workflow{Definition: approvalDef("approval-remote"), Run: map[string]worker.StepFunc{"decide": decide}},
		client.WithNamespace("acme"))
	c, err := client.Dial(ts.addr, client.WithNamespace("acme"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if c.Namespace() != "acme" {
		t.Fatalf("Namespace() = %q", c.Namespace())
	}
	workersServing(t, ts, "approval-remote", 1, inNamespace("acme"))
	workersServing(t, ts, "approval-remote", 0)
	acme := ts.client(inNamespace("acme"))
	if _, err := acme.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval-remote", HandlerId: "r1"}); err != nil {
		t.Fatal(err)
	}
	finishApproval(t, acme, "r1")
	_, err = ts.client().RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval-remote", HandlerId: "r1"})
	wantCode(t, err, connect.CodeNotFound, "approval-remote")
	// The client's own calls are in acme too.
	h, err := c.Service().GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: "r1"})
	if err != nil || h.Handler.Status != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("GetHandler r1 through the acme client = %v, %v", h.GetHandler().GetStatus(), err)
	}
	if _, err := client.Dial(ts.addr, client.WithNamespace("Not A Namespace")); err == nil {
		t.Fatal("Dial with a malformed namespace succeeded")
	}
}

// TestNamespaceSchedulesAndEvents: a schedule and a published event live
// in their namespace: the same schedule id in two namespaces is two
// schedules, a trigger starts its run in its own namespace, and an event
// published in one is not in the other's log.
func TestNamespaceSchedulesAndEvents(t *testing.T) {
	ts := startServer(t, serverConfig{options: withNamespaces(t, nil, "acme")})
	ctx := ctxT(t)
	def, acme := ts.client(), ts.client(inNamespace("acme"))
	if _, err := acme.CreateSchedule(ctx, &wfdv1.CreateScheduleRequest{Schedule: everyMinute("nightly", "echo", wfdv1.OverlapPolicy_OVERLAP_POLICY_ALLOW)}); err != nil {
		t.Fatal(err)
	}
	_, err := def.GetSchedule(ctx, &wfdv1.GetScheduleRequest{ScheduleId: "nightly"})
	wantCode(t, err, connect.CodeNotFound, "nightly")
	if _, err := def.CreateSchedule(ctx, &wfdv1.CreateScheduleRequest{Schedule: everyMinute("nightly", "approval", 0)}); err != nil {
		t.Fatalf("the same schedule id in default: %v", err)
	}
	tr, err := acme.TriggerSchedule(ctx, &wfdv1.TriggerScheduleRequest{ScheduleId: "nightly"})
	if err != nil || len(tr.GetStarted()) != 1 {
		t.Fatalf("TriggerSchedule in acme = %v, %v", tr.GetStarted(), err)
	}
	if _, err := acme.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: tr.GetStarted()[0]}); err != nil {
		t.Fatalf("the triggered run in acme: %v", err)
	}
	_, err = def.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: tr.GetStarted()[0]})
	wantCode(t, err, connect.CodeNotFound, "")
	if _, err := acme.PublishEvent(ctx, &wfdv1.PublishEventRequest{Key: "k", Data: st(t, map[string]any{"n": 1.0})}); err != nil {
		t.Fatal(err)
	}
	for c, want := range map[wfdv1connect.WorkflowServiceClient]int{acme: 1, def: 0} {
		res, err := c.ListPublishedEvents(ctx, &wfdv1.ListPublishedEventsRequest{Key: "k"})
		if err != nil || len(res.GetEvents()) != want {
			t.Fatalf("published under k: %v, %v; want %d", res.GetEvents(), err, want)
		}
	}
	list, err := def.ListSchedules(ctx, &wfdv1.ListSchedulesRequest{})
	if err != nil || len(list.GetSchedules()) != 1 || list.GetSchedules()[0].GetAction().GetWorkflow() != "approval" {
		t.Fatalf("default's schedules = %v, %v", list.GetSchedules(), err)
	}
}

// TestReadyzNamespaceStore: /readyz answers 503 naming the namespace
// whose store does not answer, and 200 again once it does.
func TestReadyzNamespaceStore(t *testing.T) {
	inner, err := bolt.Open(filepath.Join(t.TempDir(), "acme.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	fs := faultstore.New(inner)
	t.Cleanup(func() { _ = inner.Close() })
	ts := startServer(t, serverConfig{options: func(o *server.Options) {
		o.Namespaces = []server.Namespace{{Name: "acme", Store: fs}}
	}})
	wantProbe(t, ts.addr, "/readyz", http.StatusOK, "ok")
	fs.Update(func(f *faultstore.Funcs) {
		f.CountFunc = func(context.Context) (persistence.Counts, error) {
			return persistence.Counts{}, fmt.Errorf("%w: connection refused", persistence.ErrUnavailable)
		}
	})
	wantProbe(t, ts.addr, "/readyz", http.StatusServiceUnavailable, "namespace acme: store unavailable")
	fs.Reset()
	wantProbe(t, ts.addr, "/readyz", http.StatusOK, "ok")
}
