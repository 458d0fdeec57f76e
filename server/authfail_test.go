package server_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testlog"

	"github.com/wfd-dev/wfd/server"
)

// TestAuthGuessesThrottled: a client that keeps presenting tokens that do
// not verify is refused without a look at its credentials once it failed
// 30 times within a minute (ResourceExhausted, saying how long to wait),
// even with a good token then; refusals are logged at INFO with the
// client's address.
func TestAuthGuessesThrottled(t *testing.T) {
	var logs testlog.Buffer
	ts := startAuthServer(t, newJWTIssuer(t), "", func(o *server.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	ctx := ctxT(t)
	list := func(token string) error {
		_, err := ts.client(bearer(token)).ListHandlers(ctx, &wfdv1.ListHandlersRequest{})
		return err
	}
	if err := list("reader-token"); err != nil {
		t.Fatalf("a good token: %v", err)
	}
	for i := range 30 {
		if err := list(fmt.Sprint("guess-", i)); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Fatalf("guess %d: %v, want Unauthenticated", i, err)
		}
	}
	wantCode(t, list("guess-z"), connect.CodeResourceExhausted, "too many failed authentications")
	wantCode(t, list("reader-token"), connect.CodeResourceExhausted, "retry in")
	if !strings.Contains(logs.String(), `level=INFO msg="call refused: unauthenticated"`) || !strings.Contains(logs.String(), "client=127.0.0.1:") {
		t.Fatalf("no INFO line with the client's address for a refused call:\n%s", logs.String())
	}
}
