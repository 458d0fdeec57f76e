package client_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	client "github.com/wfd-dev/wfd/clients/go"
)

func TestErrorCodes(t *testing.T) {
	ts := startServer(t)
	setup := dial(t, ts.addr)
	done, err := setup.Run(ctxT(t), "echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	drain(t, setup, done.GetHandlerId(), 0)
	idle, err := setup.Run(ctxT(t), "approval", nil)
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, setup, idle.GetHandlerId())

	var n calls
	c := dial(t, ts.addr, n.option())

	tests := []struct {
		name     string
		call     func(context.Context) error
		code     codes.Code
		contains string
	}{
		{"get unknown handler", func(ctx context.Context) error { _, err := c.Get(ctx, "nope"); return err }, codes.NotFound, "nope"},
		{"send to unknown handler", func(ctx context.Context) error {
			_, err := c.Send(ctx, "nope", "approval", nil)
			return err
		}, codes.NotFound, ""},
		{"cancel unknown handler", func(ctx context.Context) error { _, err := c.Cancel(ctx, "nope"); return err }, codes.NotFound, ""},
		{"release unknown handler", func(ctx context.Context) error { _, err := c.Release(ctx, "nope"); return err }, codes.NotFound, ""},
		{"stream unknown handler", func(ctx context.Context) error {
			for _, err := range c.Stream(ctx, "nope", 0) {
				return err
			}
			return nil
		}, codes.NotFound, ""},
		{"run unknown workflow", func(ctx context.Context) error { _, err := c.Run(ctx, "nope", nil); return err }, codes.NotFound, "nope"},
		{"bad handler id", func(ctx context.Context) error { _, err := c.Get(ctx, "no spaces"); return err }, codes.InvalidArgument, "handler_id"},
		{"bad event type", func(ctx context.Context) error {
			_, err := c.Send(ctx, idle.GetHandlerId(), "bogus", nil)
			return err
		}, codes.InvalidArgument, "bogus"},
		{"input not a struct", func(ctx context.Context) error {
			_, err := c.Run(ctx, "echo", map[string]any{"f": func() {}})
			return err
		}, codes.InvalidArgument, "input"},
		{"page size too large", func(ctx context.Context) error {
			_, _, err := c.List(ctx, client.ListOptions{PageSize: 5000})
			return err
		}, codes.InvalidArgument, "page_size"},
		{"event to a completed handler", func(ctx context.Context) error {
			_, err := c.Send(ctx, done.GetHandlerId(), "approval", nil)
			return err
		}, codes.FailedPrecondition, ""},
		{"release a completed handler", func(ctx context.Context) error {
			_, err := c.Release(ctx, done.GetHandlerId())
			return err
		}, codes.FailedPrecondition, ""},
		{"handler id of another workflow", func(ctx context.Context) error {
			_, err := c.Run(ctx, "echo", nil, client.WithHandlerID(idle.GetHandlerId()))
			return err
		}, codes.AlreadyExists, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(ctxT(t))
			if got := status.Code(err); got != tt.code {
				t.Fatalf("code %v (%v), want %v", got, err, tt.code)
			}
			if msg := status.Convert(err).Message(); !strings.Contains(msg, tt.contains) {
				t.Errorf("message %q does not contain %q", msg, tt.contains)
			}
		})
	}
	// Errors other than Unavailable are not retried.
	want := map[string]int{"GetHandler": 2, "StreamEvents": 1, "CancelHandler": 1, "ReleaseHandler": 2, "SendEvent": 3, "RunWorkflow": 2}
	for m, calls := range want {
		if got := n.get("/wfd.v1.WorkflowService/" + m); got != calls {
			t.Errorf("%s: %d attempts for %d calls", m, got, calls)
		}
	}
}
