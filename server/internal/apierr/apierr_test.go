package apierr_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/payload"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// TestToConnectHidesInternals: ToConnect keeps the messages a client can
// act on and replaces those that carry internals (paths, library detail)
// by a clear message with an error id, which the interceptor logs with
// the detail.
func TestToConnectHidesInternals(t *testing.T) {
	const path = "/srv/wfd/data/wfd.db"
	bad := &payload.Error{Path: "input.x", Problem: "NaN is not allowed (JSON has no NaN)"}
	for _, c := range []struct {
		err    error
		code   connect.Code
		public string // a regexp for the whole message
	}{
		{fmt.Errorf("%w: bolt: write %s: no space left on device", persistence.ErrUnavailable, path), connect.CodeUnavailable,
			`^the store is unavailable; retry later \(error id [A-Z2-7]{12}\)$`},
		{fmt.Errorf("handler %q: %w: record key of 3 bytes in %s", "h", persistence.ErrCorrupt, path), connect.CodeDataLoss,
			`^stored data is damaged \(error id [A-Z2-7]{12}\)$`},
		{fmt.Errorf("open %s: permission denied", path), connect.CodeInternal, `^internal error \(error id [A-Z2-7]{12}\)$`},
		{fmt.Errorf("%w: %w", apierr.ErrInvalid, bad), connect.CodeInvalidArgument, `^input\.x: NaN is not allowed \(JSON has no NaN\)$`},
		{bad, connect.CodeInvalidArgument, `^input\.x: NaN is not allowed`},
		{fmt.Errorf("%w: workflow %q: %s", engine.ErrInvalidInput, "batch", `"n" is required`), connect.CodeInvalidArgument, `"n" is required$`},
		{fmt.Errorf("%w: handler h holds 10000 queued events", engine.ErrLimit), connect.CodeResourceExhausted, `^limit exceeded: handler h holds`},
		{fmt.Errorf("%w: server is shutting down; resume after seq 4", apierr.ErrUnavailable), connect.CodeUnavailable, `^server is shutting down; resume after seq 4$`},
		{&engine.VersionMissingError{HandlerID: "h", Workflow: "approval", Version: "3f2a"}, connect.CodeUnavailable,
			`^handler h runs approval@3f2a, which is not registered here$`},
		{fmt.Errorf("%w: approval@9", engine.ErrUnknownVersion), connect.CodeNotFound, `^unknown workflow version: approval@9$`},
		{fmt.Errorf("postgres: write: change 0: handler %q: lease is %q's: %w", "h", "r2", persistence.ErrFenced), connect.CodeUnavailable,
			`^this replica no longer owns the handler; retry$`},
	} {
		var logs bytes.Buffer
		l := apierr.Edge{Log: slog.New(slog.NewTextHandler(&logs, nil))}
		err := apierr.ToConnect(c.err)
		l.Report(context.Background(), "/wfd.v1.WorkflowService/X", err)
		var ce *connect.Error
		if !errors.As(err, &ce) || ce.Code() != c.code || !regexp.MustCompile(c.public).MatchString(ce.Message()) {
			t.Errorf("apierr.ToConnect(%v) = %v, want %v with %q", c.err, err, c.code, c.public)
			continue
		}
		id := regexp.MustCompile(`error id ([A-Z2-7]{12})`).FindStringSubmatch(ce.Message())
		switch {
		case id != nil && !errors.Is(err, c.err):
			t.Errorf("apierr.ToConnect(%v) lost the cause it hides", c.err)
		case id == nil && logs.Len() > 0:
			t.Errorf("%v: logged a public error: %s", c.err, logs.String())
		case id != nil && (!strings.Contains(logs.String(), "error_id="+id[1]) || !strings.Contains(logs.String(), path)):
			t.Errorf("%v: the log lacks the detail under %s: %s", c.err, id[1], logs.String())
		}
	}
}

// TestHiddenStoreErrorLoggedOnce: a store error hidden on its way to the
// engine (Hide) is logged there, and not again when a call
// answers with it.
func TestHiddenStoreErrorLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	err := apierr.Hide(log, fmt.Errorf("%w: bolt: read /srv/wfd.db: input/output error", persistence.ErrUnavailable))
	if strings.Contains(err.Error(), "/srv") || !strings.HasPrefix(err.Error(), "the store is unavailable (error id ") {
		t.Fatalf("hidden error %q", err)
	}
	if !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatal("hidden error lost its cause")
	}
	apierr.Edge{Log: log}.Report(context.Background(), "/x", apierr.ToConnect(fmt.Errorf("starting child: %w", err)))
	if n := strings.Count(logs.String(), "/srv/wfd.db"); n != 1 {
		t.Fatalf("logged %d times:\n%s", n, logs.String())
	}
	if other := errors.New("x"); apierr.Hide(log, other) != other || apierr.Hide(log, context.Canceled) != context.Canceled {
		t.Fatal("Hide changed an error that is not the store's")
	}
}
