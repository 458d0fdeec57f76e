package client_test

import (
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	client "github.com/wfd-dev/wfd/clients/go"
)

// TestAttributes: Run gives search attributes (NewAttributes converts
// times and string slices), Attributes reads them back, List's Where
// filters and orders by them; an attribute approval does not declare is
// InvalidArgument.
func TestAttributes(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	for i, who := range []string{"ada", "bob", "ada"} {
		a, err := client.NewAttributes(map[string]any{"requester": who, "priority": i})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Run(ctxT(t), "approval", nil, client.WithHandlerID("ap-"+string(rune('1'+i))), client.WithAttributes(a)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := c.Get(ctxT(t), "ap-3")
	if err != nil {
		t.Fatal(err)
	}
	if got := client.Attributes(h); got["requester"] != "ada" || got["priority"] != 2.0 {
		t.Fatalf("Attributes = %v", got)
	}
	hs, _, err := c.List(ctxT(t), client.ListOptions{Workflow: "approval", Where: `requester = "ada" order by priority desc`})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(hs))
	for i, h := range hs {
		got[i] = h.GetHandlerId()
	}
	if !slices.Equal(got, []string{"ap-3", "ap-1"}) {
		t.Fatalf("listed %v, want [ap-3 ap-1]", got)
	}

	a, err := client.NewAttributes(map[string]any{"requester": "cy", "when": time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctxT(t), "approval", nil, client.WithHandlerID("ap-bad"), client.WithAttributes(a)); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("an undeclared attribute: %v, want InvalidArgument", err)
	}
	if _, _, err := c.List(ctxT(t), client.ListOptions{Workflow: "approval", Where: `requester =`}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a malformed query: %v, want InvalidArgument", err)
	}
}
