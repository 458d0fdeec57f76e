package histcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Config is one run.
type Config struct {
	Bin      string        // the wfd binary (Build)
	Seed     uint64        // every random choice of the clients and the nemesis
	Duration time.Duration // how long the nemesis makes random faults
	TTL      time.Duration // --lease-ttl (default 2s)
	Replicas int           // default 3
	Clients  int           // default 8
	// Plan, when set, is the nemesis's fixed schedule instead of random
	// faults for Duration.
	Plan  []Step
	Sizes Sizes
	// Settle bounds the wait, after healing, for every answered handler
	// and every expense handler to finish (default 30s + 5 TTLs).
	Settle time.Duration
	// Out is where the history, the final reads, the report, the summary
	// and the replica logs are written (default t.ArtifactDir(): kept with
	// go test -artifacts -outputdir DIR).
	Out string
	Log *slog.Logger
	// Strict holds the run to the takeover bound (TTL + 2 s) too: a p99
	// over it fails the run instead of being reported. A run by hand on
	// a machine of its own sets it; the short CI run, on a machine that
	// may be crowded, reports it (a slow machine must not fail a test).
	Strict bool
}

// Result is what a run found.
type Result struct {
	Config    Config
	Elapsed   time.Duration
	Data      Data
	Finals    map[string]Final
	Report    Report
	Actions   []Action
	Takeovers []Takeover
	Bound     time.Duration
	// Broken lists what the takeovers broke that fails the run (a
	// pause that blocked its handlers; with Strict, the bound too), Late
	// the bounds broken that it only reports; Crashes the replicas that
	// exited by themselves; Unsettled how many handlers had not finished
	// when Settle ran out.
	Broken    []string
	Late      []string
	Crashes   []string
	Unsettled int
	// Errors counts workload calls that failed for good.
	Errors int64
	// Causes are the causes of internal errors, by error id, from the
	// replicas' logs.
	Causes map[string]string
}

// OK says whether the run found nothing wrong.
func (r *Result) OK() bool {
	return len(r.Report.Violations) == 0 && len(r.Broken) == 0 && len(r.Crashes) == 0
}

// Run starts a cluster, runs the workload and the nemesis, heals, settles,
// reads every handler back and checks the history.
func Run(t testing.TB, cfg Config) *Result {
	t.Helper()
	if cfg.TTL == 0 {
		cfg.TTL = 2 * time.Second
	}
	if cfg.Settle == 0 {
		cfg.Settle = 30*time.Second + 5*cfg.TTL
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	dir := cfg.Out
	if dir == "" {
		// Removed after the test unless go test runs with -artifacts.
		dir = t.ArtifactDir()
		cfg.Out = dir
	} else {
		// A directory of its own per run: the logs are appended to.
		_ = os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := StartCluster(t, ClusterConfig{Bin: cfg.Bin, Replicas: cfg.Replicas, TTL: cfg.TTL, Dir: dir})
	begin := time.Now()
	res := &Result{Config: cfg, Bound: cfg.TTL + 2*time.Second}
	h := NewHistory()
	root := rand.New(rand.NewPCG(cfg.Seed, 0))
	w := NewWorkload(c, h, WorkloadConfig{Clients: cfg.Clients, Seed: root.Uint64()})
	nem := NewNemesis(c, h, root.Uint64(), cfg.Sizes, cfg.Log)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wctx, stopLoad := context.WithCancel(ctx)
	var load sync.WaitGroup
	load.Go(func() { w.Run(wctx) })
	if cfg.Plan != nil {
		for _, st := range cfg.Plan {
			nem.Do(ctx, st)
		}
	} else {
		nem.Random(ctx, begin.Add(cfg.Duration))
	}
	res.Crashes = c.Crashes()
	stopLoad()
	load.Wait()
	if err := c.Heal(ctx); err != nil {
		t.Errorf("healing: %v", err)
	}
	res.Unsettled = settle(ctx, c, h, cfg.Settle, root.Uint64())
	ids := h.Handlers()
	res.Finals = ReadFinals(ctx, c, h, ids, 8, root.Uint64())
	res.Data = h.Data()
	res.Report = Check(res.Data, res.Finals)
	res.Actions, res.Takeovers = nem.Actions(), nem.Takeovers()
	res.Broken, res.Late = CheckTakeovers(res.Takeovers, res.Bound)
	if cfg.Strict {
		res.Broken, res.Late = append(res.Broken, res.Late...), nil
	}
	res.Crashes = append(res.Crashes, c.Crashes()...)
	res.Errors = w.Errors.Load()
	res.Causes = c.Causes()
	res.Elapsed = time.Since(begin)
	if err := res.write(dir); err != nil {
		t.Error(err)
	}
	return res
}

// settle waits until every handler that must finish has (an acknowledged
// answer, an acknowledged expense start), or bound passes; it returns how
// many had not.
func settle(ctx context.Context, c *Cluster, h *History, bound time.Duration, seed uint64) int {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var left []string
	for _, id := range h.Handlers() {
		s := h.Spec(id)
		if s.Workflow == Expense && h.Acked(OpStart, id) || s.Workflow == Approval && h.Acked(OpAnswer, id) {
			left = append(left, id)
		}
	}
	// A handler a defect left running never finishes: once none has
	// finished for this long (well past any deadline, takeover or
	// recovery), waiting longer only delays the report.
	stuck := 10*time.Second + 3*c.TTL
	progress := time.Now()
	for len(left) > 0 && ctx.Err() == nil && time.Since(progress) < stuck {
		still := unfinished(ctx, c, h, left, seed)
		if len(still) < len(left) {
			progress = time.Now()
		}
		left = still
		if len(left) > 0 {
			sleep(ctx, 250*time.Millisecond)
		}
	}
	return len(left)
}

// settleReaders is how many callers read the handlers at once while the
// run settles: a long run leaves tens of thousands to look at.
const settleReaders = 16

// unfinished returns those of ids that are not finished (or could not be
// read), read by settleReaders callers at once.
func unfinished(ctx context.Context, c *Cluster, h *History, ids []string, seed uint64) []string {
	var (
		mu    sync.Mutex
		still []string
		wg    sync.WaitGroup
	)
	for w := range settleReaders {
		wg.Go(func() {
			k := c.Caller(h, rand.New(rand.NewPCG(seed, 300+uint64(w))), 3*time.Second)
			for i := w; i < len(ids); i += settleReaders {
				if hd, err := k.Get(ctx, ids[i]); err != nil || !terminal(hd.GetStatus()) {
					mu.Lock()
					still = append(still, ids[i])
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return still
}

// write saves the run's findings in dir.
func (r *Result) write(dir string) error {
	if err := r.Data.WriteFile(filepath.Join(dir, "history.json")); err != nil {
		return err
	}
	for name, v := range map[string]any{"finals.json": r.Finals, "report.json": r.Report,
		"nemesis.json": struct {
			Actions   []Action
			Takeovers []Takeover
		}{r.Actions, r.Takeovers}} {
		b, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			return fmt.Errorf("histcheck: encode %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("histcheck: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.txt"), []byte(r.Summary()), 0o644); err != nil {
		return fmt.Errorf("histcheck: %w", err)
	}
	return nil
}

// testWriter sends log lines to t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p[:len(p)-min(1, len(p))]))
	return len(p), nil
}
