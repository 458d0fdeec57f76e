package flow_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// goListDeps returns the packages pkg depends on, itself included
// (go list -deps), or skips the test without a go command.
func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the dependencies with")
	}
	out, err := exec.Command(goCmd, "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// matching returns the packages of pkgs that re matches.
func matching(pkgs []string, re *regexp.Regexp) []string {
	var bad []string
	for _, p := range pkgs {
		if re.MatchString(p) {
			bad = append(bad, p)
		}
	}
	return bad
}

// TestDependencies: flow is the step author's API and nothing more. The
// engine imports it, so it cannot import the engine; and it has no use
// for anything that serves, calls or stores (grpc, net/http, connect,
// the public API's generated code, the server, the store, the clients).
func TestDependencies(t *testing.T) {
	forbidden := regexp.MustCompile(`^(google\.golang\.org/grpc|net/http|connectrpc\.com|` +
		`github\.com/wfd-dev/wfd/(engine|gen|server|persistence|clients|cli)(/|$))`)
	if bad := matching(goListDeps(t, "."), forbidden); len(bad) > 0 {
		t.Fatalf("flow depends on:\n  %s", strings.Join(bad, "\n  "))
	}
}

// TestWorkerWithoutEngine: a Go worker process (clients/go/worker) gets
// the step author's API from flow, not from the engine, which it never
// runs: the server executes its steps' calls on the engine.
func TestWorkerWithoutEngine(t *testing.T) {
	engine := regexp.MustCompile(`^github\.com/wfd-dev/wfd/engine(/|$)`)
	if bad := matching(goListDeps(t, "../clients/go/worker"), engine); len(bad) > 0 {
		t.Fatalf("clients/go/worker depends on:\n  %s", strings.Join(bad, "\n  "))
	}
}
