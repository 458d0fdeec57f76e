package server_test

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testlog"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestReclaimAfterReleases releases most of many idle handlers: once the
// releases have been quiet for ReclaimAfter the server reclaims once (not
// per release, and not again until more releases), and afterwards handlers
// in memory and released ones alike still take events and complete.
func TestReclaimAfterReleases(t *testing.T) {
	const quiet = 100 * time.Millisecond
	var logs testlog.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ts := startServer(t, serverConfig{workflows: testWorkflows(), reclaimAfter: quiet, logger: logger})
	c := ts.client()

	ids := runIdle(t, c, 1600, 16)
	// Keep 100 in memory. After the first burst 300 of the peak of 1,600
	// are left, less than a quarter: the registries are rebuilt.
	inMemory, released := ids[:100], ids[100:]
	parallel(t, released[:1300], 16, func(id string) { releaseIn(t, c, id) })
	// A loaded machine may pause the burst for longer than quiet, and then
	// the server reclaims during it too: wait for the reclaim after it.
	waitReclaimAfter(t, &logs, 1300)
	if ts.srv.Engine().Compact() {
		t.Error("the reclaim left the engine's registry at its peak size")
	}
	// A mass release: the store was reopened, not only its pages dropped.
	if l := logs.String(); !strings.Contains(l, "store=reopened") {
		t.Errorf("no reclaim that reopened the store in the log:\n%s", l)
	}
	if s := stats(t, c); s.HandlersActive != 300 || s.HandlersIdleInMemory != 300 || s.ReleasesTotal != 1300 {
		t.Fatalf("stats after the reclaim: %v", s)
	}
	n := ts.srv.Reclaims()
	if n > 1300 {
		t.Fatalf("%d reclaims after 1,300 releases: one per release at least", n)
	}

	// Quiet: no more reclaims (a wait that a slow machine only makes less
	// strict). A second burst of releases: one more after it.
	time.Sleep(5 * quiet)
	if got := ts.srv.Reclaims(); got != n {
		t.Fatalf("%d reclaims without new releases, want %d", got, n)
	}
	parallel(t, released[1300:], 16, func(id string) { releaseIn(t, c, id) })
	waitReclaimAfter(t, &logs, 1500)

	// Handlers still work, from memory and from the store.
	before := stats(t, c).RehydrationsTotal
	answer := append(append([]string{}, inMemory[:20]...), released[:20]...)
	answer = append(answer, released[len(released)-20:]...)
	parallel(t, answer, 8, func(id string) {
		if _, err := sendEv(t, c, id, "approval", map[string]any{"approved": true}); err != nil {
			t.Errorf("SendEvent %s: %v", id, err)
			return
		}
		if k := kinds(collect(t, c, id, 0)); !strings.HasSuffix(k, "COMPLETED") {
			t.Errorf("handler %s: stream %s", id, k)
		}
	})
	if got := stats(t, c).RehydrationsTotal - before; got != 40 {
		t.Errorf("%d rehydrations, want 40 (one per released handler answered)", got)
	}
}

// runIdle starts n approval handlers from the given number of clients and
// returns their ids, in no particular order, once every one is idle.
func runIdle(t *testing.T, c wfdv1connect.WorkflowServiceClient, n, clients int) []string {
	t.Helper()
	var mu sync.Mutex
	var ids []string
	parallel(t, make([]string, n), clients, func(string) {
		res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval"})
		if err != nil {
			t.Errorf("RunWorkflow: %v", err)
			return
		}
		id := res.Handler.HandlerId
		// On another goroutine than the test's: report with Errorf.
		for start := time.Now(); res.Handler.GetIdle() == nil; time.Sleep(2 * time.Millisecond) {
			if time.Since(start) > testwait.Timeout {
				t.Errorf("handler %s never became idle", id)
				return
			}
			g, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
			if err != nil {
				t.Errorf("GetHandler: %v", err)
				return
			}
			res.Handler = g.Handler
		}
		mu.Lock()
		ids = append(ids, id)
		mu.Unlock()
	})
	return ids
}

// releaseIn releases a handler; it may run on any goroutine.
func releaseIn(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) {
	res, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: id})
	if err != nil {
		t.Errorf("ReleaseHandler %s: %v", id, err)
		return
	}
	if res.Handler.Residency != wfdv1.Residency_RESIDENCY_RELEASED {
		t.Errorf("after ReleaseHandler: %v", res.Handler)
	}
}

// parallel calls fn for every id from the given number of goroutines; fn
// reports failures with t.Errorf, which parallel turns into a stop.
func parallel(t *testing.T, ids []string, workers int, fn func(id string)) {
	t.Helper()
	work := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for id := range work {
				fn(id)
			}
		})
	}
	for _, id := range ids {
		work <- id
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}

// waitReclaimAfter waits for the server to log a reclaim that follows
// the given total of releases.
func waitReclaimAfter(t *testing.T, logs *testlog.Buffer, releases int) {
	t.Helper()
	line := fmt.Sprintf(`msg="reclaimed memory after releases" releases=%d `, releases)
	testwait.For(t, "a reclaim after "+strconv.Itoa(releases)+" releases", func() bool { return strings.Contains(logs.String(), line) })
}
