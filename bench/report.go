package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// Result is what a benchmark run measured; --json prints it.
type Result struct {
	Config resultConfig `json:"config"`
	// The phases with the workflows in the server (echo, park, resume,
	// memory at the top level of the JSON).
	modeResult
	// Workers are the phases again with the workflows served by a worker
	// process (--worker), one entry per language, each on a new server.
	Workers []*modeResult `json:"workers,omitempty"`
	// TLS is the in-process phases again over TLS with a bearer token
	// (--tls), on a new server.
	TLS *modeResult `json:"tls,omitempty"`
	// Release is --mode release (release.go).
	Release *releaseResult `json:"release,omitempty"`
	// Unread is --mode unread (unread.go).
	Unread *unreadResult `json:"unread,omitempty"`
	// Compare is --compare-stores (compare.go): every run, in order.
	Compare []*compareRun `json:"compare,omitempty"`
}

// modeResult is one run of the phases: with the workflows in the server,
// or served by a worker process (Worker names its language).
type modeResult struct {
	Worker        string `json:"worker,omitempty"`
	WorkerCommand string `json:"worker_command,omitempty"`
	WorkerPID     int    `json:"worker_pid,omitempty"`
	Server        string `json:"server,omitempty"`
	ServerPID     int    `json:"server_pid,omitempty"`
	// Replicas is --replicas: the servers, their pids (ServerPID is the
	// first's) and what the CPU and counters sum over.
	Replicas    int   `json:"replicas,omitempty"`
	ReplicaPIDs []int `json:"replica_pids,omitempty"`

	Echo   *phaseResult  `json:"echo,omitempty"`
	Park   *phaseResult  `json:"park,omitempty"`
	Resume *phaseResult  `json:"resume,omitempty"`
	Memory *memoryResult `json:"memory,omitempty"`
	// WorkerMemory is the worker process's memory around the park phase.
	WorkerMemory *memoryResult `json:"worker_memory,omitempty"`
}

type resultConfig struct {
	Mode      string `json:"mode"`
	N         int    `json:"n"`
	C         int    `json:"c"`
	Echo      int    `json:"echo"`
	Conns     int    `json:"conns"`
	Client    string `json:"client"`
	Protocol  string `json:"protocol"`
	Gzip      bool   `json:"gzip"`
	Fsync     string `json:"fsync"`
	Server    string `json:"server"`
	ServerPID int    `json:"server_pid,omitempty"`
	// Rounds is --rounds of --compare-stores.
	Rounds int `json:"rounds,omitempty"`
	// Route is --route, with several replicas.
	Route string `json:"route,omitempty"`
	// The server --mode release started again on the same data.
	Restarted    string `json:"restarted,omitempty"`
	RestartedPID int    `json:"restarted_pid,omitempty"`
}

// phaseResult is one phase. Latency is the phase's end-to-end latency per
// handler (see the package documentation); Ack is the latency of its RPC
// alone (RunWorkflow or SendEvent, which return once the change is
// durable).
type phaseResult struct {
	Count       int     `json:"count"`
	WallSeconds float64 `json:"wall_seconds"`
	PerSecond   float64 `json:"per_second"`
	Latency     summary `json:"latency"`
	Ack         summary `json:"ack,omitzero"` // absent where the latency is the RPC alone
	// DoneInResponse counts handlers whose RunWorkflow response already
	// showed the awaited state (completed, or idle), so no stream was
	// needed.
	DoneInResponse int `json:"done_in_response"`
	// CPU time used during the phase (the server's from /proc/<pid>/stat,
	// 10 ms resolution), in total and in microseconds per operation.
	ServerCPUSeconds float64 `json:"server_cpu_seconds,omitempty"`
	ServerCPUPerOp   float64 `json:"server_cpu_us_per_op,omitempty"`
	BenchCPUSeconds  float64 `json:"bench_cpu_seconds,omitempty"`
	BenchCPUPerOp    float64 `json:"bench_cpu_us_per_op,omitempty"`
	// The worker process's CPU time (--worker).
	WorkerCPUSeconds float64 `json:"worker_cpu_seconds,omitempty"`
	WorkerCPUPerOp   float64 `json:"worker_cpu_us_per_op,omitempty"`
	// The PostgreSQL server's CPU time (--store on this machine: the
	// postmaster and every backend, those that exited included).
	PostgresCPUSeconds float64 `json:"postgres_cpu_seconds,omitempty"`
	PostgresCPUPerOp   float64 `json:"postgres_cpu_us_per_op,omitempty"`
	// ThroughOtherReplica counts resumes sent to another replica than the
	// handler's owner (--replicas): forwarded to it.
	ThroughOtherReplica int `json:"through_other_replica,omitempty"`
	// StealPercent is the share of the machine's CPU time that the
	// hypervisor gave to other guests during the phase (/proc/stat
	// "steal"). On a shared VM it is the best single sign of a noisy run:
	// the rates fall with it.
	StealPercent *float64 `json:"steal_percent,omitempty"`
	// Server is what the server's GetStats counters say about the phase.
	Server *serverStats `json:"server,omitempty"`
}

// serverStats: store commits (one fsync'd transaction each) and the
// handler changes they carried during a phase, rehydrations and releases
// during it, and the handlers in memory at its end.
type serverStats struct {
	Commits      int64 `json:"commits"`
	Changes      int64 `json:"changes"`
	Rehydrations int64 `json:"rehydrations"`
	Releases     int64 `json:"releases"`
	Active       int64 `json:"handlers_in_memory"`
	IdleInMemory int64 `json:"idle_in_memory"`
}

// memoryResult is the server's resident memory around the park phase.
// PerParkedHandler is (AfterPark - BeforePark) / n for VmRSS, and
// AnonPerParkedHandler the same for RssAnon alone.
type memoryResult struct {
	BeforePark           memSample `json:"before_park"`
	AfterPark            memSample `json:"after_park"`
	AfterResume          memSample `json:"after_resume"`
	PerParkedHandler     int64     `json:"rss_bytes_per_parked_handler"`
	AnonPerParkedHandler int64     `json:"anon_bytes_per_parked_handler"`
}

// memSample is one reading of /proc/<pid>/status, in bytes: VmRSS and its
// parts RssAnon (the process's own memory: heap, stacks) and RssFile
// (mapped files; for wfd mostly the bbolt file, which bbolt mmaps).
type memSample struct {
	RSS  int64 `json:"vm_rss_bytes"`
	Anon int64 `json:"rss_anon_bytes"`
	File int64 `json:"rss_file_bytes"`
}

func writeJSON(w io.Writer, res *Result) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func writeTable(w io.Writer, res *Result) {
	if res.Release != nil {
		writeReleaseTable(w, res)
		return
	}
	if res.Unread != nil {
		writeUnreadTable(w, res)
		return
	}
	if res.Compare != nil {
		writeCompareTable(w, res)
		return
	}
	c := res.Config
	fmt.Fprintf(w, "wfd bench: n=%d c=%d echo=%d conns=%d client=%s protocol=%s gzip=%v fsync=%s\n",
		c.N, c.C, c.Echo, c.Conns, c.Client, c.Protocol, c.Gzip, c.Fsync)
	fmt.Fprintf(w, "server: %s", c.Server)
	if c.ServerPID != 0 {
		fmt.Fprintf(w, " (pid %d)", c.ServerPID)
	}
	fmt.Fprint(w, "\n\n")
	if res.Echo != nil || res.Park != nil {
		fmt.Fprintln(w, "workflows in the server:")
		writeMode(w, &res.modeResult)
	}
	if m := res.TLS; m != nil {
		fmt.Fprintf(w, "\nworkflows in the server, over TLS with a bearer token; server: %s (pid %d)\n", m.Server, m.ServerPID)
		writeMode(w, m)
		if res.Park != nil && m.Park != nil && res.Park.PerSecond > 0 {
			fmt.Fprintf(w, "parks per second over TLS: %.0f vs %.0f in plaintext (%+.1f %%)\n",
				m.Park.PerSecond, res.Park.PerSecond, 100*(m.Park.PerSecond/res.Park.PerSecond-1))
		}
	}
	for _, m := range res.Workers {
		fmt.Fprintf(w, "\nworkflows served by the %s worker: %s (pid %d); server: %s (pid %d)\n", m.Worker, m.WorkerCommand, m.WorkerPID, m.Server, m.ServerPID)
		writeMode(w, m)
	}
}

// writeMode writes the table of one run of the phases.
func writeMode(w io.Writer, res *modeResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, phaseHeader)
	row := func(name, what string, p *phaseResult) { phaseRow(tw, name, what, ackName(name), p) }
	row("echo", "RunWorkflow → HandlerFinished", res.Echo)
	row("park", "RunWorkflow → IdleChanged{idle}", res.Park)
	row("resume", "SendEvent → HandlerFinished", res.Resume)
	_ = tw.Flush()
	if res.Echo != nil && res.Echo.DoneInResponse > 0 {
		fmt.Fprintf(w, "(echo: %d of %d RunWorkflow responses already said completed)\n", res.Echo.DoneInResponse, res.Echo.Count)
	}
	if res.Park != nil && res.Park.DoneInResponse > 0 {
		fmt.Fprintf(w, "(park: %d of %d RunWorkflow responses already showed the handler idle)\n", res.Park.DoneInResponse, res.Park.Count)
	}
	if res.Resume != nil && res.Resume.DoneInResponse > 0 {
		fmt.Fprintf(w, "(resume: %d of %d SendEvent responses already said completed)\n", res.Resume.DoneInResponse, res.Resume.Count)
	}
	if res.Replicas > 1 && res.Resume != nil {
		fmt.Fprintf(w, "(resume: %d of %d SendEvents through another replica than the handler's owner, forwarded to it; CPU and counters summed over the %d replicas)\n",
			res.Resume.ThroughOtherReplica, res.Resume.Count, res.Replicas)
	}
	for _, ph := range []struct {
		name string
		p    *phaseResult
	}{{"echo", res.Echo}, {"park", res.Park}, {"resume", res.Resume}} {
		serverLine(w, ph.name, 6, ph.p)
	}
	fmt.Fprintln(w)
	if res.Worker != "" {
		writeMemory(w, res.Worker+" worker", res.WorkerMemory)
	}
	writeMemory(w, "server", res.Memory)
}

func writeMemory(w io.Writer, who string, m *memoryResult) {
	if m != nil {
		fmt.Fprintf(w, "%-14s  %22s  %22s  %22s\n", who+" memory", "VmRSS", "RssAnon", "RssFile")
		for _, r := range []struct {
			name string
			s    memSample
		}{{"before park", m.BeforePark}, {"after park", m.AfterPark}, {"after resume", m.AfterResume}} {
			fmt.Fprintf(w, "  %-12s  %22s  %22s  %22s\n", r.name, mib(r.s.RSS), mib(r.s.Anon), mib(r.s.File))
		}
		fmt.Fprintf(w, "per parked handler: %d bytes VmRSS, %d bytes RssAnon ((after park - before park) / n)\n",
			m.PerParkedHandler, m.AnonPerParkedHandler)
	} else {
		fmt.Fprintf(w, "%s memory: not measured (give --server-pid with --addr)\n", who)
	}
}

const phaseHeader = "phase\tmeasured from → to\tcount\twall s\tper s\tp50 ms\tp90 ms\tp99 ms\tmax ms\tserver CPU µs/op\tworker CPU µs/op\tPostgreSQL CPU µs/op\tbench CPU µs/op\tsteal %\t\n"

// phaseRow writes a phase's row and, if it measured one, the row of its
// RPC alone (ack).
func phaseRow(tw io.Writer, name, what, ack string, p *phaseResult) {
	if p == nil {
		return
	}
	s := p.Latency
	steal := "-"
	if p.StealPercent != nil {
		steal = fmt.Sprintf("%.0f", *p.StealPercent)
	}
	fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%.1f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%s\t%s\t%s\t%s\t\n",
		name, what, p.Count, p.WallSeconds, p.PerSecond, s.P50, s.P90, s.P99, s.Max,
		cpu(p.ServerCPUSeconds, p.ServerCPUPerOp), cpu(p.WorkerCPUSeconds, p.WorkerCPUPerOp), cpu(p.PostgresCPUSeconds, p.PostgresCPUPerOp),
		cpu(p.BenchCPUSeconds, p.BenchCPUPerOp), steal)
	if a := p.Ack; a.Count > 0 {
		fmt.Fprintf(tw, "\t%s\t\t\t\t%.3f\t%.3f\t%.3f\t%.3f\t\t\t\t\t\t\n", ack, a.P50, a.P90, a.P99, a.Max)
	}
}

// serverLine describes what the server's counters say about a phase.
func serverLine(w io.Writer, name string, width int, p *phaseResult) {
	if p == nil || p.Server == nil {
		return
	}
	s := p.Server
	fmt.Fprintf(w, "server during %-*s %d commits (%.1f/s), %d handler changes (%.2f per commit), %d rehydrations, %d releases; then %d handlers in memory, %d idle\n",
		width, name, s.Commits, float64(s.Commits)/p.WallSeconds, s.Changes, ratio(s.Changes, s.Commits), s.Rehydrations, s.Releases, s.Active, s.IdleInMemory)
}

func ackName(phase string) string {
	if phase == "resume" {
		return "SendEvent acknowledged"
	}
	return "RunWorkflow acknowledged"
}

func cpu(total, perOp float64) string {
	if total == 0 && perOp == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", perOp)
}

func mib(b int64) string {
	return fmt.Sprintf("%d (%.1f MiB)", b, float64(b)/(1<<20))
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
