package cli_test

import (
	"strings"
	"testing"
	"time"
)

// TestSchedulesCommand: create, show, pause, resume, trigger, backfill
// and delete a schedule from the command line; bad input is a clear
// error.
func TestSchedulesCommand(t *testing.T) {
	addr := serve(t)
	out := ok(t, "schedules", "create", "nightly", "echo", "--cron", "0 3 * * *", "--tz", "Europe/Paris", "--input", `{"x": 1}`, "--overlap", "allow", "--addr", addr)
	for _, want := range []string{"nightly", `cron "0 3 * * *" Europe/Paris`, "overlap:", "allow", "next ticks:"} {
		if !strings.Contains(out, want) {
			t.Fatalf("create printed %q, want %q in it", out, want)
		}
	}
	if out := ok(t, "schedules", "--addr", addr); !strings.Contains(out, "nightly") || !strings.Contains(out, "active") {
		t.Fatalf("list: %s", out)
	}
	if out := ok(t, "schedules", "pause", "nightly", "--note", "freeze", "--addr", addr); !strings.Contains(out, "paused") || !strings.Contains(out, "freeze") {
		t.Fatalf("pause: %s", out)
	}
	ok(t, "schedules", "resume", "nightly", "--addr", addr)
	if out := ok(t, "schedules", "update", "nightly", "--every", "1h", "--addr", addr); !strings.Contains(out, "every 1h0m0s") {
		t.Fatalf("update: %s", out)
	}
	out = ok(t, "schedules", "trigger", "nightly", "--addr", addr)
	if !strings.HasPrefix(out, "started sched:nightly:trigger:") {
		t.Fatalf("trigger: %s", out)
	}
	now := time.Now().UTC()
	out = ok(t, "schedules", "backfill", "nightly", "--from", now.Add(-3*time.Hour).Format(time.RFC3339), "--to", now.Add(-time.Hour).Format(time.RFC3339), "--addr", addr)
	if strings.Count(out, "started sched:nightly:") < 2 {
		t.Fatalf("backfill: %s", out)
	}
	if out := ok(t, "schedules", "nightly", "--addr", addr); !strings.Contains(out, "recent:") || !strings.Contains(out, "started") {
		t.Fatalf("show: %s", out)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"bad cron", []string{"schedules", "create", "x", "echo", "--cron", "0 25 * * *"}, "wfd: invalid_argument: cron field 2 (hour)"},
		{"both specs", []string{"schedules", "create", "x", "echo", "--cron", "@daily", "--every", "1h"}, "wfd: --cron and --every exclude each other"},
		{"unknown workflow", []string{"schedules", "create", "x", "nope", "--every", "1h"}, "wfd: not_found: "},
		{"bad overlap", []string{"schedules", "create", "x", "echo", "--every", "1h", "--overlap", "sometimes"}, "wfd: --overlap"},
		{"flag without action", []string{"schedules", "--cron", "@daily"}, "wfd: schedules: --cron need an action"},
		{"unknown schedule", []string{"schedules", "nope"}, "wfd: not_found: "},
		{"backfill without range", []string{"schedules", "backfill", "nightly"}, "wfd: schedules backfill needs --from and --to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := wfd(t, append(tc.args, "--addr", addr)...)
			if r.code == 0 || !strings.HasPrefix(r.stderr, tc.stderr) {
				t.Fatalf("exit %d, stderr %q; want %q...", r.code, r.stderr, tc.stderr)
			}
		})
	}
	if out := ok(t, "schedules", "delete", "nightly", "--addr", addr); !strings.Contains(out, "deleted schedule nightly") {
		t.Fatalf("delete: %s", out)
	}
}
