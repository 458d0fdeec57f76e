package server_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/testlog"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/workflows"
)

// jsonClient speaks Connect with JSON, where a payload JSON cannot hold
// makes the answer fail to marshal.
func (ts *testServer) jsonClient() wfdv1connect.WorkflowServiceClient {
	return ts.client(connect.WithProtoJSON())
}

func handlerCount(t *testing.T, c wfdv1connect.WorkflowServiceClient) int {
	t.Helper()
	res, err := c.ListHandlers(ctxT(t), &wfdv1.ListHandlersRequest{PageSize: 1000})
	if err != nil {
		t.Fatalf("ListHandlers: %v", err)
	}
	return len(res.Handlers)
}

func obj(fields map[string]*structpb.Value) *structpb.Struct { return &structpb.Struct{Fields: fields} }

func deepInput(levels int) *structpb.Struct {
	s := obj(nil)
	for range levels - 1 {
		s = obj(map[string]*structpb.Value{"a": structpb.NewStructValue(s)})
	}
	return s
}

// TestBadPayloadsRefused sends, in binary protobuf (which can carry them),
// payloads JSON cannot hold and payloads past the limits to every RPC that
// takes one: each is InvalidArgument naming the value, and nothing is
// stored, so every read and list still answers in JSON.
func TestBadPayloadsRefused(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	items := []*structpb.Value{structpb.NewNumberValue(0), structpb.NewNumberValue(1), structpb.NewNumberValue(2),
		structpb.NewStructValue(obj(map[string]*structpb.Value{"x": structpb.NewNumberValue(math.NaN())}))}
	nanInput := obj(map[string]*structpb.Value{"items": structpb.NewListValue(&structpb.ListValue{Values: items})})

	approval := run(t, c, "approval", nil)
	waitIdle(t, c, approval.HandlerId)
	expense := run(t, c, "expense", map[string]any{"approver": "ada"})
	task := waitTask(t, c, expense.HandlerId)
	before := handlerCount(t, c)

	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"RunWorkflow NaN", func() error {
			_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "echo", Input: nanInput})
			return err
		}, "input.items[3].x: NaN is not allowed"},
		{"RunWorkflow Infinity", func() error {
			_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: "inf", Input: obj(map[string]*structpb.Value{"x": structpb.NewNumberValue(math.Inf(1))})})
			return err
		}, "input.x: Infinity is not allowed"},
		{"RunWorkflow too deep", func() error {
			_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "echo", Input: deepInput(engine.DefaultMaxPayloadDepth + 1)})
			return err
		}, "nested deeper than 32 levels"},
		{"RunWorkflow too large", func() error {
			big := obj(map[string]*structpb.Value{"s": structpb.NewStringValue(strings.Repeat("x", engine.DefaultMaxPayloadBytes))})
			_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "echo", Input: big})
			return err
		}, "input: encodes to 1048591 bytes, over the limit of 1048576"},
		{"SendEvent kind-less", func() error {
			_, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: approval.HandlerId,
				Event: &wfdv1.Event{Type: workflows.ApprovalEvent, Data: obj(map[string]*structpb.Value{"approved": {}})}})
			return err
		}, "event.data.approved: value has no kind"},
		{"PublishEvent -Infinity", func() error {
			_, err := c.PublishEvent(ctxT(t), &wfdv1.PublishEventRequest{Key: "payment:A1", Data: obj(map[string]*structpb.Value{"amount": structpb.NewNumberValue(math.Inf(-1))})})
			return err
		}, "data.amount: -Infinity is not allowed"},
		{"CompleteTask kind-less", func() error {
			_, err := c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, Answer: obj(map[string]*structpb.Value{"approved": {}})})
			return err
		}, "answer.approved: value has no kind"},
		{"batch n out of range", func() error {
			_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "batch", Input: st(t, map[string]any{"n": 1e9})})
			return err
		}, `workflow "batch": the input does not match the workflow's input schema: at '/n': maximum: got 1e+09, want <= 1000`},
		{"batch n negative", func() error {
			_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "batch", Input: st(t, map[string]any{"n": -1.0})})
			return err
		}, `at '/n': minimum: got -1, want >= 0`},
		{"order without order_id", func() error {
			_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "order"})
			return err
		}, `workflow "order": the input does not match the workflow's input schema: at '': missing property 'order_id'`},
		{"expense deadline", func() error {
			_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "expense", Input: st(t, map[string]any{"deadline_s": 1e300})})
			return err
		}, `at '/deadline_s': maximum: got 1e+300, want <= 3.1536e+07`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, tc.call(), connect.CodeInvalidArgument, tc.want)
		})
	}

	jc := ts.jsonClient()
	if n := handlerCount(t, jc); n != before {
		t.Fatalf("refused calls created handlers: %d, was %d", n, before)
	}
	if _, err := jc.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: "inf"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("GetHandler of a refused handler id: %v", err)
	}
	for _, id := range []string{approval.HandlerId, expense.HandlerId} {
		if h := waitIdle(t, jc, id); h.Status != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
			t.Fatalf("handler %s after refused events: %v", id, h)
		}
	}
	if got, err := jc.GetTask(ctxT(t), &wfdv1.GetTaskRequest{TaskId: task.TaskId}); err != nil || got.Task.Status != wfdv1.TaskStatus_TASK_STATUS_PENDING {
		t.Fatalf("task after a refused answer: %v %v", got, err)
	}
}

// poison holds a number JSON cannot hold and a value with no kind.
func poison() *structpb.Struct {
	return obj(map[string]*structpb.Value{"x": structpb.NewNumberValue(math.NaN()), "none": {}, "ok": structpb.NewStringValue("kept")})
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStoredPoisonReadable writes handlers whose result, stream and
// waiters hold NaN and kind-less values straight into a bbolt store
// through the persistence API, as a store written before payloads were
// checked holds them, and starts a server on it: GetHandler, ListHandlers
// and StreamEvents answer in Connect JSON, with NaN as "NaN" and the
// kind-less value as null.
func TestStoredPoisonReadable(t *testing.T) {
	dir := t.TempDir()
	store, err := bolt.Open(filepath.Join(dir, "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	now := timestamppb.Now()
	at := now.AsTime()
	waiter := &wfdv1.WaiterInfo{WaiterId: "1/decide/0", Step: "decide", EventType: "approval", Match: poison()}
	record := func(seq uint64, r *wfdv1.Record) persistence.Record {
		r.Seq, r.Time = seq, now
		return persistence.Record{Seq: seq, Data: mustMarshal(t, r)}
	}
	done := persistence.Change{
		Handler: persistence.Handler{ID: "poison-done", Workflow: "echo", Status: persistence.StatusCompleted, Residency: persistence.ResidencyReleased, CreatedAt: at, UpdatedAt: at, CompletedAt: at,
			Result: mustMarshal(t, poison())},
		Records: []persistence.Record{
			record(1, &wfdv1.Record{Kind: &wfdv1.Record_EventWritten{EventWritten: &wfdv1.Event{Id: "2", Type: "progress", Data: poison()}}}),
			record(2, &wfdv1.Record{Kind: &wfdv1.Record_HandlerFinished{HandlerFinished: &wfdv1.HandlerFinished{Status: wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED, Result: poison()}}}),
		},
	}
	idle := persistence.Change{
		Handler: persistence.Handler{ID: "poison-idle", Workflow: "approval", Status: persistence.StatusRunning, Residency: persistence.ResidencyReleased,
			CreatedAt: at, UpdatedAt: at, IdleSince: at,
			Waiters: []persistence.Waiter{{ID: waiter.WaiterId, Step: "decide", EventType: "approval", Match: mustMarshal(t, waiter)}}},
		Records: []persistence.Record{
			record(1, &wfdv1.Record{Kind: &wfdv1.Record_IdleChanged{IdleChanged: &wfdv1.IdleChanged{Idle: true, Info: &wfdv1.IdleInfo{Since: now, Waiters: []*wfdv1.WaiterInfo{waiter}}}}}),
		},
	}
	if err := store.Write(context.Background(), done, idle); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	ts := startServer(t, serverConfig{dir: dir})
	c := ts.jsonClient()
	res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: "poison-done"})
	if err != nil {
		t.Fatalf("GetHandler: %v", err)
	}
	wantSanitized(t, "result", res.Handler.GetResult())
	res, err = c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: "poison-idle"})
	if err != nil {
		t.Fatalf("GetHandler: %v", err)
	}
	if w := res.Handler.GetIdle().GetWaiters(); len(w) != 1 {
		t.Fatalf("waiters %v", w)
	} else {
		wantSanitized(t, "waiter match", w[0].GetMatch())
	}
	list, err := c.ListHandlers(ctxT(t), &wfdv1.ListHandlersRequest{})
	if err != nil || len(list.Handlers) != 2 {
		t.Fatalf("ListHandlers: %v, %v", list, err)
	}

	recs := collect(t, c, "poison-done", 0)
	if len(recs) != 2 {
		t.Fatalf("stream %s", kinds(recs))
	}
	wantSanitized(t, "written event", recs[0].GetEventWritten().GetData())
	wantSanitized(t, "finished record", recs[1].GetHandlerFinished().GetResult())

	// The idle handler's stream stays open: read its one record.
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	s, err := c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: "poison-idle", IncludeInternal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	for s.Receive() {
		if r := s.Msg().GetRecord(); r != nil {
			wantSanitized(t, "idle record's waiter", r.GetIdleChanged().GetInfo().GetWaiters()[0].GetMatch())
			break
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("StreamEvents: %v", err)
	}
}

func wantSanitized(t *testing.T, what string, s *structpb.Struct) {
	t.Helper()
	f := s.GetFields()
	if f["x"].GetStringValue() != "NaN" || f["none"].GetNullValue() != structpb.NullValue_NULL_VALUE || f["none"] == nil || f["ok"].GetStringValue() != "kept" {
		t.Fatalf("%s: %v, want x \"NaN\", none null, ok \"kept\"", what, s)
	}
}

// nilResult completes with a result whose "index" is a nil Value, as the
// job workflow did when it had no input.
func nilResult() engine.Workflow {
	return engine.Workflow{Name: "nil_result", Steps: []engine.Step{{
		Name: "s", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
		Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			return sc.Send(engine.StopEvent, obj(map[string]*structpb.Value{"index": in.Data.GetFields()["index"]}))
		},
	}}}
}

// TestRunWithoutInput: RunWorkflow {"workflow":"job"} used to complete the
// handler and answer INTERNAL (its result held a kind-less value that JSON
// cannot hold), so a client retrying without a handler id made a second
// one. It answers the completed handler, to curl-style JSON as well; and a
// step that produces such a result fails its run instead of storing it.
func TestRunWithoutInput(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: append(workflows.All(), nilResult())})

	// As curl sends it.
	req, err := http.NewRequest(http.MethodPost, "http://"+ts.addr+"/wfd.v1.WorkflowService/RunWorkflow", strings.NewReader(`{"workflow":"job"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if err := resp.Body.Close(); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("RunWorkflow job: HTTP %d %s", resp.StatusCode, body)
	}
	var out wfdv1.RunWorkflowResponse
	if err := protojson.Unmarshal(body, &out); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	c := ts.jsonClient()
	recs := collect(t, c, out.Handler.HandlerId, 0)
	if fin := recs[len(recs)-1].GetHandlerFinished(); fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || len(fin.GetResult().GetFields()) != 0 {
		t.Fatalf("job without input finished %v", fin)
	}

	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "nil_result"})
	if err != nil {
		t.Fatalf("RunWorkflow nil_result: %v", err)
	}
	recs = collect(t, c, res.Handler.HandlerId, 0)
	fin := recs[len(recs)-1].GetHandlerFinished()
	if fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_FAILED || !strings.Contains(fin.GetError(), `sends "stop": result.index: value has no kind`) {
		t.Fatalf("a step's kind-less result: finished %v", fin)
	}
	if _, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: res.Handler.HandlerId}); err != nil {
		t.Fatalf("GetHandler: %v", err)
	}
}

// panics is a workflow whose step panics.
func panics() engine.Workflow {
	return engine.Workflow{Name: "panics", Steps: []engine.Step{{
		Name: "boom", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
		Run: func(context.Context, *engine.StepContext, engine.Event) error {
			var s []int
			_ = s[3] // index out of range
			return nil
		},
	}}}
}

// TestPanicShowsNoStack: a panicking step used to put a Go stack trace
// with source paths in the handler's error and on its stream. Clients now
// see what panicked and an error id; the log has the stack under that id.
func TestPanicShowsNoStack(t *testing.T) {
	var logs testlog.Buffer
	ts := startServer(t, serverConfig{workflows: append(workflows.All(), panics()),
		logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	c := ts.jsonClient()
	h := run(t, c, "panics", nil)
	recs := collect(t, c, h.HandlerId, 0)
	fin := recs[len(recs)-1].GetHandlerFinished()
	m := regexp.MustCompile(`step "boom" panicked: runtime error: index out of range \[3\] with length 0 \(error id ([A-Z2-7]{12})\)$`).FindStringSubmatch(fin.GetError())
	if m == nil {
		t.Fatalf("finished with error %q", fin.GetError())
	}
	res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: h.HandlerId})
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range append([]string{res.Handler.Error}, stepErrors(recs)...) {
		if strings.Contains(msg, ".go:") || strings.Contains(msg, "goroutine") {
			t.Fatalf("a client sees a stack: %q", msg)
		}
	}
	if log := logs.String(); !strings.Contains(log, "error_id="+m[1]) || !strings.Contains(log, "payload_test.go") {
		t.Fatalf("the log has no stack under error id %s:\n%s", m[1], log)
	}
}

func stepErrors(recs []*wfdv1.Record) []string {
	var out []string
	for _, r := range recs {
		if e := r.GetStepStateChanged().GetError(); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// TestLimitsFromOptions: the engine's limits are the server's options.
func TestLimitsFromOptions(t *testing.T) {
	ts := startServer(t, serverConfig{limits: engine.Limits{MaxChildren: 2, MaxPayloadBytes: 1024}})
	c := ts.client()
	_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "echo", Input: st(t, map[string]any{"s": strings.Repeat("x", 2000)})})
	wantCode(t, err, connect.CodeInvalidArgument, "over the limit of 1024")
	h := run(t, c, "batch", map[string]any{"n": 3.0})
	recs := collect(t, c, h.HandlerId, 0)
	fin := recs[len(recs)-1].GetHandlerFinished()
	if fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_FAILED || !strings.Contains(fin.GetError(), "has started 2 children, the limit (Limits.MaxChildren)") {
		t.Fatalf("batch of 3 with 2 children allowed: %v", fin)
	}
}
