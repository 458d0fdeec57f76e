//go:build linux

package main_test

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestReplicaSIGKILLTakeover runs two `wfd serve` replicas on one
// PostgreSQL database. A handler parked on A is A's (wfd get on B names
// the owner, wfd replicas lists both) and B refuses its answer marked as forwarded naming A (it never forwards
// such a call again).
// A dies of SIGKILL without leaving: once its lease has expired (--lease-ttl
// 2s) B takes the handler over and the answer completes it there.
func TestReplicaSIGKILLTakeover(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wfd and kills it: not in -short mode")
	}
	bin := buildWfd(t)
	url := pgtest.NewDatabase(t)
	replica := func(id string) *wfdProc {
		return startWfd(t, bin, t.TempDir(), "--store", url, "--replica-id", id, "--lease-ttl", "2s", "--console-addr", "")
	}
	a, b := replica("a"), replica("b")
	ctx, cancel := context.WithTimeout(context.Background(), 3*testwait.Timeout)
	defer cancel()

	if _, err := a.client().RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: "r1", Input: input(1)}); err != nil {
		t.Fatal(err)
	}
	waitSettled(ctx, t, a.client(), "r1", true) // parked, waiting for its answer
	out := wfdCLI(t, bin, "get", "r1", "--addr", b.addr)
	if !strings.Contains(out, "owner:") || !strings.Contains(out, " a\n") {
		t.Fatalf("wfd get r1 on b:\n%s\nwant owner a", out)
	}
	out = wfdCLI(t, bin, "replicas", "--addr", b.addr)
	listed := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			listed[f[0]] = f[1]
		}
	}
	if listed["a"] != a.addr || listed["b"] != b.addr {
		t.Fatalf("wfd replicas:\n%s\nwant a at %s and b at %s", out, a.addr, b.addr)
	}
	// Marked as forwarded already, b answers it itself (refused) rather
	// than forward it to a: r1 must stay parked for the takeover below.
	fctx, info := connect.NewClientContext(ctx)
	info.RequestHeader().Set("Wfd-Forwarded", "test")
	_, err := b.client().SendEvent(fctx, answer("r1"))
	if connect.CodeOf(err) != connect.CodeUnavailable || !strings.Contains(err.Error(), `"a"`) || !strings.Contains(err.Error(), a.addr) {
		t.Fatalf("answer on b while a owns r1: %v, want Unavailable naming a at %s", err, a.addr)
	}

	_ = a.cmd.Process.Signal(syscall.SIGKILL)
	<-a.exited
	// Refused until a's lease expires, then taken over by b.
	testwait.Until(t, func() error {
		_, err := b.client().SendEvent(ctx, answer("r1"))
		return err
	})
	waitCompleted(ctx, t, b.client(), "r1")
	testwait.For(t, "a's registration expires", func() bool {
		res, err := b.client().ListReplicas(ctx, &wfdv1.ListReplicasRequest{})
		return err == nil && len(res.GetReplicas()) == 1 && res.GetReplicas()[0].GetId() == "b"
	})
	b.stop(t)
}

// wfdCLI runs a wfd client command and returns its output.
func wfdCLI(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("wfd %v: %v\n%s", args, err, out)
	}
	return string(out)
}
