package bench_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/internal/pgtest"
)

// TestBenchReplicas runs the phases against three replicas on one
// PostgreSQL database: every handler parked and resumed, resumes sent
// through other replicas than their parks (forwarded), the counters and
// CPU summed over the replicas, PostgreSQL's CPU measured.
func TestBenchReplicas(t *testing.T) {
	bin := buildWfd(t)
	url := pgtest.NewDatabase(t)
	code, out, errs := runMain(t, "-n", "30", "-c", "6", "--echo", "6", "--warmup", "3", "--json", "--wfd", bin, "--store", url, "--replicas", "3")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	type phaseCPU struct {
		phase
		ServerCPU  float64 `json:"server_cpu_seconds"`
		PGCPU      float64 `json:"postgres_cpu_seconds"`
		Elsewhere  int     `json:"through_other_replica"`
		ServerStat *struct {
			Commits int64 `json:"commits"`
			Changes int64 `json:"changes"`
		} `json:"server"`
	}
	var res struct {
		Replicas    int       `json:"replicas"`
		ReplicaPIDs []int     `json:"replica_pids"`
		Echo        *phaseCPU `json:"echo"`
		Park        *phaseCPU `json:"park"`
		Resume      *phaseCPU `json:"resume"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if res.Replicas != 3 || len(res.ReplicaPIDs) != 3 {
		t.Fatalf("replicas %d, pids %v; want 3 of each\n%s", res.Replicas, res.ReplicaPIDs, out)
	}
	var pg float64
	for name, p := range map[string]*phaseCPU{"echo": res.Echo, "park": res.Park, "resume": res.Resume} {
		want := 30
		if name == "echo" {
			want = 6
		}
		if p == nil || p.Count != want || p.Latency.Count != want || p.ServerStat == nil || p.ServerStat.Commits == 0 {
			t.Fatalf("%s phase %+v, want %d handlers and commits\n%s", name, p, want, out)
		}
		pg += p.PGCPU
	}
	if res.Resume.Elsewhere == 0 {
		t.Errorf("no resume went through another replica than its park:\n%s", out)
	}
	if pg <= 0 {
		t.Errorf("no PostgreSQL CPU time measured:\n%s", out)
	}

	// The table says what the run was. Routed to the owners, no resume is
	// forwarded.
	code, out, errs = runMain(t, "-n", "6", "-c", "3", "--echo", "0", "--warmup", "0", "--wfd", bin, "--store", pgtest.NewDatabase(t), "--replicas", "2", "--route", "owner")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, want := range []string{"started 2 replicas", "--replica-id r1", "(resume: 0 of 6 SendEvents through another replica than the handler's owner", "PostgreSQL CPU µs/op"} {
		if !strings.Contains(out, want) {
			t.Errorf("table without %q:\n%s", want, out)
		}
	}
}

// TestBenchCompareStores runs bbolt and PostgreSQL, one server and two
// replicas, in one invocation: one table, a row per run, and the
// databases it created are dropped.
func TestBenchCompareStores(t *testing.T) {
	bin := buildWfd(t)
	admin := pgtest.NewDatabase(t)
	code, out, errs := runMain(t, "--compare-stores", admin, "--compare-replicas", "0,2", "-n", "12", "-c", "4", "--echo", "2", "--warmup", "2", "--wfd", bin)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	t.Logf("\n%s", out)
	rows := 0
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "1" {
			continue
		}
		rows++
		if strings.Contains(line, "incomplete") {
			t.Errorf("incomplete run: %s", line)
		}
	}
	for _, want := range []string{" bbolt ", " postgres ", " postgres, 2 replicas "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q row:\n%s", want, out)
		}
	}
	if rows != 3 {
		t.Errorf("%d rows, want 3:\n%s", rows, out)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var left int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname LIKE 'wfd_bench_%'").Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d databases of the runs left (%v), want none", left, err)
	}
}
