package cli_test

import (
	"strings"
	"testing"
)

func TestUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"no command", nil, 2, "", "Usage: wfd <command>"},
		{"help", []string{"help"}, 0, "Usage: wfd <command>", ""},
		{"-h", []string{"-h"}, 0, "run WORKFLOW [--input JSON] [--event TYPE[=JSON]]... [--attrs JSON] [--id ID] [--follow [--internal] | --wait DURATION]", ""},
		{"--help", []string{"--help"}, 0, "handlers [--workflow W]", ""},
		{"help run", []string{"help", "run"}, 0, "--follow", ""},
		{"run -h", []string{"run", "-h"}, 0, "Usage: wfd run WORKFLOW", ""},
		{"serve --help", []string{"serve", "--help"}, 0, "env WFD_DATA", ""},
		{"serve --help ping", []string{"serve", "--help"}, 0, "--ping-timeout", ""},
		{"negative ping timeout", []string{"serve", "--ping-timeout", "-1s"}, 2, "", "--ping-timeout must not be negative"},
		{"serve --help body rate", []string{"serve", "--help"}, 0, "--min-body-rate", ""},
		{"negative body rate", []string{"serve", "--min-body-rate", "-1"}, 2, "", "--min-body-rate, --idle-conn-timeout and --ping-timeout must not be negative"},
		{"negative idle connection timeout", []string{"serve", "--idle-conn-timeout", "-1s"}, 2, "", "--idle-conn-timeout and --ping-timeout must not be negative"},
		{"help unknown", []string{"help", "nope"}, 2, "", `unknown command "nope"`},
		{"unknown command", []string{"nope"}, 2, "", "Run 'wfd help' for usage."},
		{"unknown flag", []string{"get", "x", "--nope"}, 2, "", "flag provided but not defined: -nope"},
		{"missing argument", []string{"run"}, 2, "", "Usage: wfd run WORKFLOW"},
		{"extra argument", []string{"get", "a", "b"}, 2, "", "wrong number of arguments"},
		{"send without type", []string{"send", "h"}, 2, "", "Usage: wfd send HANDLER TYPE [JSON]"},
		{"bad input", []string{"run", "echo", "--input", "[1]"}, 2, "", "--input is not a JSON object"},
		{"bad event data", []string{"send", "h", "t", "{"}, 2, "", "JSON is not a JSON object"},
		{"bad status", []string{"handlers", "--status", "running,done"}, 2, "", `unknown status "done"`},
		{"bad residency", []string{"handlers", "--residency", "away"}, 2, "", `"away" is not one of`},
		{"bad duration", []string{"handlers", "--idle-for", "soon"}, 2, "", "invalid value"},
		{"negative limit", []string{"handlers", "--limit", "-1"}, 2, "", "must not be negative"},
		{"bad after", []string{"stream", "h", "--after", "-1"}, 2, "", "invalid value"},
		{"empty addr", []string{"workflows", "--addr", ""}, 2, "", "--addr is empty"},
		{"help lists tasks", []string{"help"}, 0, "tasks [--status S,...] [--assignee A | --mine] [--workflow W] [--handler H] [--limit N]", ""},
		{"help lists complete", []string{"help"}, 0, "complete TASK JSON [--by NAME]", ""},
		{"help lists publish", []string{"help"}, 0, "publish KEY [JSON] [--handler H] [--id ID]", ""},
		{"help complete", []string{"help", "complete"}, 0, "env WFD_BY", ""},
		{"publish -h", []string{"publish", "-h"}, 0, "Usage: wfd publish KEY [JSON]", ""},
		{"bad task status", []string{"tasks", "--status", "pending,done"}, 2, "", `unknown task status "done"`},
		{"handler status for tasks", []string{"tasks", "--status", "running"}, 2, "", `unknown task status "running"`},
		{"negative task limit", []string{"tasks", "--limit", "-1"}, 2, "", "must not be negative"},
		{"tasks with an argument", []string{"tasks", "ada"}, 2, "", "Usage: wfd tasks [--status"},
		{"task without id", []string{"task"}, 2, "", "Usage: wfd task TASK"},
		{"complete without answer", []string{"complete", "t"}, 2, "", "Usage: wfd complete TASK JSON [--by NAME]"},
		{"complete with a bad answer", []string{"complete", "t", `{"approved": tru}`}, 2, "", "JSON is not a JSON object"},
		{"complete with an array", []string{"complete", "t", `[true]`}, 2, "", "JSON is not a JSON object"},
		{"publish without key", []string{"publish"}, 2, "", "Usage: wfd publish KEY"},
		{"publish with extra argument", []string{"publish", "k", "{}", "x"}, 2, "", "wrong number of arguments"},
		{"publish bad data", []string{"publish", "k", "{"}, 2, "", "JSON is not a JSON object"},
		{"help lists delete", []string{"help"}, 0, "delete HANDLER", ""},
		{"help lists events", []string{"help"}, 0, "events [KEY] [--since TIME|DURATION] [--handler H] [--limit N]", ""},
		{"delete without handler", []string{"delete"}, 2, "", "Usage: wfd delete HANDLER"},
		{"events with two keys", []string{"events", "a", "b"}, 2, "", "wrong number of arguments"},
		{"events bad since", []string{"events", "--since", "yesterday"}, 2, "", "--since \"yesterday\": want an RFC 3339 time"},
		{"events negative limit", []string{"events", "--limit", "-1"}, 2, "", "must not be negative"},
		{"serve --help retention", []string{"serve", "--help"}, 0, "env WFD_RETENTION", ""},
		{"negative retention", []string{"serve", "--retention", "-1s"}, 2, "", "--retention must not be negative"},
		{"gc min percent zero", []string{"serve", "--gc-min-percent", "0"}, 2, "", "--gc-min-percent must be between 1 and 1000"},
		{"gc min percent too high", []string{"serve", "--gc-min-percent", "1001"}, 2, "", "--gc-min-percent must be between 1 and 1000"},
		{"stats with an argument", []string{"stats", "now"}, 2, "", "wrong number of arguments"},
		{"help lists workers", []string{"help"}, 0, "list the connected step workers", ""},
		{"workers with an argument", []string{"workers", "x"}, 2, "", "wrong number of arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := wfd(t, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q, stderr %q", r.code, tt.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, tt.stdout) || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("stdout %q, stderr %q; want %q and %q", r.stdout, r.stderr, tt.stdout, tt.stderr)
			}
			if tt.code == 2 && !strings.HasPrefix(r.stderr, "wfd: ") && tt.args != nil {
				t.Errorf("usage error %q does not start with wfd:", r.stderr)
			}
		})
	}
}

// TestEnv: the environment gives defaults and flags override them.
func TestEnv(t *testing.T) {
	addr := serve(t)
	t.Setenv("WFD_ADDR", addr)
	if out := ok(t, "workflows"); !strings.Contains(out, "approval") {
		t.Errorf("workflows via WFD_ADDR:\n%s", out)
	}
	t.Setenv("WFD_ADDR", "127.0.0.1:1")
	if out := ok(t, "workflows", "--addr", addr); !strings.Contains(out, "approval") {
		t.Errorf("--addr over WFD_ADDR:\n%s", out)
	}
	t.Setenv("WFD_TIMEOUT", "soon")
	if r := wfd(t, "workflows", "--addr", addr); r.code != 2 || !strings.Contains(r.stderr, `WFD_TIMEOUT="soon"`) {
		t.Errorf("bad WFD_TIMEOUT: exit %d, stderr %q", r.code, r.stderr)
	}
}
