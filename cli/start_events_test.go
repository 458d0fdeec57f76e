package cli_test

import (
	"strings"
	"testing"
)

// TestRunAndSendWithStart: run --event delivers events with the start;
// send --start starts a missing handler with the event, then delivers to
// it; --key makes a retry deliver nothing again.
func TestRunAndSendWithStart(t *testing.T) {
	addr := serve(t)
	out := ok(t, "run", "notebook", "--id", "nb-cli", "--event", `note={"text": "a"}`, "--event", `note={"text": "b", "last": true}`, "--wait", "1m", "--json", "--addr", addr)
	if !strings.Contains(out, `"notes":2`) && !strings.Contains(out, `"notes": 2`) {
		t.Fatalf("run --event: %s", out)
	}

	ok(t, "send", "nb-cli2", "note", `{"text": "a"}`, "--start", "notebook", "--key", "k1", "--addr", addr)
	ok(t, "send", "nb-cli2", "note", `{"text": "a"}`, "--start", "notebook", "--key", "k1", "--addr", addr) // a retry
	out = ok(t, "send", "nb-cli2", "note", `{"text": "b", "last": true}`, "--start", "notebook", "--wait", "1m", "--json", "--addr", addr)
	if !strings.Contains(out, `"notes":2`) && !strings.Contains(out, `"notes": 2`) {
		t.Fatalf("send --start: %s", out)
	}

	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"event without a type", []string{"run", "notebook", "--event", "={}"}, "wfd: invalid value"},
		{"event data not an object", []string{"run", "notebook", "--event", "note=[1]"}, "wfd: invalid value"},
		{"event the workflow does not take", []string{"run", "notebook", "--event", "answer"}, "wfd: invalid_argument: "},
		{"input without start", []string{"send", "x", "note", "--input", "{}"}, "wfd: --input and --version need --start"},
		{"start of another workflow", []string{"send", "nb-cli", "note", "--start", "approval"}, "wfd: already_exists: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := wfd(t, append(tc.args, "--addr", addr)...)
			if r.code == 0 || !strings.HasPrefix(r.stderr, tc.stderr) {
				t.Fatalf("exit %d, stderr %q; want stderr %q...", r.code, r.stderr, tc.stderr)
			}
		})
	}
}
