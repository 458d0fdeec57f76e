package replicatest_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence/postgres"
	"github.com/wfd-dev/wfd/server"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// counter completes after three "inc" events; it stays running (idle)
// in between.
func counter() engine.Workflow {
	return engine.Workflow{
		Name:     "counter",
		External: []string{"inc"},
		Steps: []engine.Step{
			{Name: "init", Accepts: []string{engine.StartEvent}, Run: func(context.Context, *engine.StepContext, engine.Event) error { return nil }},
			{Name: "count", Accepts: []string{"inc"}, Emits: []string{engine.StopEvent}, Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
				sc.Write("got", in.Data)
				n, _ := sc.Get("count")
				count := n.GetNumberValue() + 1
				if err := sc.Set("count", structpb.NewNumberValue(count)); err != nil {
					return err
				}
				if count == 3 {
					return sc.Send(engine.StopEvent, &structpb.Struct{})
				}
				return nil
			}},
		},
	}
}

// sequence records every "num" event it gets ({"sender", "seq"}) as a
// "got" record and completes, with how many it got and how many arrived
// out of their sender's order, once it got the total its input names.
func sequence() engine.Workflow {
	return engine.Workflow{
		Name:     "sequence",
		External: []string{"num"},
		Steps: []engine.Step{
			{Name: "init", Accepts: []string{engine.StartEvent}, Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
				return sc.Set("total", in.Data.GetFields()["total"])
			}},
			{Name: "num", Accepts: []string{"num"}, Emits: []string{engine.StopEvent}, Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
				get := func(k string) float64 { v, _ := sc.Get(k); return v.GetNumberValue() }
				set := func(k string, v float64) error { return sc.Set(k, structpb.NewNumberValue(v)) }
				sc.Write("got", in.Data)
				last := "last:" + in.Data.GetFields()["sender"].GetStringValue()
				seq := in.Data.GetFields()["seq"].GetNumberValue()
				if seq != get(last)+1 {
					if err := set("unordered", get("unordered")+1); err != nil {
						return err
					}
				}
				count := get("count") + 1
				if err := errorsJoin(set(last, seq), set("count", count)); err != nil {
					return err
				}
				if count == get("total") {
					return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
						"count": structpb.NewNumberValue(count), "unordered": structpb.NewNumberValue(get("unordered")),
					}})
				}
				return nil
			}},
		},
	}
}

// sequenceOf is the input of a sequence that completes after total numbers.
func sequenceOf(total int) *structpb.Struct {
	return &structpb.Struct{Fields: map[string]*structpb.Value{"total": structpb.NewNumberValue(float64(total))}}
}

// replica is an in-process server in replica mode on a shared database.
type replica struct {
	id, addr string
	srv      *server.Server
	c        wfdv1connect.WorkflowServiceClient
	stop     func()
}

func startReplica(t *testing.T, url, id string, ttl time.Duration) *replica {
	t.Helper()
	return startReplicaOpts(t, url, id, ttl, false, nil)
}

// startReplicaOpts is startReplica; lenient does not fail the test when
// the replica cannot shut down cleanly (its database is cut off).
func startReplicaOpts(t *testing.T, url, id string, ttl time.Duration, lenient bool, log *slog.Logger) *replica {
	t.Helper()
	return startReplicaWith(t, url, id, ttl, lenient, func(o *server.Options) { o.Logger = log })
}

// startReplicaWith is startReplicaOpts with the server's options set by
// configure.
func startReplicaWith(t *testing.T, url, id string, ttl time.Duration, lenient bool, configure func(*server.Options)) *replica {
	t.Helper()
	store, err := postgres.Open(context.Background(), url, postgres.Options{Shared: true, SessionTimeout: server.SessionTimeout(ttl)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts := server.Options{
		Store: store, Workflows: []engine.Workflow{counter(), ask(), sequence(), keyed()},
		Replica: server.Replica{ID: id, Address: l.Addr().String(), LeaseTTL: ttl},
	}
	configure(&opts)
	srv, err := server.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l, 5*time.Second) }()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	hc := &http.Client{Transport: &http.Transport{Protocols: &p}}
	r := &replica{id: id, addr: l.Addr().String(), srv: srv, c: wfdv1connect.NewWorkflowServiceClient(hc, "http://"+l.Addr().String())}
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			hc.CloseIdleConnections()
			cancel()
			if err := <-done; err != nil && !lenient {
				t.Errorf("Serve %s: %v", id, err)
			}
			if err := store.Close(); err != nil && !lenient {
				t.Errorf("store Close %s: %v", id, err)
			}
		})
	}
	t.Cleanup(r.stop)
	return r
}

func (r *replica) owner(t *testing.T, id string) string {
	t.Helper()
	res, err := r.c.GetHandler(context.Background(), &wfdv1.GetHandlerRequest{HandlerId: id})
	if err != nil {
		t.Fatalf("GetHandler on %s: %v", r.id, err)
	}
	return res.GetHandler().GetOwner()
}

func (r *replica) inc(id string) error {
	_, err := r.c.SendEvent(context.Background(), &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "inc", Data: &structpb.Struct{}}})
	return err
}

// incHere is inc marked as already forwarded (the header a replica sets
// when it forwards a call): r answers it itself, never forwarding it.
func (r *replica) incHere(id string) error {
	ctx, info := connect.NewClientContext(context.Background())
	info.RequestHeader().Set("Wfd-Forwarded", "test")
	_, err := r.c.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "inc", Data: &structpb.Struct{}}})
	return err
}

// inMemory is how many handlers r has in memory.
func (r *replica) inMemory(t *testing.T) int64 {
	t.Helper()
	res, err := r.c.GetStats(context.Background(), &wfdv1.GetStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetHandlersActive() + res.GetHandlersIdleInMemory()
}

// refusedFor checks err is Unavailable naming the owner and its address.
func refusedFor(t *testing.T, err error, owner *replica) {
	t.Helper()
	if connect.CodeOf(err) != connect.CodeUnavailable || !strings.Contains(err.Error(), `"`+owner.id+`"`) || !strings.Contains(err.Error(), owner.addr) {
		t.Fatalf("got %v, want Unavailable naming replica %q at %s", err, owner.id, owner.addr)
	}
}

// TestReplicaOwnership: a handler started on A is A's (owner, in memory
// on A only); B refuses a call it may not forward (marked forwarded)
// naming A; once A releases it, B's SendEvent wakes it on B, and A
// refuses naming B. Both replicas are
// listed; a replica that stops leaves the registry and frees its leases.
// A replica starting up leaves the handlers live on another alone.
func TestReplicaOwnership(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 30*time.Second)
	ctx := context.Background()
	// h0 is idle in a's memory when b starts: b's recovery must neither
	// resume it nor mark it released.
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h0"}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "h0 idle", func() bool {
		res, err := a.c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: "h0"})
		return err == nil && res.GetHandler().GetIdle() != nil
	})
	b := startReplica(t, url, "b", 30*time.Second)
	res0, err := b.c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: "h0"})
	if err != nil {
		t.Fatal(err)
	}
	if h := res0.GetHandler(); h.GetOwner() != "a" || h.GetResidency() != wfdv1.Residency_RESIDENCY_ACTIVE {
		t.Fatalf("h0 after b started = %v, want owner a, active", h)
	}
	if n := b.inMemory(t); n != 0 {
		t.Fatalf("b has %d handlers in memory after start-up, want 0", n)
	}

	res, err := a.c.ListReplicas(ctx, &wfdv1.ListReplicasRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.GetReplicas() {
		got = append(got, r.GetId()+"@"+r.GetAddress())
		if !r.GetExpiresAt().AsTime().After(r.GetStartedAt().AsTime()) {
			t.Errorf("replica %v expires before it started", r)
		}
	}
	if want := []string{"a@" + a.addr, "b@" + b.addr}; !slices.Equal(got, want) {
		t.Fatalf("ListReplicas = %v, want %v", got, want)
	}

	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*replica{a, b} {
		if o := r.owner(t, "h1"); o != "a" {
			t.Fatalf("owner of h1 on %s = %q, want a", r.id, o)
		}
	}
	refusedFor(t, b.incHere("h1"), a)
	if n := b.inMemory(t); n != 0 {
		t.Fatalf("b has %d handlers in memory, want 0", n)
	}
	if err := a.inc("h1"); err != nil {
		t.Fatal(err)
	}

	if _, err := a.c.ReleaseHandler(ctx, &wfdv1.ReleaseHandlerRequest{HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	// The lease is freed once the release commits (in the background):
	// until then b may still be refused (a call not marked forwarded
	// would be forwarded to a meanwhile, and a would load h1 again).
	testwait.Until(t, func() error { return b.incHere("h1") })
	if o := b.owner(t, "h1"); o != "b" {
		t.Fatalf("owner of h1 after b woke it = %q, want b", o)
	}
	refusedFor(t, a.incHere("h1"), b)

	// b stops: it leaves, so a takes h1 at once (not after the ttl).
	b.stop()
	if err := a.inc("h1"); err != nil {
		t.Fatalf("third inc on a after b left: %v", err)
	}
	h, err := a.c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	if h.GetHandler().GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || h.GetHandler().GetOwner() != "" {
		t.Fatalf("h1 after three incs = %v, want completed and no owner", h.GetHandler())
	}
	res, err = a.c.ListReplicas(ctx, &wfdv1.ListReplicasRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GetReplicas()) != 1 || res.GetReplicas()[0].GetId() != "a" {
		t.Fatalf("ListReplicas after b left = %v, want a only", res.GetReplicas())
	}
}

// TestReplicaFencedDropsHandler: a replica whose lease was taken (its
// lease expired, as behind a partition, and another replica acquired
// it) cannot commit the handler: the call it takes answers Unavailable,
// nothing of it reaches the store, and the handler leaves its memory.
func TestReplicaFencedDropsHandler(t *testing.T) {
	url := pgtest.NewDatabase(t)
	// Long ttls: no renewal runs during the test, so the expiry below is
	// not renewed away.
	a := startReplica(t, url, "a", time.Minute)
	b := startReplica(t, url, "b", time.Minute)
	ctx := context.Background()
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	if err := a.inc("h1"); err != nil {
		t.Fatal(err)
	}
	// A's lease runs out (as if A could not renew it), and B takes h1.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, `UPDATE wfd_leases SET expires_at = now() WHERE handler_id = 'h1'`); err != nil {
		t.Fatal(err)
	}
	if err := b.inc("h1"); err != nil {
		t.Fatalf("inc on b after a's lease expired: %v", err)
	}
	if o := b.owner(t, "h1"); o != "b" {
		t.Fatalf("owner = %q, want b", o)
	}
	// A still has h1 in memory; its change is fenced.
	err = a.inc("h1")
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("inc on a after the takeover: %v, want Unavailable", err)
	}
	testwait.For(t, "a drops h1", func() bool { return a.inMemory(t) == 0 })
	// Two incs reached the store (a's first, b's): the handler is still
	// running with count 2, and the third completes it on b.
	h, err := b.c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	if h.GetHandler().GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
		t.Fatalf("h1 = %v, want running (a's fenced inc not applied)", h.GetHandler())
	}
	if err := b.inc("h1"); err != nil {
		t.Fatal(err)
	}
	h, err = b.c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	if h.GetHandler().GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("h1 after b's second inc = %v, want completed", h.GetHandler())
	}
}

// TestReplicaRenewalDropsLostHandlers: a lease taken while its handler is
// idle on A (no call of A's notices) is found lost by A's next renewal,
// which takes the handler out of A's memory.
func TestReplicaRenewalDropsLostHandlers(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 600*time.Millisecond)
	b := startReplica(t, url, "b", time.Minute)
	ctx := context.Background()
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	// Take the lease for b as its Acquire would, once a's renewal is not
	// in the way: expire it and let b's call acquire it, retrying while
	// a's renewal wins the race.
	testwait.Until(t, func() error {
		if _, err := conn.Exec(ctx, `UPDATE wfd_leases SET expires_at = now() WHERE handler_id = 'h1' AND owner = 'a'`); err != nil {
			return err
		}
		return b.inc("h1")
	})
	testwait.For(t, "a's renewal drops h1", func() bool { return a.inMemory(t) == 0 })
	if o := a.owner(t, "h1"); o != "b" {
		t.Fatalf("owner seen from a = %q, want b", o)
	}
}
