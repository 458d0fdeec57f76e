package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/bench"
)

var (
	buildOnce sync.Once
	buildDir  string // removed by TestMain
	wfdBin    string
	buildErr  error
	buildOut  []byte
)

func TestMain(m *testing.M) {
	code := m.Run()
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
	code, out, errs := runMain(t, "-n", "20", "-c", "4", "--echo", "10", "--warmup", "0", "--conns", "2", "--json", "--wfd", bin)
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
		{"--conns", "0"},
		{"extra"},
		{"--server-pid", "42"},
		{"--addr", "127.0.0.1:7233", "--wfd", "/bin/wfd"},
		{"--nonsense"},
	} {
		code, out, errs := runMain(t, args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "wfd bench: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	code, out, _ := runMain(t, "-h")
	if code != 0 || !strings.Contains(out, "Usage: wfd bench") || !strings.Contains(out, "-n handlers") || !strings.Contains(out, "--server-pid pid") {
		t.Errorf("-h: exit %d\n%s", code, out)
	}
}
