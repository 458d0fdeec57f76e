package histcheck_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/histcheck"
)

// TestHistory runs replicas under clients and random faults, then checks
// the history. Without flags it is the CI run: a random seed (logged, so
// that a failure can be replayed), faults for 2 minutes with a 2 s lease
// TTL, every schedule at least once, smaller named schedules. With
// -history.duration longer than that, the named schedules take the issue's
// sizes (100-300 handlers restarted during takeover, ...).
func TestHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("real replicas and PostgreSQL for minutes: not in -short mode")
	}
	cfg := config(t, histcheck.Config{Seed: rand.Uint64(), Duration: 2 * time.Minute, TTL: 2 * time.Second})
	if cfg.Duration <= 2*time.Minute {
		cfg.Sizes = histcheck.Sizes{Takeover: 100, Timers: 60, PausedOwner: 20}
	}
	cfg.Bin = wfdBin(t)
	t.Logf("seed %d; replay with: go test ./internal/histcheck -run 'TestHistory$' -v -timeout 0 -args -history.seed=%d -history.duration=%v -history.ttl=%v",
		cfg.Seed, cfg.Seed, cfg.Duration, cfg.TTL)
	check(t, histcheck.Run(t, cfg))
}
