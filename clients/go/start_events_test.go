package client_test

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

func note(t *testing.T, text string, last bool) *wfdv1.Event {
	t.Helper()
	ev, err := client.NewEvent("note", map[string]any{"text": text, "last": last})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestRunWithEvents: the events Run carries are delivered with the start;
// a repeat delivers them no second time; one the workflow does not take
// refuses the Run.
func TestRunWithEvents(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	opts := []client.RunOption{client.WithHandlerID("nb-1"), client.WithEvents(note(t, "a", false), note(t, "b", true)), client.WithWait(time.Minute)}
	h, err := c.Run(ctxT(t), "notebook", nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || h.GetResult().GetFields()["notes"].GetNumberValue() != 2 {
		t.Fatalf("handler %v, want completed with 2 notes", h)
	}
	again, err := c.Run(ctxT(t), "notebook", nil, opts...)
	if err != nil || again.GetResult().GetFields()["notes"].GetNumberValue() != 2 {
		t.Fatalf("repeat: %v, %v", again, err)
	}
	_, err = c.Run(ctxT(t), "notebook", nil, client.WithHandlerID("nb-bad"), client.WithEvents(&wfdv1.Event{Type: "answer"}))
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("an event notebook does not take: %v, want InvalidArgument", err)
	}
	if _, err := c.Get(ctxT(t), "nb-bad"); status.Code(err) != codes.NotFound {
		t.Fatalf("the refused Run left a handler: %v", err)
	}
}

// TestSendOrStart: the first call starts the handler with its event, the
// next ones deliver to it, a retry delivers nothing again, and a handler
// of another workflow is AlreadyExists.
func TestSendOrStart(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	_, started, err := c.SendOrStart(ctxT(t), "nb-2", "notebook", nil, "note", map[string]any{"text": "a"}, client.WithIdempotencyKey("k1"))
	if err != nil || !started {
		t.Fatalf("first call: started %v, %v", started, err)
	}
	_, started, err = c.SendOrStart(ctxT(t), "nb-2", "notebook", nil, "note", map[string]any{"text": "a"}, client.WithIdempotencyKey("k1"))
	if err != nil || started {
		t.Fatalf("retry: started %v, %v", started, err)
	}
	h, started, err := c.SendOrStart(ctxT(t), "nb-2", "notebook", nil, "note", map[string]any{"text": "b", "last": true}, client.WithSendWait(time.Minute))
	if err != nil || started {
		t.Fatalf("second call: started %v, %v", started, err)
	}
	if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || h.GetResult().GetFields()["notes"].GetNumberValue() != 2 {
		t.Fatalf("handler %v, want completed with 2 notes (the retry delivered nothing)", h)
	}
	if _, err := c.Run(ctxT(t), "approval", nil, client.WithHandlerID("ap-1")); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.SendOrStart(ctxT(t), "ap-1", "notebook", nil, "note", map[string]any{"text": "a"})
	if status.Code(err) != codes.AlreadyExists {
		t.Fatalf("a handler of another workflow: %v, want AlreadyExists", err)
	}
}
