package cli_test

import (
	"strings"
	"testing"
)

// TestServeLimits: the limit flags of wfd serve reach the server, and the
// example workflows refuse inputs that would make it allocate without
// bound (batch {"n": 1e9} used to end in "fatal error: out of memory").
func TestServeLimits(t *testing.T) {
	addr := serve(t, "--max-payload-bytes", "128", "--max-children", "2")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "batch", "--input", `{"n": 1e9}`}, `at '/n': maximum: got 1e+09, want <= 1000`},
		{[]string{"run", "echo", "--input", `{"s": "` + strings.Repeat("x", 200) + `"}`}, "over the limit of 128"},
	} {
		r := wfd(t, append(c.args, "--addr", addr)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("wfd %s: exit %d, stderr %q; want a failure with %q", strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}
	}
	if r := wfd(t, "run", "batch", "--input", `{"n": 3}`, "--follow", "--addr", addr); r.code != 1 || !strings.Contains(r.stdout, "has started 2 children, the limit") {
		t.Fatalf("batch of 3 with --max-children 2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := wfd(t, "serve", "--max-store-bytes", "0"); r.code != 2 || !strings.Contains(r.stderr, "--max-store-bytes must be positive") {
		t.Fatalf("serve --max-store-bytes 0: exit %d, %q", r.code, r.stderr)
	}
}
