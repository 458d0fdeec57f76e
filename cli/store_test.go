package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreCommand: the command line of wfd store check. (cmd/wfd's tests
// run it on sound, damaged and busy stores.)
func TestStoreCommand(t *testing.T) {
	none := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"listed in help", []string{"help"}, 0, "store check [--data DIR]", ""},
		{"help store", []string{"help", "store"}, 0, "env WFD_DATA", ""},
		{"no subcommand", []string{"store"}, 2, "", "Usage: wfd store check"},
		{"unknown subcommand", []string{"store", "fix"}, 2, "", `unknown subcommand "fix"`},
		{"no store", []string{"store", "check", "--data", none}, 1, "", "no store file at " + filepath.Join(none, "wfd.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := wfd(t, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stdout, tt.stdout) || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q and %q", r.code, r.stdout, r.stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

// TestStoreCheckSound: a store wfd serve made and closed checks clean.
func TestStoreCheckSound(t *testing.T) {
	dir := t.TempDir()
	if r := wfd(t, "store", "check", "--data", dir); r.code != 1 {
		t.Fatalf("check before serve: exit %d, want 1 (no store yet)", r.code)
	}
	t.Run("serve", func(t *testing.T) { serve(t, "--data", dir) }) // stops as the subtest ends
	out := ok(t, "store", "check", "--data", dir)
	if !strings.Contains(out, "no problems found") {
		t.Errorf("wfd store check:\n%s", out)
	}
}
