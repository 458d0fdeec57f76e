package histcheck_test

import (
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/histcheck"
)

// scenario runs a fixed plan (real replicas, real PostgreSQL) under a
// light background load and fails t on any violation or broken bound.
func scenario(t *testing.T, plan []histcheck.Step, sizes histcheck.Sizes) {
	t.Helper()
	if testing.Short() {
		t.Skip("real replicas and PostgreSQL: not in -short mode")
	}
	cfg := config(t, histcheck.Config{Seed: 23, TTL: 2 * time.Second, Clients: 4})
	cfg.Plan, cfg.Sizes, cfg.Bin = plan, sizes, wfdBin(t)
	t.Logf("seed %d (-history.seed replays another)", cfg.Seed)
	check(t, histcheck.Run(t, cfg))
}

// TestRestartDuringTakeover is issue 23's point 1, twice: r1 holds 300
// idle approval handlers; it is SIGKILLed and restarted as soon as another
// replica has served one of them, while the rest are answered through r2
// and r3. Every acknowledged answer must stay: no handler whose records
// say completed while GetHandler says running.
func TestRestartDuringTakeover(t *testing.T) {
	step := histcheck.Step{Schedule: histcheck.ScheduleRestartDuringTakeover, Victim: "r1"}
	scenario(t, []histcheck.Step{step, step}, histcheck.Sizes{Takeover: 300})
}

// TestTimersFireOnce is point 2, four times: 200 expense handlers with
// 2-4 s deadlines on r1, SIGKILLed about a second after they start and
// restarted as soon as another replica has fired one of their timers, or
// (every other round) as soon as its leases have expired, then stalled
// for a moment once its start-up recovery has read: each completes
// {"expired": true} once, with nothing after.
func TestTimersFireOnce(t *testing.T) {
	step := histcheck.Step{Schedule: histcheck.ScheduleTimers, Victim: "r1"}
	scenario(t, []histcheck.Step{step, step, step, step}, histcheck.Sizes{Timers: 200})
}

// TestPausedOwnerTakeover is point 3, twice: r1, owner of 30 idle
// handlers, is SIGSTOPped beyond the TTL in the middle of a commit (of
// answers sent to it, its lease rows locked) while they are answered
// through r2 and r3: each is served elsewhere while r1 is still stopped
// (its locks held them until it was continued), and nothing r1 does when
// it wakes takes effect. How long that took against TTL + 2 s is logged
// (-history.strict fails on it).
func TestPausedOwnerTakeover(t *testing.T) {
	step := histcheck.Step{Schedule: histcheck.SchedulePausedOwner, Victim: "r1"}
	scenario(t, []histcheck.Step{step, step}, histcheck.Sizes{PausedOwner: 30})
}
