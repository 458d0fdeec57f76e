package replicatest_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/devcert"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/server/auth"
	"github.com/wfd-dev/wfd/server/tlsfiles"
)

// tlsSetup is a CA and files for replicas that speak TLS: each replica's
// certificate (127.0.0.1; serverAuth and clientAuth), client
// certificates, a token file giving the certificates roles, a peer secret.
type tlsSetup struct {
	t                          *testing.T
	ca                         *devcert.CA
	dir, caFile                string
	tokensFile, peerSecretFile string
}

func newTLSSetup(t *testing.T) *tlsSetup {
	t.Helper()
	ca, err := devcert.NewCA("wfd replicas CA")
	if err != nil {
		t.Fatal(err)
	}
	s := &tlsSetup{t: t, ca: ca, dir: t.TempDir()}
	if s.caFile, err = ca.WriteCA(s.dir, "ca"); err != nil {
		t.Fatal(err)
	}
	s.tokensFile = s.write("tokens.yaml", "certificates:\n"+
		"  - {subject: alice, roles: [starter, reader, tasks]}\n"+
		"  - {subject: rita, roles: [reader]}\n"+
		// The replicas' own certificates may do anything: the owner must
		// still apply its policy to the caller a replica forwards for.
		"  - {subject: 127.0.0.1, roles: [admin]}\n")
	s.peerSecretFile = s.write("peer-secret", strings.Repeat("s3cret-shared-by-the-replicas-", 2)+"\n")
	return s
}

func (s *tlsSetup) write(name, content string) string {
	s.t.Helper()
	f := filepath.Join(s.dir, name)
	if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
		s.t.Fatal(err)
	}
	return f
}

// pair writes a certificate made by issue under name and returns its files.
func (s *tlsSetup) pair(name string, issue func() (devcert.Pair, error)) (certFile, keyFile string) {
	s.t.Helper()
	p, err := issue()
	if err != nil {
		s.t.Fatal(err)
	}
	certFile, keyFile, err = p.Write(s.dir, name)
	if err != nil {
		s.t.Fatal(err)
	}
	return certFile, keyFile
}

// tlsReplica is how a replica of a test runs.
type tlsReplica struct {
	mtls       bool // clients must present a certificate, which is their identity
	peerSecret bool
	serverOnly bool // the replica's certificate lacks clientAuth
	tp         trace.TracerProvider
}

// start starts replica id speaking TLS, forwarding over TLS.
func (s *tlsSetup) start(url, id string, how tlsReplica) *replica {
	s.t.Helper()
	issue := func() (devcert.Pair, error) { return s.ca.Peer("127.0.0.1") }
	if how.serverOnly {
		issue = func() (devcert.Pair, error) { return s.ca.Server("127.0.0.1") }
	}
	cert, key := s.pair("replica-"+id, issue)
	return startReplicaWith(s.t, url, id, 30*time.Second, false, func(o *server.Options) {
		files := tlsfiles.Files{Cert: cert, Key: key}
		if how.mtls {
			files.ClientCA = s.caFile
			cfg := auth.Config{TokensFile: s.tokensFile, ClientCertificates: true}
			if how.peerSecret {
				cfg.PeerSecretFile = s.peerSecretFile
			}
			a, err := auth.New(context.Background(), cfg)
			if err != nil {
				s.t.Fatal(err)
			}
			o.Auth = a
		}
		var err error
		if o.TLSConfig, err = tlsfiles.ServerConfig(files, nil); err != nil {
			s.t.Fatal(err)
		}
		peer, err := tlsfiles.NewPeer(tlsfiles.PeerFiles{CA: s.caFile, Cert: cert, Key: key}, nil)
		if err != nil {
			s.t.Fatal(err)
		}
		o.PeerTLS = peer.ClientConfig
		o.TracerProvider = how.tp
	})
}

// client calls r over TLS, presenting the client certificate of subject
// (none when empty).
func (s *tlsSetup) client(r *replica, subject string) wfdv1connect.WorkflowServiceClient {
	s.t.Helper()
	if subject == "" {
		return s.clientWith(r, nil)
	}
	return s.clientWith(r, func() (devcert.Pair, error) { return s.ca.Client(subject) })
}

// clientWith calls r over TLS, presenting the certificate issue makes
// (none when nil).
func (s *tlsSetup) clientWith(r *replica, issue func() (devcert.Pair, error), opts ...connect.ClientOption) wfdv1connect.WorkflowServiceClient {
	s.t.Helper()
	cfg := &tls.Config{RootCAs: s.ca.Pool(), MinVersion: tls.VersionTLS12}
	if issue != nil {
		p, err := issue()
		if err != nil {
			s.t.Fatal(err)
		}
		c, err := p.TLS()
		if err != nil {
			s.t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	var p http.Protocols
	p.SetHTTP2(true)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, Protocols: &p}}
	s.t.Cleanup(hc.CloseIdleConnections)
	return wfdv1connect.NewWorkflowServiceClient(hc, "https://"+r.addr, opts...)
}

// ownerOf is the owner of handler id, as c sees it.
func ownerOf(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) *wfdv1.Handler {
	t.Helper()
	res, err := c.GetHandler(context.Background(), &wfdv1.GetHandlerRequest{HandlerId: id})
	if err != nil {
		t.Fatalf("GetHandler %s: %v", id, err)
	}
	return res.GetHandler()
}

// taskOf waits for handler id's pending task, as c lists it.
func taskOf(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) string {
	t.Helper()
	var task string
	testwait.For(t, "the task of "+id, func() bool {
		res, err := c.ListTasks(context.Background(), &wfdv1.ListTasksRequest{HandlerId: id, Statuses: []wfdv1.TaskStatus{wfdv1.TaskStatus_TASK_STATUS_PENDING}})
		if err != nil || len(res.GetTasks()) == 0 {
			return false
		}
		task = res.GetTasks()[0].GetTaskId()
		return true
	})
	return task
}

func okAnswer(t *testing.T) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(map[string]any{"ok": true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReplicaForwardingTLS: with TLS on every replica, a SendEvent
// through B and a CompleteTask through C for handlers live on A are
// forwarded to A over TLS (verified against the peer CA, A's advertised
// host checked against its certificate) and answered by it.
func TestReplicaForwardingTLS(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := newTLSSetup(t)
	a := s.start(url, "a", tlsReplica{})
	b := s.start(url, "b", tlsReplica{})
	c := s.start(url, "c", tlsReplica{})
	ca, cb, cc := s.client(a, ""), s.client(b, ""), s.client(c, "")
	ctx := context.Background()
	if _, err := ca.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "ask", HandlerId: "t1"}); err != nil {
		t.Fatal(err)
	}
	res, err := cb.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: "h1", Event: &wfdv1.Event{Type: "inc", Data: &structpb.Struct{}}})
	if err != nil {
		t.Fatalf("SendEvent through b: %v", err)
	}
	if res.GetHandler().GetOwner() != "a" {
		t.Fatalf("SendEvent through b answered %v, want the handler owned by a", res.GetHandler())
	}
	task := taskOf(t, cc, "t1")
	done, err := cc.CompleteTask(ctx, &wfdv1.CompleteTaskRequest{TaskId: task, Answer: okAnswer(t), CompletedBy: "carol"})
	if err != nil {
		t.Fatalf("CompleteTask through c: %v", err)
	}
	if got := done.GetTask().GetStatus(); got != wfdv1.TaskStatus_TASK_STATUS_COMPLETED {
		t.Fatalf("task after CompleteTask through c: %v", done.GetTask())
	}
	testwait.For(t, "t1 completed on a", func() bool {
		return ownerOf(t, ca, "t1").GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED
	})
	if got := ownerOf(t, ca, "h1"); got.GetOwner() != "a" {
		t.Fatalf("h1 = %v, want still a's", got)
	}
}

// withHeaders sets headers on the calls made with the returned context.
func withHeaders(kv ...string) context.Context {
	ctx, info := connect.NewClientContext(context.Background())
	for i := 0; i < len(kv); i += 2 {
		info.RequestHeader().Set(kv[i], kv[i+1])
	}
	return ctx
}

// signer signs forwarded identities with secretFile, as a replica does.
func signer(t *testing.T, tokensFile, secretFile string) *auth.Authenticator {
	t.Helper()
	a, err := auth.New(context.Background(), auth.Config{TokensFile: tokensFile, PeerSecretFile: secretFile})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestReplicaForwardingMTLSIdentity: with mTLS, where a client's
// certificate is its identity, a call forwarded from B to A is the
// caller's on A: completed_by is the caller's certificate subject, and
// A's policy applies to the caller, not to B's certificate (which may do
// anything): an identity B vouches for with the peer secret. Nobody
// else can: a client that sets the identity header itself, or signs it
// with another secret, is Unauthenticated, on B and on A. A replica
// without the peer secret (C) refuses to forward a certificate's call
// and names the owner; a replica whose certificate does not allow
// clientAuth (D) cannot reach the owner (Unavailable, nothing done).
func TestReplicaForwardingMTLSIdentity(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := newTLSSetup(t)
	a := s.start(url, "a", tlsReplica{mtls: true, peerSecret: true})
	b := s.start(url, "b", tlsReplica{mtls: true, peerSecret: true})
	c := s.start(url, "c", tlsReplica{mtls: true})
	d := s.start(url, "d", tlsReplica{mtls: true, peerSecret: true, serverOnly: true})
	aliceA, aliceB, aliceC, aliceD := s.client(a, "alice"), s.client(b, "alice"), s.client(c, "alice"), s.client(d, "alice")
	ritaA, ritaB := s.client(a, "rita"), s.client(b, "rita")
	asReplica := s.clientWith(a, func() (devcert.Pair, error) { return s.ca.Peer("127.0.0.1") })
	ctx := context.Background()
	for _, id := range []string{"t1", "t2"} {
		if _, err := aliceA.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "ask", HandlerId: id}); err != nil {
			t.Fatal(err)
		}
	}
	t1, t2 := taskOf(t, aliceB, "t1"), taskOf(t, aliceB, "t2")
	answer := func(task string) *wfdv1.CompleteTaskRequest {
		return &wfdv1.CompleteTaskRequest{TaskId: task, Answer: okAnswer(t), CompletedBy: "mallory"}
	}
	complete := wfdv1connect.WorkflowServiceCompleteTaskProcedure

	t.Run("policy", func(t *testing.T) {
		if _, err := ritaB.CompleteTask(ctx, answer(t1)); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Fatalf("rita (reader) through b: %v, want PermissionDenied", err)
		}
		// What b sends a for rita, were b to forward it: a's policy
		// refuses rita, though the certificate of the call is a replica's.
		rita, err := signer(t, s.tokensFile, s.peerSecretFile).SignForwarded(auth.Identity{Subject: "rita", Roles: []string{"reader"}}, complete)
		if err != nil {
			t.Fatal(err)
		}
		vouched := withHeaders("Wfd-Forwarded", "b", auth.ForwardedIdentityHeader, rita)
		if _, err := asReplica.CompleteTask(vouched, answer(t1)); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Fatalf("rita vouched for by a replica, on a: %v, want PermissionDenied", err)
		}
	})

	t.Run("forged", func(t *testing.T) {
		other := s.write("other-secret", strings.Repeat("not-the-replicas-secret-at-all-", 2)+"\n")
		root, err := signer(t, s.tokensFile, other).SignForwarded(auth.Identity{Subject: "root", Roles: []string{"admin"}}, complete)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			c    wfdv1connect.WorkflowServiceClient
			ctx  context.Context
		}{
			{"unsigned, through b", ritaB, withHeaders(auth.ForwardedIdentityHeader, "root")},
			{"another secret, through b", ritaB, withHeaders(auth.ForwardedIdentityHeader, root)},
			{"another secret, to a as if forwarded", ritaA, withHeaders("Wfd-Forwarded", "b", auth.ForwardedIdentityHeader, root)},
			{"another secret, with a replica's certificate", asReplica, withHeaders("Wfd-Forwarded", "b", auth.ForwardedIdentityHeader, root)},
		} {
			if _, err := tc.c.CompleteTask(tc.ctx, answer(t1)); connect.CodeOf(err) != connect.CodeUnauthenticated {
				t.Errorf("%s: %v, want Unauthenticated", tc.name, err)
			}
		}
		if got := taskStatus(t, aliceA, t1); got != wfdv1.TaskStatus_TASK_STATUS_PENDING {
			t.Fatalf("t1 after forged answers: %v, want pending", got)
		}
	})

	t.Run("caller", func(t *testing.T) {
		res, err := aliceB.CompleteTask(ctx, answer(t1))
		if err != nil {
			t.Fatalf("alice through b: %v", err)
		}
		if got := res.GetTask().GetCompletedBy(); got != "alice" {
			t.Fatalf("completed_by = %q, want alice (the caller's certificate)", got)
		}
		testwait.For(t, "t1 completed on a", func() bool {
			return ownerOf(t, aliceA, "t1").GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED
		})
		if by := ownerOf(t, aliceA, "t1").GetResult().GetFields()["by"].GetStringValue(); by != "alice" {
			t.Fatalf("t1's result says it was answered by %q, want alice", by)
		}
	})

	t.Run("no peer secret", func(t *testing.T) {
		_, err := aliceC.CompleteTask(ctx, answer(t2))
		refusedFor(t, err, a)
	})

	t.Run("no clientAuth", func(t *testing.T) {
		if _, err := aliceD.CompleteTask(ctx, answer(t2)); connect.CodeOf(err) != connect.CodeUnavailable {
			t.Fatalf("alice through d (its certificate lacks clientAuth): %v, want Unavailable", err)
		}
		if got := taskStatus(t, aliceA, t2); got != wfdv1.TaskStatus_TASK_STATUS_PENDING {
			t.Fatalf("t2 = %v, want pending", got)
		}
	})
}

func taskStatus(t *testing.T, c wfdv1connect.WorkflowServiceClient, task string) wfdv1.TaskStatus {
	t.Helper()
	res, err := c.GetTask(context.Background(), &wfdv1.GetTaskRequest{TaskId: task})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetTask().GetStatus()
}

// TestReplicaForwardingTrace: a call forwarded from B to A continues the
// caller's trace: B's span of the call (under the caller's traceparent),
// B's client span of the forwarded call under it, A's span of the call
// under that, and A's step run and commit under A's span.
func TestReplicaForwardingTrace(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := newTLSSetup(t)
	spans := tracetest.NewInMemoryExporter()
	provider := func() trace.TracerProvider {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
		t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		return tp
	}
	a := s.start(url, "a", tlsReplica{tp: provider()})
	b := s.start(url, "b", tlsReplica{tp: provider()})
	ctx := context.Background()
	if _, err := s.client(a, "").RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	traced := withHeaders("traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
	if _, err := s.client(b, "").SendEvent(traced, &wfdv1.SendEventRequest{HandlerId: "h1", Event: &wfdv1.Event{Type: "inc", Data: &structpb.Struct{}}}); err != nil {
		t.Fatal(err)
	}
	const rpc = "wfd.v1.WorkflowService/SendEvent"
	testwait.Until(t, func() error {
		got := spans.GetSpans()
		var names []string
		for _, s := range got {
			names = append(names, fmt.Sprintf("%s %s (trace %s, parent %s)", s.SpanKind, s.Name, s.SpanContext.TraceID(), s.Parent.SpanID()))
		}
		find := func(name string, kind trace.SpanKind, parent string) (tracetest.SpanStub, error) {
			for _, s := range got {
				if s.Name == name && (kind == trace.SpanKindUnspecified || s.SpanKind == kind) &&
					s.Parent.SpanID().String() == parent && s.SpanContext.TraceID().String() == callerTrace {
					return s, nil
				}
			}
			return tracetest.SpanStub{}, fmt.Errorf("no %s span under %s in the caller's trace: %v", name, parent, names)
		}
		onB, err := find(rpc, trace.SpanKindServer, callerSpan)
		if err != nil {
			return err
		}
		forwarded, err := find(rpc, trace.SpanKindClient, onB.SpanContext.SpanID().String())
		if err != nil {
			return err
		}
		onA, err := find(rpc, trace.SpanKindServer, forwarded.SpanContext.SpanID().String())
		if err != nil {
			return err
		}
		for _, name := range []string{"wfd.step count", "wfd.store.commit"} {
			if _, err := find(name, trace.SpanKindUnspecified, onA.SpanContext.SpanID().String()); err != nil {
				return err
			}
		}
		return nil
	})
}
