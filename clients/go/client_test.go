package client_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

func TestWorkflows(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	wfs, err := c.Workflows(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string][]string{}
	for _, w := range wfs {
		steps[w.GetName()] = w.GetSteps()
	}
	want := map[string][]string{"echo": {"echo"}, "approval": {"decide"}, "fanin": {"split", "square", "gather"}}
	for name, s := range want {
		if !slices.Equal(steps[name], s) {
			t.Errorf("workflow %s: steps %v, want %v", name, steps[name], s)
		}
	}
}

// TestSchemas: Workflows carries the schemas, which Run and Send enforce.
func TestSchemas(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	wfs, err := c.Workflows(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(wfs, func(w *wfdv1.Workflow) bool { return w.GetName() == "approval" })
	approval := wfs[i]
	if et := approval.GetEventTypes(); len(et) != 1 || et[0].GetType() != "approval" || et[0].GetExternal() ||
		et[0].GetSchema().GetFields()["required"].GetListValue().GetValues()[0].GetStringValue() != "approved" {
		t.Fatalf("approval's event types %v", et)
	}
	if approval.GetInputSchema().GetFields()["type"].GetStringValue() != "object" {
		t.Fatalf("approval's input schema %v", approval.GetInputSchema())
	}

	_, err = c.Run(ctxT(t), "order", map[string]any{"order_id": 42})
	wantCode(t, err, codes.InvalidArgument, "at '/order_id': got number, want string")
	h, err := c.Run(ctxT(t), "approval", nil)
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, c, h.GetHandlerId()) // its step waits for the answer
	_, err = c.Send(ctxT(t), h.GetHandlerId(), "approval", map[string]any{"approved": "yes"})
	wantCode(t, err, codes.InvalidArgument, `the data of event "approval" does not match its schema`, "at '/approved': got string, want boolean")
	if _, err := c.Send(ctxT(t), h.GetHandlerId(), "approval", map[string]any{"approved": true}); err != nil {
		t.Fatal(err)
	}
}

func TestRunGetStream(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	tests := []struct {
		name  string
		input map[string]any
		opts  []client.RunOption
		want  map[string]any
	}{
		{"map", map[string]any{"a": 1.0, "b": []any{"x", true}}, nil, map[string]any{"a": 1.0, "b": []any{"x", true}}},
		{"nil input", nil, nil, map[string]any{}},
		{"struct input", nil, []client.RunOption{client.WithInputStruct(mustStruct(t, map[string]any{"s": "v"}))}, map[string]any{"s": "v"}},
		{"handler id", map[string]any{"n": 2.0}, []client.RunOption{client.WithHandlerID("echo-fixed-id")}, map[string]any{"n": 2.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := c.Run(ctxT(t), "echo", tt.input, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if h.GetHandlerId() == "" || h.GetWorkflow() != "echo" {
				t.Fatalf("Run returned %v", h)
			}
			recs := drain(t, c, h.GetHandlerId(), 0)
			checkSeqs(t, recs, 0)
			fin := recs[len(recs)-1].GetHandlerFinished()
			if fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
				t.Fatalf("finished %v", fin)
			}
			if want := mustStruct(t, tt.want); !proto.Equal(fin.GetResult(), want) {
				t.Errorf("result %v, want %v", fin.GetResult(), want)
			}
			got, err := c.Get(ctxT(t), h.GetHandlerId())
			if err != nil {
				t.Fatal(err)
			}
			if got.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || !reflect.DeepEqual(got.GetResult().AsMap(), tt.want) ||
				got.GetLastSeq() != recs[len(recs)-1].GetSeq() || got.GetCompletedAt() == nil {
				t.Errorf("Get returned %v", got)
			}
			// Resuming after a sequence number yields the rest only.
			if len(recs) > 1 {
				rest := drain(t, c, h.GetHandlerId(), recs[0].GetSeq())
				checkSeqs(t, rest, recs[0].GetSeq())
			}
		})
	}
}

func TestRunIdempotent(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	first, err := c.Run(ctxT(t), "approval", nil, client.WithHandlerID("order-7"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Run(ctxT(t), "approval", map[string]any{"ignored": true}, client.WithHandlerID("order-7"))
	if err != nil {
		t.Fatal(err)
	}
	if first.GetHandlerId() != "order-7" || again.GetHandlerId() != "order-7" || !again.GetCreatedAt().AsTime().Equal(first.GetCreatedAt().AsTime()) {
		t.Fatalf("first %v, again %v", first, again)
	}
}

// TestApprovalTour is the human-in-the-loop path: the handler asks, idles,
// is released, and the answer wakes and completes it.
func TestApprovalTour(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	h, err := c.Run(ctxT(t), "approval", map[string]any{"amount": 42.0})
	if err != nil {
		t.Fatal(err)
	}
	id := h.GetHandlerId()
	idle := waitIdle(t, c, id)
	if w := idle.GetIdle().GetWaiters(); len(w) != 1 || w[0].GetEventType() != "approval" || w[0].GetStep() != "decide" {
		t.Fatalf("idle %v", idle.GetIdle())
	}
	rel, err := c.Release(ctxT(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if rel.GetResidency() != wfdv1.Residency_RESIDENCY_RELEASED {
		t.Fatalf("released handler has residency %v", rel.GetResidency())
	}
	sent, err := c.Send(ctxT(t), id, "approval", map[string]any{"approved": true, "comment": "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if sent.GetHandlerId() != id {
		t.Fatalf("Send returned %v", sent)
	}
	recs := drain(t, c, id, 0)
	checkSeqs(t, recs, 0)
	var question bool
	for _, r := range recs {
		if r.GetEventWritten().GetType() == "question" {
			question = true
		}
	}
	if !question {
		t.Error("the stream has no question")
	}
	fin := recs[len(recs)-1].GetHandlerFinished()
	if got := fin.GetResult().GetFields()["approved"].GetBoolValue(); fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || !got {
		t.Fatalf("finished %v", fin)
	}
}

func TestSendStruct(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	h, err := c.Run(ctxT(t), "approval", nil)
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, c, h.GetHandlerId())
	if _, err := c.Send(ctxT(t), h.GetHandlerId(), "approval", nil, client.WithDataStruct(mustStruct(t, map[string]any{"approved": false}))); err != nil {
		t.Fatal(err)
	}
	recs := drain(t, c, h.GetHandlerId(), 0)
	if got := recs[len(recs)-1].GetHandlerFinished().GetResult().GetFields()["approved"]; got.GetBoolValue() {
		t.Fatalf("approved = %v, want false", got)
	}
}

func TestCancel(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	h, err := c.Run(ctxT(t), "approval", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Cancel(ctxT(t), h.GetHandlerId())
	if err != nil {
		t.Fatal(err)
	}
	if got.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_CANCELLED {
		t.Fatalf("Cancel returned %v", got)
	}
	recs := drain(t, c, h.GetHandlerId(), 0)
	if fin := recs[len(recs)-1].GetHandlerFinished(); fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_CANCELLED {
		t.Fatalf("finished %v", fin)
	}
}

func TestList(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	var echoes, approvals []string
	for range 3 {
		h, err := c.Run(ctxT(t), "echo", nil)
		if err != nil {
			t.Fatal(err)
		}
		drain(t, c, h.GetHandlerId(), 0)
		echoes = append(echoes, h.GetHandlerId())
	}
	for range 2 {
		h, err := c.Run(ctxT(t), "approval", nil)
		if err != nil {
			t.Fatal(err)
		}
		waitIdle(t, c, h.GetHandlerId())
		approvals = append(approvals, h.GetHandlerId())
	}
	if _, err := c.Release(ctxT(t), approvals[0]); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts client.ListOptions
		want []string // newest first
	}{
		{"all", client.ListOptions{}, []string{approvals[1], approvals[0], echoes[2], echoes[1], echoes[0]}},
		{"workflow", client.ListOptions{Workflow: "echo"}, []string{echoes[2], echoes[1], echoes[0]}},
		{"status", client.ListOptions{Statuses: []wfdv1.HandlerStatus{wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING}}, []string{approvals[1], approvals[0]}},
		{"idle", client.ListOptions{IdleOnly: true}, []string{approvals[1], approvals[0]}},
		{"idle for an hour", client.ListOptions{IdleFor: time.Hour}, nil},
		{"released", client.ListOptions{Residency: wfdv1.Residency_RESIDENCY_RELEASED}, []string{approvals[0]}},
		{"active", client.ListOptions{Residency: wfdv1.Residency_RESIDENCY_ACTIVE, Workflow: "approval"}, []string{approvals[1]}},
		{"small pages", client.ListOptions{PageSize: 2}, []string{approvals[1], approvals[0], echoes[2], echoes[1], echoes[0]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for h, err := range c.ListAll(ctxT(t), tt.opts) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, h.GetHandlerId())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("pages", func(t *testing.T) {
		page, next, err := c.List(ctxT(t), client.ListOptions{PageSize: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 3 || next == "" {
			t.Fatalf("first page: %d handlers, next %q", len(page), next)
		}
		page, next, err = c.List(ctxT(t), client.ListOptions{PageSize: 3, PageToken: next})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 2 || next != "" {
			t.Fatalf("last page: %d handlers, next %q", len(page), next)
		}
	})
	t.Run("break", func(t *testing.T) {
		n := 0
		for _, err := range c.ListAll(ctxT(t), client.ListOptions{PageSize: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 2 {
				break
			}
		}
	})
}

func TestTLS(t *testing.T) {
	ts := startServer(t)
	hs := httptest.NewUnstartedServer(ts.srv.Handler())
	hs.EnableHTTP2 = true
	hs.Config.ErrorLog = log.New(io.Discard, "", 0)
	hs.StartTLS()
	t.Cleanup(hs.Close)
	roots := x509.NewCertPool()
	roots.AddCert(hs.Certificate())
	c := dial(t, hs.Listener.Addr().String(), client.WithTLS(&tls.Config{RootCAs: roots, ServerName: "example.com"}))
	h, err := c.Run(ctxT(t), "echo", map[string]any{"tls": true})
	if err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, drain(t, c, h.GetHandlerId(), 0), 0)

	// The TLS client refuses the plaintext port, and vice versa.
	plain := dial(t, hs.Listener.Addr().String(), client.WithRetry(client.RetryPolicy{MaxAttempts: 1}))
	if _, err := plain.Workflows(ctxT(t)); err == nil {
		t.Error("a plaintext client talked to the TLS server")
	}
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
