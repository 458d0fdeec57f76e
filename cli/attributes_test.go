package cli_test

import (
	"strings"
	"testing"
)

// TestSearchAttributesCLI: run --attrs gives a handler search attributes,
// get shows them, handlers --where filters and orders by them, workflows
// lists the declarations, and a bad query or attribute is a usage of the
// API's INVALID_ARGUMENT, naming what is wrong.
func TestSearchAttributesCLI(t *testing.T) {
	addr := serve(t)
	for _, a := range []struct{ id, attrs string }{
		{"a-1", `{"requester": "ada", "priority": 1}`},
		{"a-2", `{"requester": "ada", "priority": 3}`},
		{"a-3", `{"requester": "bob", "priority": 4}`},
	} {
		ok(t, "--addr", addr, "run", "approval", "--id", a.id, "--attrs", a.attrs)
	}
	if out := ok(t, "--addr", addr, "get", "a-2"); !strings.Contains(out, `"requester":"ada"`) && !strings.Contains(out, `"requester": "ada"`) {
		t.Fatalf("get shows no attributes:\n%s", out)
	}
	out := ok(t, "--addr", addr, "handlers", "--workflow", "approval", "--where", `requester = "ada" order by priority desc`)
	if i, j := strings.Index(out, "a-2"), strings.Index(out, "a-1"); i < 0 || j < 0 || i > j || strings.Contains(out, "a-3") {
		t.Fatalf("handlers --where listed:\n%s", out)
	}
	if out := ok(t, "--addr", addr, "workflows", "approval"); !strings.Contains(out, "priority int, requester string") {
		t.Fatalf("workflows approval shows no search attributes:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"handlers", "--workflow", "approval", "--where", `requester =`}, "position 12"},
		{[]string{"handlers", "--workflow", "approval", "--where", `requester != "ada"`}, "index"},
		{[]string{"run", "approval", "--attrs", `{"priority": "high"}`}, `"priority"`},
	} {
		r := wfd(t, append([]string{"--addr", addr}, tc.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, "invalid_argument") || !strings.Contains(r.stderr, tc.want) {
			t.Fatalf("%v: exit %d, stderr %q; want invalid_argument naming %s", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
