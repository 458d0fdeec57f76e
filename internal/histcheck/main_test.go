package histcheck_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/histcheck"
)

// The flags of a run (after -args), each also readable from the
// environment so that scripts can set them: WFD_HISTORY_SEED,
// WFD_HISTORY_DURATION, WFD_HISTORY_TTL, WFD_HISTORY_REPLICAS,
// WFD_HISTORY_CLIENTS, WFD_HISTORY_OUT, WFD_HISTORY_BIN. A flag given
// wins.
var (
	flagSeed     = flag.String("history.seed", "", "seed of every random choice (default: a random one, logged)")
	flagDuration = flag.Duration("history.duration", 0, "how long TestHistory makes faults (default 2m)")
	flagTTL      = flag.Duration("history.ttl", 0, "the replicas' --lease-ttl (default 2s)")
	flagReplicas = flag.Int("history.replicas", 0, "how many replicas (default 3)")
	flagClients  = flag.Int("history.clients", 0, "how many concurrent clients (default 8)")
	flagBin      = flag.String("history.bin", "", "a wfd binary to run instead of building this module's")
	flagStrict   = flag.Bool("history.strict", false, "fail the run when a takeover's p99 is over TTL + 2 s (default: only when -history.duration is given; WFD_HISTORY_STRICT)")
	flagOut      = flag.String("history.out", "", "directory for the history, final reads, report, summary and replica logs, one subdirectory per test (default: the test's artifact directory)")
)

// binDir holds the wfd binary built for the tests; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wfd-histcheck-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir) // a temporary build directory: nothing to report to
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// wfdBin builds wfd once per test binary; tests that need no process never
// pay for it.
func wfdBin(t *testing.T) string {
	t.Helper()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "history.bin" })
	if bin := os.Getenv("WFD_HISTORY_BIN"); bin != "" && !set {
		return bin
	}
	if *flagBin != "" {
		return *flagBin
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	buildOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		buildPath, buildErr = histcheck.Build(ctx, binDir)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// config is a run's configuration from the flags and the environment, over
// defaults.
func config(t *testing.T, def histcheck.Config) histcheck.Config {
	t.Helper()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	str := func(name, env string, v string) string {
		if set[name] {
			return v
		}
		return os.Getenv(env)
	}
	cfg := def
	if s := str("history.seed", "WFD_HISTORY_SEED", *flagSeed); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("seed %q: %v", s, err)
		}
		cfg.Seed = n
	}
	durations := []struct {
		flag, env string
		v         time.Duration
		into      *time.Duration
	}{
		{"history.duration", "WFD_HISTORY_DURATION", *flagDuration, &cfg.Duration},
		{"history.ttl", "WFD_HISTORY_TTL", *flagTTL, &cfg.TTL},
	}
	for _, d := range durations {
		switch {
		case set[d.flag]:
			*d.into = d.v
		case os.Getenv(d.env) != "":
			v, err := time.ParseDuration(os.Getenv(d.env))
			if err != nil {
				t.Fatalf("%s: %v", d.env, err)
			}
			*d.into = v
		}
	}
	ints := []struct {
		flag, env string
		v         int
		into      *int
	}{
		{"history.replicas", "WFD_HISTORY_REPLICAS", *flagReplicas, &cfg.Replicas},
		{"history.clients", "WFD_HISTORY_CLIENTS", *flagClients, &cfg.Clients},
	}
	for _, i := range ints {
		switch {
		case set[i.flag]:
			*i.into = i.v
		case os.Getenv(i.env) != "":
			v, err := strconv.Atoi(os.Getenv(i.env))
			if err != nil {
				t.Fatalf("%s: %v", i.env, err)
			}
			*i.into = v
		}
	}
	// A run by hand (a duration asked for) holds itself to the takeover
	// bound; the CI run and the scenario tests report it (they share a
	// machine that may be crowded).
	switch {
	case set["history.strict"]:
		cfg.Strict = *flagStrict
	case os.Getenv("WFD_HISTORY_STRICT") != "":
		cfg.Strict = os.Getenv("WFD_HISTORY_STRICT") != "0"
	default:
		cfg.Strict = set["history.duration"] || os.Getenv("WFD_HISTORY_DURATION") != ""
	}
	if o := str("history.out", "WFD_HISTORY_OUT", *flagOut); o != "" {
		cfg.Out = o + "/" + t.Name()
	}
	return cfg
}

// check fails t for whatever the run found, after logging its summary.
func check(t *testing.T, res *histcheck.Result) {
	t.Helper()
	t.Log("\n" + res.Summary())
	for _, k := range histcheck.Kinds {
		if n := res.Report.Count(k); n > 0 {
			t.Errorf("%d handlers %s", n, k)
		}
	}
	for _, s := range res.Broken {
		t.Error(s)
	}
	for _, s := range res.Late {
		t.Log("over the bound (reported, not failed: -history.strict): " + s)
	}
	for _, c := range res.Crashes {
		t.Error("replica crashed: " + c)
	}
	t.Logf("history, final reads, report and replica logs in %s (kept with -history.out or go test -artifacts)", res.Config.Out)
}
