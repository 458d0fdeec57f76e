package server

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// FuzzRequestValidation decodes arbitrary bytes as each request type, as the
// server does, and checks that validation never panics, that every
// rejection is InvalidArgument, and that what passes keeps the documented
// rules.
func FuzzRequestValidation(f *testing.F) {
	seeds := []proto.Message{
		&wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: "order-1"},
		&wfdv1.RunWorkflowRequest{Workflow: "a\x00b", HandlerId: "bad id"},
		&wfdv1.SendEventRequest{HandlerId: "h", Event: &wfdv1.Event{Type: "approval"}},
		&wfdv1.ListHandlersRequest{PageSize: 5, Statuses: []wfdv1.HandlerStatus{1, 9}},
	}
	for _, m := range seeds {
		b, _ := proto.Marshal(m)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var run wfdv1.RunWorkflowRequest
		if proto.Unmarshal(b, &run) == nil {
			err := validateRun(&run)
			check(t, err)
			if err == nil {
				if id := run.GetHandlerId(); len(id) > maxHandlerIDLen || strings.ContainsAny(id, " /\x00") {
					t.Fatalf("accepted handler id %q", id)
				}
				if run.GetWorkflow() == "" {
					t.Fatal("accepted an empty workflow")
				}
			}
		}
		var send wfdv1.SendEventRequest
		if proto.Unmarshal(b, &send) == nil {
			err := validateSend(&send)
			check(t, err)
			if err == nil && (send.GetEvent().GetType() == "" || send.GetHandlerId() == "") {
				t.Fatalf("accepted %v", &send)
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
	})
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, errInvalid) {
		t.Fatalf("rejection is not invalid-argument: %v", err)
	}
}
