package server_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/faultstore"
	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/workflows"
)

// lingerOff is Options.Linger for tests that rely on relay: each change
// reaches the journal as soon as the loop has it.
const lingerOff = -1

// errorIDMessage is the whole message of an error whose detail is only in
// the server's log.
func errorIDMessage(public string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(public) + ` \(error id [A-Z2-7]{12}\)$`)
}

// calls are RunWorkflow calls under way, by handler id.
type calls struct {
	results map[string]chan error
	// returned is closed when the first of them returns.
	returned chan struct{}
}

// runAll starts a RunWorkflow of workflow wf for each id, each in its own
// goroutine.
func runAll(ctx context.Context, c wfdv1connect.WorkflowServiceClient, wf string, ids ...string) *calls {
	out := &calls{results: make(map[string]chan error, len(ids)), returned: make(chan struct{})}
	var first sync.Once
	for _, id := range ids {
		done := make(chan error, 1)
		out.results[id] = done
		go func() {
			_, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: wf, HandlerId: id})
			first.Do(func() { close(out.returned) })
			done <- err
		}()
	}
	return out
}

// err waits for the call of handler id to return and returns its error.
func (c *calls) err(id string) error { return <-c.results[id] }

// TestJournalRetriesRefusedChangeAlone: the store refuses any commit that
// holds handler X's change. X's change shares a commit with those of other
// handlers; the journal then writes each change alone, so the others are
// committed and acknowledged and only X's caller gets the error, with the
// code apierr.ToConnect gives the store's refusal and without its detail when
// that is internal. The server goes on serving.
func TestJournalRetriesRefusedChangeAlone(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refusal error
		code    connect.Code
		// message is what the refused caller's message must match.
		message *regexp.Regexp
	}{
		// Invalid data is the caller's to fix: the store's reason reaches it.
		{"invalid", fmt.Errorf("bolt: write: %w: handler %q: waiter key longer than 1024 bytes", persistence.ErrInvalid, "x"),
			connect.CodeInvalidArgument, regexp.MustCompile(`waiter key longer than 1024 bytes$`)},
		// A conflict is another writer's change since the handler was read:
		// Unavailable, retried (a retry reads it again), with its detail
		// (here a replica and a path) only in the log.
		{"conflict", fmt.Errorf("bolt: write /var/lib/wfd/wfd.db: %w: handler %q is owned by replica-b", persistence.ErrConflict, "x"),
			connect.CodeUnavailable, regexp.MustCompile(`^the handler changed meanwhile; retry$`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			arrived := newArrivals()
			f := startFaulty(t, server.Options{Workflows: []engine.Workflow{workflows.Echo(), relay(arrived.reached)}, Linger: lingerOff})
			const refused = "x"
			others := []string{"a", "b", "c", "d"}
			hold := newGate(t)
			var writes writeLog
			f.fs.Update(func(fn *faultstore.Funcs) {
				fn.WriteFunc = func(ctx context.Context, changes ...persistence.Change) error {
					ids := writes.add(changes)
					hold.wait()
					if slices.Contains(ids, refused) {
						return tc.refusal
					}
					return f.fs.Inner().Write(ctx, changes...)
				}
			})

			// A first commit is held: the changes that come meanwhile queue
			// and go into the next commit together.
			blocker := runAll(ctx, f.client, "echo", "blocker")
			waitClosed(t, ctx, hold.entered, "the first commit")
			started := runAll(ctx, f.client, "relay", append([]string{refused}, others...)...)
			arrived.wait(t, ctx, append([]string{refused}, others...)...)
			hold.open()

			if err := blocker.err("blocker"); err != nil {
				t.Fatalf("the held commit's call: %v", err)
			}
			err := started.err(refused)
			wantCode(t, err, tc.code, "")
			var ce *connect.Error
			if !errorsAs(err, &ce) || !tc.message.MatchString(ce.Message()) {
				t.Fatalf("refused call's message %q, want it to match %v", err, tc.message)
			}
			for _, id := range others {
				if err := started.err(id); err != nil {
					t.Fatalf("RunWorkflow(%s) shared a commit with the refused change and failed: %v", id, err)
				}
			}

			// The path under test ran: a commit held X's change and others',
			// then X's change was written alone.
			shared, alone := false, false
			for _, ids := range writes.all() {
				if slices.Contains(ids, refused) {
					shared = shared || slices.ContainsFunc(ids, func(id string) bool { return id != refused })
					alone = alone || shared && len(ids) == 1
				}
			}
			if !shared || !alone {
				t.Fatalf("X's change was not refused in a shared commit and then alone (commits: %v)", writes.all())
			}

			// The others are stored and run to the end; X is not stored.
			for _, id := range others {
				if k := kinds(collect(t, f.client, id, 0)); !strings.HasPrefix(k, "1:first started") || !strings.HasSuffix(k, "COMPLETED") {
					t.Fatalf("stream of %s: %s", id, k)
				}
			}
			_, err = f.client.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: refused})
			wantCode(t, err, connect.CodeNotFound, "")

			// The server goes on.
			h := run(t, f.client, "echo", nil)
			if k := kinds(collect(t, f.client, h.HandlerId, 0)); !strings.HasSuffix(k, "COMPLETED") {
				t.Fatalf("a handler started afterwards: %s", k)
			}
		})
	}
}

// TestSlowCommitHoldsAcknowledgements: while a commit is held, calls whose
// changes are queued behind it do not return (a call is acknowledged only
// once its change is durable); once it is released they all return, and
// their changes shared commits: all those queued behind the held commit
// went into the next one.
func TestSlowCommitHoldsAcknowledgements(t *testing.T) {
	ctx := ctxT(t)
	arrived := newArrivals()
	f := startFaulty(t, server.Options{Workflows: []engine.Workflow{relay(arrived.reached)}, Linger: lingerOff})
	hold := newGate(t)
	var writes writeLog
	f.fs.Update(func(fn *faultstore.Funcs) {
		fn.WriteFunc = func(ctx context.Context, changes ...persistence.Change) error {
			writes.add(changes)
			hold.wait()
			return f.fs.Inner().Write(ctx, changes...)
		}
	})
	ids := make([]string, 16)
	for i := range ids {
		ids[i] = fmt.Sprintf("slow-%02d", i)
	}
	started := runAll(ctx, f.client, "relay", ids...)
	waitClosed(t, ctx, hold.entered, "the first commit")
	// Every call's change is in the journal's hands now (held or queued
	// behind the held commit): none may be answered. A call answered too
	// early would return within moments; a busy machine can only make
	// this check weaker, never fail it.
	arrived.wait(t, ctx, ids...)
	select {
	case <-started.returned:
		t.Fatal("a RunWorkflow returned while the commit ahead of its change was held")
	case <-time.After(200 * time.Millisecond):
	}
	hold.open()
	for _, id := range ids {
		if err := started.err(id); err != nil {
			t.Fatalf("RunWorkflow(%s): %v", id, err)
		}
	}

	// Each call waited for its handler's first change; count the commits
	// those went in.
	first := map[string]int{} // handler id → the Write that first held it
	for i, batch := range writes.all() {
		for _, id := range batch {
			if _, ok := first[id]; !ok {
				first[id] = i
			}
		}
	}
	commits := map[int]bool{}
	for _, id := range ids {
		i, ok := first[id]
		if !ok {
			t.Fatalf("no commit held %s's change", id)
		}
		commits[i] = true
	}
	// The held commit, and the next one with everything queued behind it.
	if len(commits) > 2 {
		t.Fatalf("%d calls acknowledged by %d commits, want at most 2 (commits: %v)", len(ids), len(commits), writes.all())
	}
	t.Logf("%d calls acknowledged by %d commits", len(ids), len(commits))
}
