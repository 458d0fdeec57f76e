package bench

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/testwait"
)

func TestParseFlagsRelease(t *testing.T) {
	for _, tc := range []struct {
		args            []string
		mode            string
		n, c, rehydrate int
	}{
		{nil, modePhases, 2000, 32, 1000},
		{[]string{"--mode", "release"}, modeRelease, 100000, 32, 5000},
		{[]string{"--mode", "release", "-n", "30", "-c", "4"}, modeRelease, 30, 4, 15},
		{[]string{"--mode", "release", "-n", "3000", "--rehydrate", "2000"}, modeRelease, 3000, 32, 1500},
	} {
		cfg, err := parseFlags(tc.args, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if cfg.Mode != tc.mode || cfg.N != tc.n || cfg.C != tc.c || cfg.Rehydrate != tc.rehydrate {
			t.Errorf("%q: mode %s n %d c %d rehydrate %d; want %s %d %d %d", tc.args, cfg.Mode, cfg.N, cfg.C, cfg.Rehydrate, tc.mode, tc.n, tc.c, tc.rehydrate)
		}
		if tc.mode == modeRelease && (cfg.Settle != 5*time.Second || !cfg.ServerGC) {
			t.Errorf("%q: settle %v, server-gc %v", tc.args, cfg.Settle, cfg.ServerGC)
		}
	}
}

func TestMachineCPU(t *testing.T) {
	steal, total, err := machineCPU()
	if runtime.GOOS != "linux" {
		if err == nil {
			t.Fatal("machineCPU without /proc/stat: no error")
		}
		return
	}
	if err != nil || total == 0 || steal > total {
		t.Fatalf("machineCPU: steal %d of %d ticks, %v", steal, total, err)
	}
	// The counters move with the clock (USER_HZ=100: a tick every 10 ms).
	testwait.Until(t, func() error {
		_, total2, err := machineCPU()
		if err != nil {
			t.Fatal(err)
		}
		if total2 <= total {
			return fmt.Errorf("machineCPU: %d ticks, then %d", total, total2)
		}
		return nil
	})
}

// TestParseFlagsStore checks --store: it reaches the started server, and
// is refused where it cannot apply.
func TestParseFlagsStore(t *testing.T) {
	const url = "postgres://wfd@127.0.0.1:5432/bench"
	cfg, err := parseFlags([]string{"--store", url}, io.Discard)
	if err != nil || cfg.Store != url {
		t.Fatalf("--store %s: %+v, %v", url, cfg.Store, err)
	}
	for _, args := range [][]string{
		{"--store", url, "--addr", "127.0.0.1:7233"},
		{"--store", url, "--mode", "release"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// TestParseFlagsReplicas checks --replicas and --compare-stores: their
// values, and the combinations they refuse.
func TestParseFlagsReplicas(t *testing.T) {
	const url = "postgres://wfd@127.0.0.1:5432/bench"
	cfg, err := parseFlags([]string{"--store", url, "--replicas", "3"}, io.Discard)
	if err != nil || cfg.Replicas != 3 {
		t.Fatalf("--replicas 3: %d, %v", cfg.Replicas, err)
	}
	cfg, err = parseFlags([]string{"--store", url, "--replicas", "3", "--route", "owner"}, io.Discard)
	if err != nil || cfg.Route != "owner" {
		t.Fatalf("--route owner: %q, %v", cfg.Route, err)
	}
	cfg, err = parseFlags([]string{"--compare-stores", url}, io.Discard)
	if err != nil || cfg.Compare != url || cfg.Route != "spread" || !slices.Equal(cfg.CompareReplicas, []int{0, 1, 3}) || cfg.Rounds != 1 {
		t.Fatalf("--compare-stores: %+v, %v", cfg, err)
	}
	cfg, err = parseFlags([]string{"--compare-stores", url, "--compare-replicas", "1, 5", "--rounds", "3"}, io.Discard)
	if err != nil || !slices.Equal(cfg.CompareReplicas, []int{1, 5}) || cfg.Rounds != 3 {
		t.Fatalf("--compare-replicas 1,5 --rounds 3: %+v, %v", cfg, err)
	}
	for _, args := range [][]string{
		{"--replicas", "3"},
		{"--replicas", "-1", "--store", url},
		{"--route", "owner"},
		{"--replicas", "2", "--store", url, "--route", "nearest"},
		{"--replicas", "2", "--store", url, "--tls"},
		{"--replicas", "2", "--store", url, "--worker", "go"},
		{"--replicas", "2", "--store", url, "--mode", "release"},
		{"--compare-stores", url, "--store", url},
		{"--compare-stores", url, "--replicas", "2"},
		{"--compare-stores", url, "--addr", "127.0.0.1:7233"},
		{"--compare-stores", url, "--compare-replicas", "x"},
		{"--compare-stores", url, "--rounds", "0"},
		{"--rounds", "2"},
		{"--compare-replicas", "3"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

func TestParseFlagsUnread(t *testing.T) {
	cfg, err := parseFlags([]string{"--mode", "unread"}, io.Discard)
	if err != nil || cfg.Mode != modeUnread || cfg.Streams != 1000 || cfg.Hold != 40*time.Second {
		t.Fatalf("--mode unread: %+v, %v; want 1000 streams held 40s", cfg, err)
	}
	for _, args := range [][]string{
		{"--streams", "10"},
		{"--hold", "1s"},
		{"--mode", "unread", "--streams", "0"},
		{"--mode", "unread", "--addr", "127.0.0.1:1"},
		{"--mode", "unread", "--store", "postgres://x"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

func TestParseFlagsNamespace(t *testing.T) {
	cfg, err := parseFlags([]string{"--namespace", "bench"}, io.Discard)
	if err != nil || cfg.Namespace != "bench" {
		t.Fatalf("--namespace bench: %+v, %v", cfg.Namespace, err)
	}
	for _, args := range [][]string{
		{"--namespace", "Bench"},
		{"--namespace", "default"},
		{"--namespace", "bench", "--mode", "release"},
		{"--namespace", "bench", "--tls"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
