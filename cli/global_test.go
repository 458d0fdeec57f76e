package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// TestGlobalFlagsBeforeTheCommand: the client flags work before the
// command name as after it, over the environment and under the command's
// own flags.
func TestGlobalFlagsBeforeTheCommand(t *testing.T) {
	addr := serve(t)
	textList := regexp.MustCompile(`(?m)^approval +`)

	t.Run("--addr", func(t *testing.T) {
		if out := ok(t, "--addr", addr, "workflows"); !textList.MatchString(out) {
			t.Fatalf("wfd --addr A workflows:\n%s", out)
		}
	})
	t.Run("--json", func(t *testing.T) {
		out := ok(t, "--json", "--addr="+addr, "workflows")
		var w wfdv1.Workflow
		if err := protojson.Unmarshal([]byte(strings.Split(out, "\n")[0]), &w); err != nil || w.GetName() == "" {
			t.Fatalf("wfd --json workflows printed no protojson workflow (%v):\n%s", err, out)
		}
	})
	t.Run("--json before, --json=false after", func(t *testing.T) {
		if out := ok(t, "--json", "--addr", addr, "workflows", "--json=false"); !textList.MatchString(out) || strings.HasPrefix(out, "{") {
			t.Fatalf("the command's --json=false did not override the global --json:\n%s", out)
		}
	})
	t.Run("--addr after overrides --addr before", func(t *testing.T) {
		if out := ok(t, "--addr", "127.0.0.1:1", "workflows", "--addr", addr); !textList.MatchString(out) {
			t.Fatalf("wfd --addr BAD workflows --addr A:\n%s", out)
		}
	})
	t.Run("--addr before overrides WFD_ADDR", func(t *testing.T) {
		t.Setenv("WFD_ADDR", "127.0.0.1:1")
		if out := ok(t, "--addr", addr, "workflows"); !textList.MatchString(out) {
			t.Fatalf("wfd --addr A workflows with WFD_ADDR elsewhere:\n%s", out)
		}
	})
	t.Run("other commands", func(t *testing.T) {
		h := field(ok(t, "--addr", addr, "run", "echo", "--input", `{"x": 1}`))
		var got wfdv1.Handler
		if err := protojson.Unmarshal([]byte(ok(t, "--json", "--addr", addr, "get", h)), &got); err != nil || got.GetHandlerId() != h {
			t.Fatalf("wfd --json get %s: %v, %v", h, err, &got)
		}
		if out := ok(t, "--addr", addr, "--json", "handlers", "--workflow", "echo"); !strings.Contains(out, h) {
			t.Fatalf("wfd --json handlers does not list %s:\n%s", h, out)
		}
	})
}

// TestGlobalTLSFlagsBeforeTheCommand: --tls-ca and --token before the
// command reach a TLS server that wants a token.
func TestGlobalTLSFlagsBeforeTheCommand(t *testing.T) {
	f := writePKI(t)
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("tokens:\n  - {token: s3cret, subject: ada, roles: [reader, starter]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := serve(t, "--tls-cert", f.serverCert, "--tls-key", f.serverKey, "--auth-tokens", tokens)
	global := []string{"--addr", addr, "--tls-ca", f.ca, "--token", "s3cret"}
	h := field(ok(t, append(global, "run", "echo")...))
	if out := ok(t, append(global, "get", h)...); !strings.Contains(out, h) {
		t.Fatalf("wfd --tls-ca F --token T get %s:\n%s", h, out)
	}
	// Without the token the same call is refused: the global one was used.
	if r := wfd(t, "--addr", addr, "--tls-ca", f.ca, "get", h); r.code != 1 || !strings.Contains(r.stderr, "unauthenticated") {
		t.Fatalf("get without a token: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestGlobalFlagMistakes: a global flag the command does not take, or one
// that does not parse, is a usage error naming it.
func TestGlobalFlagMistakes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"serve's --addr is not the client's", []string{"--addr", "127.0.0.1:0", "serve"}, "serve does not take the global flag --addr"},
		{"store takes no client flag", []string{"--json", "store", "check"}, "store does not take the global flag --json"},
		{"completion takes no client flag", []string{"--token", "t", "completion", "bash"}, "completion does not take the global flag --token"},
		{"version takes --json only", []string{"--addr", "x:1", "version"}, "version does not take the global flag --addr"},
		{"bench has its own flags", []string{"--addr", "x:1", "bench"}, "bench does not take the global flag --addr"},
		{"not a global flag", []string{"--data", "d", "workflows"}, "flag provided but not defined: -data"},
		{"bad value", []string{"--timeout", "soon", "workflows"}, `invalid value "soon" for flag -timeout`},
		{"missing value", []string{"workflows", "--addr"}, "flag needs an argument: -addr"},
		{"global flag without a command", []string{"--json"}, "no command after --json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := wfd(t, tc.args...)
			if r.code != 2 || !strings.HasPrefix(r.stderr, "wfd: ") || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, tc.want)
			}
		})
	}
}
