package gcpolicy_test

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/gcpolicy"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// gcPercent reads GOGC without changing it.
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(int64(s[0].Value.Uint64()))
}

// waitPercent collects until the tuner has set want (its finalizer runs
// on the runtime's finalizer goroutine, shortly after a collection).
func waitPercent(t *testing.T, tu *gcpolicy.Tuner, want int) {
	t.Helper()
	deadline := time.Now().Add(testwait.Timeout)
	for tu.Percent() != want || gcPercent() != want {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC: tuner says %d, runtime %d; want %d", tu.Percent(), gcPercent(), want)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

func TestTunerFollowsLiveHeap(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set in the environment, so the tuner stays off")
	}
	// Not Go's default, so that Stop must restore what it found.
	before := 250
	orig := debug.SetGCPercent(before)
	t.Cleanup(func() { debug.SetGCPercent(orig) })
	const headroom = 64 << 20
	tu := gcpolicy.Start(gcpolicy.Options{Headroom: headroom, MinPercent: 20, MaxPercent: 800})
	if tu == nil {
		t.Fatal("Start returned nil without GOGC in the environment")
	}
	// A small live heap: 64 MiB of headroom is more than 8 times it.
	waitPercent(t, tu, 800)

	// A live heap of about 512 MiB: 64 MiB is 12.5 %, below MinPercent.
	big := make([][]byte, 512)
	for i := range big {
		big[i] = make([]byte, 1<<20)
	}
	waitPercent(t, tu, 20)

	// About 128 MiB live: GOGC near 50.
	clear(big[128:]) // the backing array would keep them alive
	big = big[:128]
	runtime.GC()
	deadline := time.Now().Add(testwait.Timeout)
	for p := tu.Percent(); p < 40 || p > 50; p = tu.Percent() {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC with ~128 MiB live and 64 MiB headroom = %d, want 40..50", p)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(big)

	tu.Stop()
	if got := gcPercent(); got != before {
		t.Errorf("GOGC after Stop = %d, want the %d from before Start", got, before)
	}
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	runtime.GC()
	if got := gcPercent(); got != before {
		t.Errorf("GOGC after Stop and collections = %d, want %d: the tuner still runs", got, before)
	}
}

func TestTunerDefersToGOGC(t *testing.T) {
	t.Setenv("GOGC", "150")
	if tu := gcpolicy.Start(gcpolicy.Options{}); tu != nil {
		tu.Stop()
		t.Fatal("Start tuned GOGC although the GOGC environment variable is set")
	}
}
