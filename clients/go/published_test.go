package client_test

import (
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

// TestDelete deletes a finished handler; a running one is refused and an
// unknown one is NotFound.
func TestDelete(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	h, err := c.Run(ctxT(t), "approval", nil, client.WithHandlerID("to-delete"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctxT(t), h.GetHandlerId()); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("Delete of a running handler: %v, want FailedPrecondition", err)
	}
	if _, err := c.Cancel(ctxT(t), h.GetHandlerId()); err != nil {
		t.Fatal(err)
	}
	drain(t, c, h.GetHandlerId(), 0) // until its terminal record
	if err := c.Delete(ctxT(t), h.GetHandlerId()); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := c.Get(ctxT(t), h.GetHandlerId()); status.Code(err) != codes.NotFound {
		t.Fatalf("Get after Delete: %v, want NotFound", err)
	}
	if err := c.Delete(ctxT(t), h.GetHandlerId()); status.Code(err) != codes.NotFound {
		t.Fatalf("Delete twice: %v, want NotFound", err)
	}
	again, err := c.Run(ctxT(t), "approval", nil, client.WithHandlerID("to-delete"))
	if err != nil || again.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
		t.Fatalf("Run with the deleted id = %v, %v; want a running handler", again, err)
	}
}

// TestPublishedEvents lists the log latest first, by key and handler,
// one page and all pages.
func TestPublishedEvents(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	var seqs []uint64
	for i, key := range []string{"k", "other", "k", "k"} {
		var opts []client.PublishOption
		if i == 3 {
			opts = append(opts, client.WithPublishHandler("h-1"))
		}
		res, err := c.Publish(ctxT(t), key, map[string]any{"i": float64(i)}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, res.GetSeq())
	}
	page, next, err := c.PublishedEvents(ctxT(t), client.PublishedOptions{Key: "k", PageSize: 2})
	if err != nil || len(page) != 2 || next == "" {
		t.Fatalf("first page = %v, %q, %v", page, next, err)
	}
	if page[0].GetSeq() != seqs[3] || page[0].GetHandlerId() != "h-1" || page[0].GetData().GetFields()["i"].GetNumberValue() != 3 {
		t.Fatalf("latest event of k = %v", page[0])
	}
	var all []uint64
	for e, err := range c.PublishedEventsAll(ctxT(t), client.PublishedOptions{Key: "k", PageSize: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, e.GetSeq())
	}
	if want := []uint64{seqs[3], seqs[2], seqs[0]}; !slices.Equal(all, want) {
		t.Fatalf("all events of k = %v, want %v", all, want)
	}
	mine, _, err := c.PublishedEvents(ctxT(t), client.PublishedOptions{HandlerID: "h-1"})
	if err != nil || len(mine) != 1 || mine[0].GetSeq() != seqs[3] {
		t.Fatalf("events for h-1 = %v, %v", mine, err)
	}
	if _, _, err := c.PublishedEvents(ctxT(t), client.PublishedOptions{PageToken: "garbage"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a bad page token: %v, want InvalidArgument", err)
	}
}
