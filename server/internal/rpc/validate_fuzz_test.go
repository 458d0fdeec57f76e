package rpc

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/live"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/payload"
	"github.com/wfd-dev/wfd/persistence"
)

// fuzzLimits keep the fuzzer's payloads small.
var fuzzLimits = payload.Limits{MaxDepth: 8, MaxBytes: 4 << 10}

// FuzzRequestValidation decodes arbitrary bytes as each request type, as the
// server does, and checks that validation never panics, that every
// rejection is InvalidArgument, and that what passes keeps the documented
// rules: among them, that every payload it lets in can be answered in
// Connect JSON.
func FuzzRequestValidation(f *testing.F) {
	nan := &structpb.Struct{Fields: map[string]*structpb.Value{"x": structpb.NewNumberValue(math.NaN()), "k": {}}}
	seeds := []proto.Message{
		&wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: "order-1"},
		&wfdv1.RunWorkflowRequest{Workflow: "a\x00b", HandlerId: "bad id"},
		&wfdv1.RunWorkflowRequest{Workflow: "echo", Input: nan},
		&wfdv1.SendEventRequest{HandlerId: "h", Event: &wfdv1.Event{Type: "approval"}},
		&wfdv1.SendEventRequest{HandlerId: "h", Event: &wfdv1.Event{Type: "approval", Data: nan}},
		&wfdv1.RunWorkflowRequest{Workflow: "echo", Events: []*wfdv1.Event{{Type: "pay", Data: nan}, nil}},
		&wfdv1.SendEventRequest{HandlerId: "h", Event: &wfdv1.Event{Type: "pay"}, Start: &wfdv1.StartIfMissing{Workflow: "echo", Input: nan}},
		&wfdv1.ListHandlersRequest{PageSize: 5, Statuses: []wfdv1.HandlerStatus{1, 9}},
		&wfdv1.PublishEventRequest{Key: "payment:A1", Data: nan},
		&wfdv1.CompleteTaskRequest{TaskId: "h:1/s/0", Answer: nan, CompletedBy: "ada"},
		&wfdv1.ListTasksRequest{Assignee: "finance", PageSize: 10},
	}
	for _, m := range seeds {
		b, _ := proto.Marshal(m)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var run wfdv1.RunWorkflowRequest
		if proto.Unmarshal(b, &run) == nil {
			err := validateRun(&run, fuzzLimits)
			check(t, err)
			if err == nil {
				if id := run.GetHandlerId(); len(id) > maxHandlerIDLen || strings.ContainsAny(id, " /\x00") {
					t.Fatalf("accepted handler id %q", id)
				}
				if run.GetWorkflow() == "" {
					t.Fatal("accepted an empty workflow")
				}
				printable(t, run.GetInput())
				if len(run.GetEvents()) > maxStartEvents {
					t.Fatalf("accepted %d events", len(run.GetEvents()))
				}
				for _, ev := range run.GetEvents() {
					if ev.GetType() == "" {
						t.Fatal("accepted an event without a type")
					}
					printable(t, ev.GetData())
				}
			}
		}
		var send wfdv1.SendEventRequest
		if proto.Unmarshal(b, &send) == nil {
			err := validateSend(&send, fuzzLimits)
			check(t, err)
			if err == nil {
				if send.GetEvent().GetType() == "" || send.GetHandlerId() == "" {
					t.Fatalf("accepted %v", &send)
				}
				printable(t, send.GetEvent().GetData())
				if st := send.GetStart(); st != nil {
					if st.GetWorkflow() == "" {
						t.Fatal("accepted a start without a workflow")
					}
					printable(t, st.GetInput())
				}
			}
		}
		var list wfdv1.ListHandlersRequest
		if proto.Unmarshal(b, &list) == nil {
			err := validateList(&list)
			check(t, err)
			if err == nil && (list.GetPageSize() < 0 || list.GetPageSize() > maxPageSize) {
				t.Fatalf("accepted page size %d", list.GetPageSize())
			}
		}
		var pub wfdv1.PublishEventRequest
		if proto.Unmarshal(b, &pub) == nil {
			err := validatePublish(&pub, fuzzLimits)
			check(t, err)
			if err == nil {
				if pub.GetKey() == "" {
					t.Fatal("accepted an empty key")
				}
				printable(t, pub.GetData())
			}
		}
		var task wfdv1.CompleteTaskRequest
		if proto.Unmarshal(b, &task) == nil {
			err := validateCompleteTask(&task, fuzzLimits)
			check(t, err)
			if err == nil {
				if task.GetTaskId() == "" {
					t.Fatal("accepted an empty task id")
				}
				printable(t, task.GetAnswer())
			}
		}
		var tasks wfdv1.ListTasksRequest
		if proto.Unmarshal(b, &tasks) == nil {
			err := validateListTasks(&tasks)
			check(t, err)
			if err == nil && (tasks.GetPageSize() < 0 || tasks.GetPageSize() > maxPageSize) {
				t.Fatalf("accepted page size %d", tasks.GetPageSize())
			}
		}
	})
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, apierr.ErrInvalid) {
		t.Fatalf("rejection is not invalid-argument: %v", err)
	}
}

// printable fails unless s marshals to Connect JSON and back and is within
// the limits.
func printable(t *testing.T, s *structpb.Struct) {
	t.Helper()
	b, err := protojson.Marshal(s)
	if err != nil {
		t.Fatalf("accepted a payload JSON cannot hold: %v", err)
	}
	if err := protojson.Unmarshal(b, &structpb.Struct{}); err != nil {
		t.Fatalf("accepted a payload whose JSON does not read back: %v", err)
	}
	if n := proto.Size(s); n > fuzzLimits.MaxBytes {
		t.Fatalf("accepted a payload of %d bytes", n)
	}
}

// FuzzOutput stores any Struct (binary protobuf can carry NaN, ±Infinity
// and kind-less values) where the service answers with payloads, as a
// store written before payloads were checked may hold it: a handler's
// result and waiters, and stream records of every kind that carry data.
// Every answer must marshal with protojson (Connect JSON) and proto.
func FuzzOutput(f *testing.F) {
	for _, s := range []*structpb.Struct{
		{Fields: map[string]*structpb.Value{"x": structpb.NewNumberValue(math.NaN()), "k": {}}},
		{Fields: map[string]*structpb.Value{"l": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewNumberValue(math.Inf(1)), {}}})}},
		{Fields: map[string]*structpb.Value{"ok": structpb.NewStringValue("é")}},
	} {
		b, _ := proto.Marshal(s)
		f.Add(b)
	}
	now := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, b []byte) {
		var s structpb.Struct
		if proto.Unmarshal(b, &s) != nil {
			return
		}
		waiter := &wfdv1.WaiterInfo{WaiterId: "1/s/0", Step: "s", EventType: engine.TaskEvent, Match: &s,
			Task: &wfdv1.HumanTask{TaskId: "h:1/s/0", Title: "t", AnswerSchema: &s}}
		wb, err := proto.Marshal(waiter)
		if err != nil {
			t.Fatal(err)
		}
		h := &persistence.Handler{ID: "h", Workflow: "w", Status: persistence.StatusCompleted, Result: b, CreatedAt: now, UpdatedAt: now,
			IdleSince: now, Waiters: []persistence.Waiter{{ID: "1/s/0", Step: "s", EventType: engine.TaskEvent, Match: wb}}}
		answers := []proto.Message{live.HandlerToProto(h), live.InfoToProto(engine.Info{ID: "h", Workflow: "w", Status: engine.StatusCompleted, Result: &s, CreatedAt: now})}
		for _, r := range []*wfdv1.Record{
			{Seq: 1, Kind: &wfdv1.Record_EventWritten{EventWritten: &wfdv1.Event{Id: "2", Type: "progress", Data: &s}}},
			{Seq: 2, Kind: &wfdv1.Record_HandlerFinished{HandlerFinished: &wfdv1.HandlerFinished{Status: wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED, Result: &s}}},
			{Seq: 3, Kind: &wfdv1.Record_IdleChanged{IdleChanged: &wfdv1.IdleChanged{Idle: true, Info: &wfdv1.IdleInfo{Waiters: []*wfdv1.WaiterInfo{waiter}}}}},
		} {
			det := proto.MarshalOptions{Deterministic: true}
			before, err := det.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			answers = append(answers, &wfdv1.StreamEventsResponse{Kind: &wfdv1.StreamEventsResponse_Record{Record: live.CleanRecord(r)}})
			after, _ := det.Marshal(r)
			if string(before) != string(after) {
				t.Fatal("live.CleanRecord changed a shared record")
			}
		}
		for _, m := range answers {
			if _, err := protojson.Marshal(m); err != nil {
				t.Fatalf("%T does not marshal to JSON: %v", m, err)
			}
			if _, err := proto.Marshal(m); err != nil {
				t.Fatalf("%T does not marshal to protobuf: %v", m, err)
			}
		}
	})
}
