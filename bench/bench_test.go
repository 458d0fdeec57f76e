package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/bench"
	"github.com/wfd-dev/wfd/internal/pgtest"
)

var (
	buildOnce sync.Once
	buildDir  string // removed by TestMain
	wfdBin    string
	buildErr  error
	buildOut  []byte
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m) // a PostgreSQL cluster for --store, --replicas and --compare-stores
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// buildWfd builds the wfd binary once per test process.
func buildWfd(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds wfd and runs a server: not in -short mode")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build wfd with")
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "wfd-bench-test-")
		if buildErr != nil {
			return
		}
		wfdBin = filepath.Join(buildDir, "wfd")
		buildOut, buildErr = exec.Command(goBin, "build", "-o", wfdBin, "github.com/wfd-dev/wfd/cmd/wfd").CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build ./cmd/wfd: %v\n%s", buildErr, buildOut)
	}
	return wfdBin
}

func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code = bench.Main(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestBenchTable(t *testing.T) {
	bin := buildWfd(t)
	code, out, errs := runMain(t, "-n", "20", "-c", "4", "--echo", "20", "--warmup", "2", "--wfd", bin)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	t.Logf("\n%s", out)
	if !strings.Contains(out, " client=grpc-go protocol=grpc ") {
		t.Errorf("the header does not name the default client and protocol:\n%s", out)
	}
	rows := map[string]string{
		"echo":   "RunWorkflow → HandlerFinished",
		"park":   "RunWorkflow → IdleChanged{idle}",
		"resume": "SendEvent → HandlerFinished",
	}
	for phase, what := range rows {
		var line string
		for l := range strings.Lines(out) {
			if f := strings.Fields(l); len(f) > 0 && f[0] == phase {
				line = l
				break
			}
		}
		if line == "" {
			t.Fatalf("no %s row in\n%s", phase, out)
		}
		if !strings.Contains(line, what) {
			t.Errorf("%s row %q does not say %q", phase, line, what)
		}
		// count, wall s, per s, p50, p90, p99, max follow the description.
		nums := strings.Fields(line[strings.Index(line, what)+len(what):])
		if len(nums) < 7 {
			t.Fatalf("%s row %q: too few numbers", phase, line)
		}
		for i, s := range nums[:7] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || v <= 0 {
				t.Errorf("%s row: number %d is %q, want > 0", phase, i, s)
			}
		}
		if nums[0] != "20" {
			t.Errorf("%s row: count %s, want 20", phase, nums[0])
		}
	}
	for _, phase := range []string{"echo", "park", "resume"} {
		if !strings.Contains(out, "server during "+phase+" ") {
			t.Errorf("no server stats for %s in\n%s", phase, out)
		}
	}
	if !strings.Contains(out, "server memory ") || !strings.Contains(out, "  after park ") || !strings.Contains(out, "per parked handler: ") {
		t.Errorf("no memory lines in\n%s", out)
	}
}

func TestBenchJSON(t *testing.T) {
	bin := buildWfd(t)
	// The other client library and protocol than TestBenchTable's defaults.
	code, out, errs := runMain(t, "-n", "20", "-c", "4", "--echo", "10", "--warmup", "0", "--conns", "2", "--json",
		"--client", "connect-go", "--protocol", "connect", "--wfd", bin)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	var res struct {
		Config map[string]any `json:"config"`
		Echo   *phase         `json:"echo"`
		Park   *phase         `json:"park"`
		Resume *phase         `json:"resume"`
		Memory *struct {
			BeforePark  mem `json:"before_park"`
			AfterPark   mem `json:"after_park"`
			AfterResume mem `json:"after_resume"`
		} `json:"memory"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("want one line of JSON, got\n%s", out)
	}
	if res.Config["client"] != "connect-go" || res.Config["protocol"] != "connect" {
		t.Errorf("config %v, want client connect-go, protocol connect", res.Config)
	}
	for name, p := range map[string]*phase{"echo": res.Echo, "park": res.Park, "resume": res.Resume} {
		want := 20
		if name == "echo" {
			want = 10
		}
		if p == nil {
			t.Fatalf("no %s phase in %s", name, out)
		}
		l := p.Latency
		if p.Count != want || l.Count != want || p.PerSecond <= 0 || p.Wall <= 0 ||
			l.P50 <= 0 || l.P90 < l.P50 || l.P99 < l.P90 || l.Max < l.P99 || p.Ack.P50 <= 0 {
			t.Errorf("%s: %+v", name, p)
		}
		// A phase shorter than the kernel's 10 ms tick has no steal to show.
		if p.Steal != nil && (*p.Steal < 0 || *p.Steal > 100) {
			t.Errorf("%s: steal_percent %v, want 0..100 (from /proc/stat)", name, *p.Steal)
		}
	}
	if m := res.Memory; m == nil || !m.BeforePark.ok() || !m.AfterPark.ok() || !m.AfterResume.ok() {
		t.Errorf("memory %+v", res.Memory)
	}
	for name, p := range map[string]*phase{"echo": res.Echo, "park": res.Park, "resume": res.Resume} {
		if s := p.Server; s == nil || s.Commits <= 0 || s.Changes < s.Commits {
			t.Errorf("%s: server stats %+v", name, p.Server)
		}
	}
}

// TestBenchWorker runs the phases with the workflows served by the Go
// bench worker (`wfd bench worker`) only.
func TestBenchWorker(t *testing.T) {
	bin := buildWfd(t)
	code, out, errs := runMain(t, "-n", "20", "-c", "4", "--echo", "10", "--warmup", "2", "--json", "--worker", "go", "--in-process=false", "--wfd", bin)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	var res struct {
		Echo    *phase `json:"echo"`
		Workers []struct {
			Worker       string `json:"worker"`
			Command      string `json:"worker_command"`
			PID          int    `json:"worker_pid"`
			Echo         *phase `json:"echo"`
			Park         *phase `json:"park"`
			Resume       *phase `json:"resume"`
			WorkerMemory *struct {
				BeforePark mem `json:"before_park"`
				AfterPark  mem `json:"after_park"`
			} `json:"worker_memory"`
		} `json:"workers"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if res.Echo != nil || len(res.Workers) != 1 {
		t.Fatalf("want only the worker's phases, got %s", out)
	}
	w := res.Workers[0]
	if w.Worker != "go" || w.PID == 0 || !strings.Contains(w.Command, " bench worker --addr ") {
		t.Errorf("worker %q, pid %d, command %q", w.Worker, w.PID, w.Command)
	}
	for name, p := range map[string]*phase{"echo": w.Echo, "park": w.Park, "resume": w.Resume} {
		if p == nil || p.Count == 0 || p.Latency.P50 <= 0 {
			t.Errorf("%s: %+v", name, p)
		}
	}
	if m := w.WorkerMemory; m == nil || !m.BeforePark.ok() || !m.AfterPark.ok() {
		t.Errorf("worker memory %+v", w.WorkerMemory)
	}
}

type mem struct {
	RSS  int64 `json:"vm_rss_bytes"`
	Anon int64 `json:"rss_anon_bytes"`
	File int64 `json:"rss_file_bytes"`
}

func (m mem) ok() bool { return m.RSS > 0 && m.Anon > 0 && m.Anon+m.File <= m.RSS }

type phase struct {
	Count     int     `json:"count"`
	Wall      float64 `json:"wall_seconds"`
	PerSecond float64 `json:"per_second"`
	Latency   struct {
		Count int     `json:"count"`
		P50   float64 `json:"p50_ms"`
		P90   float64 `json:"p90_ms"`
		P99   float64 `json:"p99_ms"`
		Max   float64 `json:"max_ms"`
	} `json:"latency"`
	Ack struct {
		P50 float64 `json:"p50_ms"`
	} `json:"ack"`
	Steal  *float64 `json:"steal_percent"`
	Server *struct {
		Commits int64 `json:"commits"`
		Changes int64 `json:"changes"`
	} `json:"server"`
}

func TestBenchServerFails(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	falseBin, err := exec.LookPath("false")
	if err != nil {
		t.Skip("no false(1)")
	}
	code, _, errs := runMain(t, "-n", "1", "--wfd", falseBin)
	if code != 1 || !strings.Contains(errs, "server exited before it was healthy") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

func TestBenchNoServer(t *testing.T) {
	// Nothing listens on port 1 of loopback (it is privileged).
	code, _, errs := runMain(t, "-n", "1", "--addr", "127.0.0.1:1", "--timeout", "300ms")
	if code != 1 || !strings.Contains(errs, "not healthy") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

func TestBenchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "0"},
		{"-c", "-1"},
		{"--echo", "-3"},
		{"--protocol", "smoke"},
		{"--client", "curl"},
		{"--protocol", "connect"}, // needs --client connect-go
		{"--gzip"},
		{"--conns", "0"},
		{"extra"},
		{"--server-pid", "42"},
		{"--addr", "127.0.0.1:7233", "--wfd", "/bin/wfd"},
		{"--nonsense"},
		{"--mode", "smoke"},
		{"--mode", "release", "-n", "1"},
		{"--mode", "release", "--addr", "127.0.0.1:7233"},
		{"--mode", "release", "--echo", "5"},
		{"--mode", "release", "--rehydrate", "0"},
		{"--mode", "release", "--settle", "-1s"},
		{"--mode", "release", "--server-gc=false", "--heapprofile", "x"},
		{"--rehydrate", "5"},
		{"--heapprofile", "x"},
		{"--worker", "rust"},
		{"--worker", "go,"},
		{"--in-process=false"},
		{"--worker", "go", "--worker-max-runs", "0"},
		{"--worker", "go,ts", "--addr", "127.0.0.1:7233"},
		{"--mode", "release", "--worker", "go"},
		{"--tls", "--addr", "127.0.0.1:7233"},
		{"--tls", "--mode", "release"},
		{"--tls", "--worker", "go", "--in-process=false"},
	} {
		code, out, errs := runMain(t, args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "wfd bench: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	code, out, _ := runMain(t, "-h")
	if code != 0 || !strings.Contains(out, "Usage: wfd bench") || !strings.Contains(out, "-n handlers") || !strings.Contains(out, "--server-pid pid") ||
		!strings.Contains(out, "--mode mode") || !strings.Contains(out, "--mode release starts the server") {
		t.Errorf("-h: exit %d\n%s", code, out)
	}
}

// releaseArgs is a tiny --mode release run: 30 handlers, 15 rehydrated at
// 1 client and 15 at 4.
func releaseArgs(bin string, extra ...string) []string {
	return append([]string{"--mode", "release", "-n", "30", "-c", "4", "--warmup", "2", "--settle", "200ms", "--wfd", bin}, extra...)
}

func TestBenchReleaseTable(t *testing.T) {
	bin := buildWfd(t)
	prof := filepath.Join(t.TempDir(), "heap")
	code, out, errs := runMain(t, releaseArgs(bin, "--heapprofile", prof)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	t.Logf("\n%s", out)
	for _, r := range []struct {
		phase, what string
		count       string
	}{
		{"park", "RunWorkflow → IdleChanged{idle}", "30"},
		{"release", "ReleaseHandler acknowledged", "30"},
		{"rehydrate c=1", "SendEvent → HandlerFinished", "15"},
		{"rehydrate c=4", "SendEvent → HandlerFinished", "15"},
	} {
		var line string
		for l := range strings.Lines(out) {
			if strings.HasPrefix(strings.TrimSpace(l), r.phase+" ") && strings.Contains(l, r.what) {
				line = l
				break
			}
		}
		if line == "" {
			t.Errorf("no %s row in\n%s", r.phase, out)
			continue
		}
		nums := strings.Fields(line[strings.Index(line, r.what)+len(r.what):])
		if len(nums) < 7 {
			t.Errorf("%s row %q: too few numbers", r.phase, line)
			continue
		}
		for i, s := range nums[:7] {
			if v, err := strconv.ParseFloat(s, 64); err != nil || v <= 0 {
				t.Errorf("%s row: number %d is %q, want > 0", r.phase, i, s)
			}
		}
		if nums[0] != r.count {
			t.Errorf("%s row: count %s, want %s", r.phase, nums[0], r.count)
		}
	}
	for _, want := range []string{
		"wfd bench --mode release: n=30 c=4 rehydrate=15 ",
		"--idle-timeout 0",
		"\nrestarted: ",
		"server during park ", "server during release ", "server during rehydrate c=1 ", "server during rehydrate c=4 ",
		"after park: 30 idle in memory; after release: 30 released, 0 in memory",
		"rehydrate c=1: 15 rehydrations for 15 handlers (each handler loaded exactly once)",
		"rehydrate c=4: 15 rehydrations for 15 handlers (each handler loaded exactly once)",
		"\n  before park ", "\n  after park (30 idle) ", "\n  after release ", "\n  after release + 200ms ",
		"\n  after GC + 200ms ", "\n  after restart ",
		"\nper idle handler in memory: ", "\nper released handler: ", "\n  restarted server: ",
		"\nstore: ", " bytes per released handler (n=30)", "\n  bbolt: 4096-byte pages",
		"start-up with 30 released handlers in the store (then 0 in memory, 30 released)",
		"SIGTERM → exited", "process start → health check SERVING", "process start → first ListWorkflows",
		"server heap profiles: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the output", want)
		}
	}
	for _, b := range []string{"handlers", "snapshots", "records"} {
		if !regexp.MustCompile(`(?m)^\s+` + b + `\s+\d+\s+[1-9]\d*\s+[1-9]\d*\s+`).MatchString(out) {
			t.Errorf("no disk row with pages for bucket %s", b)
		}
	}
	targets := regexp.MustCompile(`(?m)^(idle handler in memory|released handler, memory|released handler, disk|rehydrate p99, 1 client|rehydrate p99, 4 clients|start-up)\s{2}.*\s(pass|MISS)\b`).FindAllString(out, -1)
	if len(targets) != 10 {
		t.Errorf("want 10 target rows, found %d: %q", len(targets), targets)
	}
	for _, suffix := range []string{".parked", ".released"} {
		b, err := os.ReadFile(prof + suffix)
		if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("heap profile %s: %v, %d bytes, want a gzipped profile", prof+suffix, err, len(b))
		}
	}
}

func TestBenchReleaseJSON(t *testing.T) {
	bin := buildWfd(t)
	// A settle over a second also records a reading each second.
	code, out, errs := runMain(t, releaseArgs(bin, "--json", "--settle", "1100ms")...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("want one line of JSON, got\n%s", out)
	}
	var res struct {
		Config struct {
			Mode         string `json:"mode"`
			N            int    `json:"n"`
			Server       string `json:"server"`
			ServerPID    int    `json:"server_pid"`
			Restarted    string `json:"restarted"`
			RestartedPID int    `json:"restarted_pid"`
		} `json:"config"`
		Release *struct {
			Park                 *phase `json:"park"`
			IdleInMemory         int64  `json:"idle_in_memory_after_park"`
			Release              *phase `json:"release"`
			ReleasedAfterRelease int64  `json:"released_after_release"`
			InMemoryAfterRelease int64  `json:"in_memory_after_release"`
			Memory               struct {
				BeforePark   *relMem `json:"before_park"`
				AfterPark    *relMem `json:"after_park"`
				AfterRelease *relMem `json:"after_release"`
				AfterSettle  *relMem `json:"after_settle"`
				AfterGC      *relMem `json:"after_gc_settle"`
				AfterRestart *relMem `json:"after_restart"`
				PerIdle      *per    `json:"per_idle_handler"`
				PerReleased  *per    `json:"per_released_handler"`
				PerRestart   *per    `json:"per_released_handler_restarted"`
			} `json:"memory"`
			Disk *struct {
				FileBytes        int64 `json:"file_bytes"`
				FileBytesRunning int64 `json:"file_bytes_after_release"`
				PerReleased      int64 `json:"file_bytes_per_released_handler"`
				PageSize         int   `json:"page_size"`
				HighWater        int64 `json:"high_water_bytes"`
				Free             int64 `json:"free_bytes"`
				Buckets          []struct {
					Name  string `json:"name"`
					Keys  int    `json:"keys"`
					Alloc int64  `json:"alloc_bytes"`
					Inuse int64  `json:"inuse_bytes"`
				} `json:"buckets"`
			} `json:"disk"`
			Startup *struct {
				Stop     float64 `json:"sigterm_to_exit_seconds"`
				Serving  float64 `json:"start_to_serving_seconds"`
				List     float64 `json:"start_to_list_workflows_seconds"`
				Released int64   `json:"handlers_released"`
				InMemory int64   `json:"handlers_in_memory"`
			} `json:"startup"`
			RehydrateN int `json:"rehydrate_n"`
			Rehydrate  []struct {
				Clients int `json:"clients"`
				phase
				ServerP50    float64 `json:"server_rehydrate_p50_ms"`
				ServerP99    float64 `json:"server_rehydrate_p99_ms"`
				ServerWindow int     `json:"server_rehydrate_window"`
				LoadedOnce   bool    `json:"each_loaded_once"`
				Server       *struct {
					Rehydrations int64 `json:"rehydrations"`
				} `json:"server"`
			} `json:"rehydrate"`
			Targets []struct {
				Name  string  `json:"name"`
				Value float64 `json:"value"`
				Limit float64 `json:"limit"`
				Unit  string  `json:"unit"`
			} `json:"targets"`
		} `json:"release"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	c := res.Config
	if c.Mode != "release" || c.N != 30 || c.ServerPID <= 0 || c.RestartedPID <= 0 || c.RestartedPID == c.ServerPID ||
		!strings.Contains(c.Server, "--idle-timeout 0") || !strings.Contains(c.Restarted, "--idle-timeout 0") {
		t.Errorf("config %+v", c)
	}
	rel := res.Release
	if rel == nil {
		t.Fatalf("no release results in %s", out)
	}
	for name, p := range map[string]*phase{"park": rel.Park, "release": rel.Release} {
		if p == nil {
			t.Fatalf("no %s phase in %s", name, out)
		}
		l := p.Latency
		if p.Count != 30 || l.Count != 30 || p.PerSecond <= 0 || p.Wall <= 0 ||
			l.P50 <= 0 || l.P90 < l.P50 || l.P99 < l.P90 || l.Max < l.P99 {
			t.Errorf("%s: %+v", name, p)
		}
	}
	if s := rel.Release.Server; s == nil || s.Commits <= 0 || s.Changes < 30 {
		t.Errorf("release: server stats %+v", s)
	}
	if rel.IdleInMemory != 30 || rel.ReleasedAfterRelease != 30 || rel.InMemoryAfterRelease != 0 {
		t.Errorf("idle in memory %d, then released %d, in memory %d; want 30, 30, 0", rel.IdleInMemory, rel.ReleasedAfterRelease, rel.InMemoryAfterRelease)
	}
	m := rel.Memory
	for name, r := range map[string]*relMem{"before park": m.BeforePark, "after park": m.AfterPark, "after release": m.AfterRelease,
		"after settle": m.AfterSettle, "after GC": m.AfterGC, "after restart": m.AfterRestart} {
		if r == nil || !r.ok() {
			t.Errorf("memory %s: %+v", name, r)
			continue
		}
		if wantTrace := name == "after settle" || name == "after GC"; wantTrace != (len(r.Trace) == 1) || (wantTrace && !r.Trace[0].ok()) {
			t.Errorf("memory %s: trace %+v", name, r.Trace)
		}
		// The live heap is read wherever a GC was forced.
		if wantHeap := name != "after release" && name != "after settle"; wantHeap != (r.HeapLive > 0) {
			t.Errorf("memory %s: live heap %d", name, r.HeapLive)
		}
	}
	// At n=30 the differences are noise and may be negative; they must be there.
	for name, p := range map[string]*per{"idle": m.PerIdle, "released": m.PerReleased, "restarted": m.PerRestart} {
		if p == nil || p.HeapLive == nil {
			t.Errorf("per %s handler: %+v", name, p)
		}
	}
	d := rel.Disk
	if d == nil || d.FileBytes <= 0 || d.FileBytesRunning <= 0 || d.PerReleased != d.FileBytes/30 || d.PageSize <= 0 ||
		d.HighWater <= 0 || d.HighWater > d.FileBytes || d.Free < 0 || d.Free > d.HighWater {
		t.Fatalf("disk %+v", d)
	}
	keys := map[string]int{}
	for _, b := range d.Buckets {
		keys[b.Name] = b.Keys
		if b.Inuse > b.Alloc || (b.Keys > 0 && b.Name != "meta" && b.Inuse <= 0) {
			t.Errorf("bucket %+v", b)
		}
	}
	// 30 approval handlers and the warm-up's echo handlers.
	if keys["handlers"] < 30 || keys["snapshots"] < 30 || keys["records"] < 30 || keys["idx_residency"] < 30 {
		t.Errorf("bucket keys %v", keys)
	}
	s := rel.Startup
	if s == nil || s.Stop <= 0 || s.Serving <= 0 || s.List < s.Serving || s.Released != 30 || s.InMemory != 0 {
		t.Errorf("startup %+v", s)
	}
	if rel.RehydrateN != 15 || len(rel.Rehydrate) != 2 {
		t.Fatalf("rehydrate n %d, %d runs; want 15, 2", rel.RehydrateN, len(rel.Rehydrate))
	}
	for i, r := range rel.Rehydrate {
		l := r.Latency
		if want := []int{1, 4}[i]; r.Clients != want {
			t.Errorf("rehydrate run %d: %d clients, want %d", i, r.Clients, want)
		}
		if r.Count != 15 || l.Count != 15 || r.PerSecond <= 0 || l.P50 <= 0 || l.P99 < l.P50 || r.Ack.P50 <= 0 {
			t.Errorf("rehydrate c=%d: %+v", r.Clients, r.phase)
		}
		if r.Server == nil || r.Server.Rehydrations != 15 || !r.LoadedOnce || r.ServerWindow != 15 || r.ServerP50 <= 0 || r.ServerP99 < r.ServerP50 {
			t.Errorf("rehydrate c=%d: server says %+v, once %v, window %d, p50 %v, p99 %v", r.Clients, r.Server, r.LoadedOnce, r.ServerWindow, r.ServerP50, r.ServerP99)
		}
	}
	if len(rel.Targets) != 10 {
		t.Errorf("targets %+v", rel.Targets)
	}
	for _, tg := range rel.Targets {
		if tg.Name == "" || tg.Limit <= 0 || tg.Unit == "" {
			t.Errorf("target %+v", tg)
		}
	}
}

type relMem struct {
	mem
	HeapLive int64 `json:"heap_live_bytes"`
	Trace    []mem `json:"trace_each_second"`
}

type per struct {
	RSS      *int64 `json:"vm_rss_bytes"`
	Anon     *int64 `json:"rss_anon_bytes"`
	HeapLive *int64 `json:"heap_live_bytes"`
}
