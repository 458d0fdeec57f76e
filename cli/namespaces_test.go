package cli_test

import (
	"strings"
	"testing"

	"github.com/wfd-dev/wfd/internal/pgtest"
)

// TestNamespacesCLI: serve --namespace serves more namespaces, each on a
// store of its own (bbolt files, then schemas of one PostgreSQL
// database); --namespace (or WFD_NAMESPACE) puts a command in one: the
// same id names two handlers, each namespace lists its own, and a
// namespace not served is not found.
func TestNamespacesCLI(t *testing.T) {
	for _, store := range []string{"bbolt", "postgres"} {
		t.Run(store, func(t *testing.T) {
			args := []string{"--namespace", "acme=1h", "--namespace", "beta"}
			if store == "postgres" {
				args = append(args, "--store", pgtest.NewDatabase(t))
			}
			addr := serve(t, args...)
			ok(t, "--addr", addr, "run", "approval", "--id", "same", "--attrs", `{"requester": "ada"}`)
			ok(t, "--addr", addr, "--namespace", "acme", "run", "approval", "--id", "same", "--attrs", `{"requester": "bob"}`)
			if out := ok(t, "--addr", addr, "get", "same", "--namespace", "acme"); !strings.Contains(out, "bob") || strings.Contains(out, "ada") {
				t.Fatalf("get same in acme:\n%s", out)
			}
			if out := ok(t, "--addr", addr, "get", "same"); !strings.Contains(out, "ada") {
				t.Fatalf("get same in default:\n%s", out)
			}
			if out := ok(t, "--addr", addr, "handlers", "--namespace", "beta"); strings.Contains(out, "same") {
				t.Fatalf("handlers in beta:\n%s", out)
			}
			ok(t, "--addr", addr, "--namespace", "acme", "send", "same", "approval", `{"approved": true}`, "--wait", "1m")
			if out := ok(t, "--addr", addr, "get", "same"); !strings.Contains(out, "running") {
				t.Fatalf("default's same after acme's answer:\n%s", out)
			}
			out := ok(t, "--addr", addr, "namespaces")
			for _, want := range []string{"acme", "1h0m0s", "beta", "default", "forever"} {
				if !strings.Contains(out, want) {
					t.Fatalf("namespaces lacks %q:\n%s", want, out)
				}
			}
			r := wfd(t, "--addr", addr, "--namespace", "nope", "get", "same")
			if r.code == 0 || !strings.Contains(r.stderr, `namespace "nope" is not served here`) {
				t.Fatalf("get in a namespace not served: exit %d, stderr %q", r.code, r.stderr)
			}
			r = wfd(t, "--addr", addr, "--namespace", "Not_One", "get", "same")
			if r.code != 2 || !strings.Contains(r.stderr, "--namespace") {
				t.Fatalf("a malformed --namespace: exit %d, stderr %q", r.code, r.stderr)
			}
		})
	}
	r := wfd(t, "serve", "--namespace", "default")
	if r.code != 2 || !strings.Contains(r.stderr, "always served") {
		t.Fatalf("serve --namespace default: exit %d, stderr %q", r.code, r.stderr)
	}
}
