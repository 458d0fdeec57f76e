package cli_test

import (
	"encoding/json"
	"regexp"
	"runtime"
	"testing"
)

// TestVersion: `wfd version` and `wfd --version` print the module version,
// the VCS fields and the Go version; --json (after or before) one object.
func TestVersion(t *testing.T) {
	text := ok(t, "version")
	matchLines(t, text, []string{`^version: +\S+`, `^module: +github\.com/wfd-dev/wfd$`, `^revision: +\S+`, `^time: +\S+`,
		`^go: +` + regexp.QuoteMeta(runtime.Version()) + ` ` + runtime.GOOS + `/` + runtime.GOARCH + `$`})
	if out := ok(t, "--version"); out != text {
		t.Errorf("wfd --version printed\n%s\nwfd version printed\n%s", out, text)
	}
	for _, args := range [][]string{{"version", "--json"}, {"--json", "version"}, {"--json", "--version"}} {
		out := ok(t, args...)
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("wfd %v: %v\n%s", args, err, out)
		}
		for _, k := range []string{"module", "version", "revision", "time", "modified", "go", "platform"} {
			if _, found := v[k]; !found {
				t.Errorf("wfd %v: no %q in %s", args, k, out)
			}
		}
		if v["go"] != runtime.Version() || v["module"] != "github.com/wfd-dev/wfd" || v["version"] == "" {
			t.Errorf("wfd %v: %s", args, out)
		}
	}
	if r := wfd(t, "version", "now"); r.code != 2 {
		t.Errorf("wfd version now: exit %d, want 2", r.code)
	}
}
