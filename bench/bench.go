package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/wfd-dev/wfd/namespace"
)

// Exit statuses, as the rest of the command line uses them.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// config is what the flags set.
type config struct {
	N         int           // approval handlers parked and resumed
	C         int           // concurrent clients in park and resume
	Echo      int           // sequential echo runs
	JSON      bool          // print one JSON object instead of the table
	Wfd       string        // the wfd binary to start (default: this executable)
	Addr      string        // a running server instead of a child
	ServerPID int           // the running server's pid, for its memory
	Data      string        // the child's data directory (default: a temp dir, removed)
	Store     string        // the child's --store (a PostgreSQL URL; default: bbolt in Data)
	Conns     int           // HTTP/2 connections the clients share
	Client    string        // clientGRPCGo or clientConnectGo
	Protocol  string        // grpc or connect
	Gzip      bool          // accept gzipped responses (connect-go's default)
	Warmup    int           // echo runs before measuring
	Timeout   time.Duration // the whole run
	Grace     time.Duration // SIGTERM to SIGKILL for the child
	CPUProf   string        // write this process's CPU profile here
	TLS       bool          // run the in-process phases again over TLS with a token
	Attrs     bool          // give every parked handler search attributes
	Namespace string        // the namespace of every call ("": none named)

	// --replicas (replicas.go): the started server is this many replicas
	// on the --store database (0: one server, not in replica mode).
	Replicas int
	// --route: where a resume's SendEvent goes with several replicas:
	// routeSpread (each client's own replica) or routeOwner (the replica
	// the handler's owner names: nothing forwarded).
	Route string
	// --compare-stores (compare.go): the phases on bbolt and on
	// PostgreSQL with each of CompareReplicas, Rounds times, every
	// PostgreSQL run on a new database created through this URL.
	Compare         string
	CompareReplicas []int
	Rounds          int

	// --worker: the phases again with the workflows served by a worker
	// process of each language (workerproc.go).
	Workers       []string
	InProcess     bool   // with --worker, run the phases in the server too
	WorkerMaxRuns int    // the worker's --max-runs
	TSWorker      string // command of the TypeScript worker
	PythonWorker  string // command of the Python worker

	// --mode release (release.go).
	Mode      string        // modePhases (default) or modeRelease
	Rehydrate int           // released handlers answered per rehydrate run
	Settle    time.Duration // wait before the settled memory readings
	ServerGC  bool          // force the server's GC through its pprof endpoint
	HeapProf  string        // save the server's heap profiles as PREFIX.parked, PREFIX.released

	// --mode unread (unread.go).
	Streams int           // StreamEvents streams opened and never read
	Hold    time.Duration // how long they are held before they are read
}

// The modes.
const (
	modePhases  = "phases"  // echo, park, resume (the default)
	modeRelease = "release" // footprint, release, start-up, rehydrate
	modeUnread  = "unread"  // memory and latency with unread streams
)

// defaultReleaseN is -n in --mode release when it is not given.
const defaultReleaseN = 100000

const usageText = `Usage: wfd bench [flags]

Starts a wfd server as a child process (or uses --addr), drives it over
loopback and prints: echo start-to-complete latency (sequential), approval
handlers parked per second with -c clients, resume latency and rate, and
the server's resident memory per parked handler. fsync stays on. With
--store postgres://... the started server keeps its handlers in that
PostgreSQL database (give each run an empty one); with --replicas N as N
replicas on it (serve --replica-id), the clients spread over them
round-robin, so that most resumes are forwarded to the handler's owner;
with --route owner each resume goes to the replica that owns its handler
(Handler.owner, as RunWorkflow answered it), as a handler-aware client or
proxy would send it, and nothing is forwarded.
--compare-stores URL runs the phases on bbolt and on PostgreSQL (one
server, and each --compare-replicas count of replicas), --rounds times,
each PostgreSQL run on a new database it creates through URL and drops,
and prints one table. With a local PostgreSQL its CPU time is measured too.

--mode unread opens --streams StreamEvents streams over handlers with
1 MiB records and never reads them, and reports the server's RSS (peak
against 512 MiB) and other clients' echo latency before and meanwhile.

--mode release starts the server with --idle-timeout 0 and measures instead
what releasing idle handlers buys: memory per idle handler in memory, memory
and disk per released handler, rehydrate latency at 1 and -c clients, and
start-up time with the released handlers in the store. Its memory baseline
is taken after 100 handlers have been parked, released and answered, so
that the server's one-time costs are not counted per handler.
`

// Main runs `wfd bench` with args (without the command name) and returns
// the exit status: 0 on success, 1 if the benchmark failed, 2 on a usage
// error.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "worker" {
		return goWorkerMain(ctx, args[1:], stderr)
	}
	cfg, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "wfd bench: %v\nRun 'wfd bench -h' for the flags.\n", err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if cfg.CPUProf != "" {
		f, err := os.Create(cfg.CPUProf)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "wfd bench: --cpuprofile: %v\n", err)
			return exitError
		}
		defer func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		}()
	}
	res, err := run(ctx, cfg, stderr)
	if res != nil {
		if cfg.JSON {
			if werr := writeJSON(stdout, res); werr != nil && err == nil {
				err = werr
			}
		} else {
			writeTable(stdout, res)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "wfd bench: %v\n", err)
		return exitError
	}
	return exitOK
}

func parseFlags(args []string, stdout io.Writer) (config, error) {
	cfg := config{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.define(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usageText)
			writeDefaults(stdout, fs)
		}
		return cfg, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cfg.Mode == modeRelease && !set["n"] {
		cfg.N = defaultReleaseN
	}
	if err := cfg.check(set, fs.Args()); err != nil {
		return cfg, err
	}
	cfg.C = min(cfg.C, cfg.N)
	cfg.Rehydrate = min(cfg.Rehydrate, cfg.N/2)
	return cfg, nil
}

// define declares the flags, into cfg.
func (cfg *config) define(fs *flag.FlagSet) {
	fs.StringVar(&cfg.Mode, "mode", modePhases, "`mode`: phases (echo, park, resume), release (footprint, release, start-up, rehydrate) or unread (memory and latency while streams are not read)")
	fs.IntVar(&cfg.Streams, "streams", 1000, "--mode unread: StreamEvents `streams` opened and never read")
	fs.DurationVar(&cfg.Hold, "hold", 40*time.Second, "--mode unread: how long the unread streams are held (past the server's 30 s stream send timeout)")
	fs.IntVar(&cfg.N, "n", 2000, "approval `handlers` to park and resume (--mode release: 100000 unless given)")
	fs.IntVar(&cfg.C, "c", 32, "concurrent `clients` in the park and resume phases (--mode release: park, release and the second rehydrate run)")
	fs.IntVar(&cfg.Echo, "echo", 1000, "sequential echo `runs` (0 skips the phase)")
	fs.BoolVar(&cfg.Attrs, "attrs", false, "give every parked approval handler search attributes (requester, one of 1,000; priority, 0 to 4), indexed by the store")
	fs.StringVar(&cfg.Namespace, "namespace", "", "run the phases in namespace `NAME`: the started server serves it (serve --namespace) and every call names it")
	fs.BoolVar(&cfg.JSON, "json", false, "print the results as one JSON object")
	fs.StringVar(&cfg.Wfd, "wfd", "", "wfd `binary` to start as the server (default: this executable)")
	fs.StringVar(&cfg.Addr, "addr", "", "`host:port` of a running server to use instead of starting one")
	fs.IntVar(&cfg.ServerPID, "server-pid", 0, "`pid` of the --addr server, to report its memory and CPU")
	fs.StringVar(&cfg.Data, "data", "", "data `dir` of the started server (default: a new temporary directory, removed afterwards)")
	fs.StringVar(&cfg.Store, "store", "", "PostgreSQL `URL` the started server keeps handlers in (its serve --store; default: bbolt in --data)")
	fs.StringVar(&cfg.Route, "route", routeSpread, "with several replicas, where a resume goes: `spread` (the client's replica, round-robin: mostly forwarded) or owner (the replica owning the handler)")
	fs.IntVar(&cfg.Replicas, "replicas", 0, "start `N` replicas (serve --replica-id) on the --store database instead of one server, the clients spread over them round-robin (0: one server, not in replica mode)")
	fs.StringVar(&cfg.Compare, "compare-stores", "", "run the phases on bbolt and on PostgreSQL with each --compare-replicas count, --rounds times alternating, every PostgreSQL run on a new database created (and dropped) through this admin `URL`, and print one table")
	cfg.CompareReplicas = []int{0, 1, 3}
	fs.Func("compare-replicas", "with --compare-stores, the PostgreSQL runs: comma-separated `counts` of replicas, 0 for one server not in replica mode (default 0,1,3)", func(v string) error {
		cfg.CompareReplicas = nil
		for f := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 {
				return fmt.Errorf("%q is not a count of replicas", f)
			}
			cfg.CompareReplicas = append(cfg.CompareReplicas, n)
		}
		return nil
	})
	fs.IntVar(&cfg.Rounds, "rounds", 1, "with --compare-stores, how many `rounds` of runs")
	fs.IntVar(&cfg.Conns, "conns", 1, "HTTP/2 `connections` the clients share")
	fs.StringVar(&cfg.Client, "client", clientGRPCGo, "client `library` of the measured calls: grpc-go (as wfd's Go client) or connect-go")
	fs.StringVar(&cfg.Protocol, "protocol", "grpc", "wire `protocol`: grpc or connect (connect needs --client connect-go)")
	fs.BoolVar(&cfg.Gzip, "gzip", false, "accept gzip-compressed responses, as connect-go clients do by default (--client connect-go)")
	fs.IntVar(&cfg.Warmup, "warmup", 20, "echo `runs` before the measured phases (not reported)")
	fs.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "give up after this `duration`")
	fs.StringVar(&cfg.CPUProf, "cpuprofile", "", "write the benchmark's own (the client's) CPU profile to `file`")
	fs.DurationVar(&cfg.Grace, "grace", 15*time.Second, "how long the started server may take to stop after SIGTERM before it is killed")
	fs.IntVar(&cfg.Rehydrate, "rehydrate", 5000, "--mode release: released `handlers` answered in each rehydrate run (at most n/2)")
	fs.DurationVar(&cfg.Settle, "settle", 5*time.Second, "--mode release: how long to wait before the settled memory readings")
	fs.BoolVar(&cfg.ServerGC, "server-gc", true, "--mode release: serve the server's pprof (--debug-addr) and force its GC there before reading its live heap")
	fs.Func("worker", "run the phases again with the workflows served by a worker `process` in go, ts or python (comma-separated; each on a new server): bench-echo and bench-approval, as echo and approval", func(v string) error {
		for l := range strings.SplitSeq(v, ",") {
			if _, err := workerCommand(config{TSWorker: "-", PythonWorker: "-"}, l); err != nil {
				return err
			}
			cfg.Workers = append(cfg.Workers, l)
		}
		return nil
	})
	fs.BoolVar(&cfg.TLS, "tls", false, "run the phases with the workflows in the server again over TLS (a throwaway CA and certificate), with a bearer token on every call that the server verifies (--auth-tokens), on a new server, and compare")
	fs.BoolVar(&cfg.InProcess, "in-process", true, "with --worker, run the phases with the workflows in the server first (false: the workers only)")
	fs.IntVar(&cfg.WorkerMaxRuns, "worker-max-runs", 64, "step `runs` a worker process takes at once")
	fs.StringVar(&cfg.TSWorker, "ts-worker", "", "`command` of the TypeScript worker (default: node examples/ts/bench-worker.mjs, from the repository root); --addr and --max-runs are added")
	fs.StringVar(&cfg.PythonWorker, "python-worker", "", "`command` of the Python worker (default: clients/python/.venv/bin/python, else python3, examples/python/bench_worker.py); --addr and --max-runs are added")
	fs.StringVar(&cfg.HeapProf, "heapprofile", "", "--mode release: save the server's heap profile with n handlers parked to `prefix`.parked and after the releases to prefix.released")
}

// check checks the parsed flags against each other (set: the flags given;
// rest: the arguments after them). The groups run in this order, each
// returning its first error, so that a command line with several mistakes
// is told about the same one first whatever the grouping.
func (cfg *config) check(set map[string]bool, rest []string) error {
	if err := cfg.checkMode(set); err != nil {
		return err
	}
	if err := cfg.checkRelease(set); err != nil {
		return err
	}
	if err := cfg.checkAttrs(); err != nil {
		return err
	}
	if err := cfg.checkNamespace(); err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q", rest[0])
	}
	if err := cfg.checkLoad(); err != nil {
		return err
	}
	if err := cfg.checkServer(set); err != nil {
		return err
	}
	return cfg.checkStores(set)
}

// checkMode checks --mode, and --mode unread's flags.
func (cfg *config) checkMode(set map[string]bool) error {
	switch {
	case cfg.Mode != modePhases && cfg.Mode != modeRelease && cfg.Mode != modeUnread:
		return fmt.Errorf("--mode %q is not one of %s, %s, %s", cfg.Mode, modePhases, modeRelease, modeUnread)
	case cfg.Mode == modeUnread && (cfg.Addr != "" || cfg.Store != "" || cfg.Streams < 1 || cfg.Hold <= 0):
		return errors.New("--mode unread starts its own server on bbolt (no --addr, --store) and needs --streams >= 1 and a positive --hold")
	case cfg.Mode != modeUnread && (set["streams"] || set["hold"]):
		return errors.New("--streams and --hold need --mode unread")
	}
	return nil
}

// checkNamespace checks --namespace and what it excludes.
func (cfg *config) checkNamespace() error {
	if cfg.Namespace == "" {
		return nil
	}
	if err := namespace.Check(cfg.Namespace); err != nil {
		return fmt.Errorf("--namespace: %w", err)
	}
	if cfg.Namespace == namespace.Default || cfg.Mode != modePhases || len(cfg.Workers) > 0 || cfg.TLS {
		return errors.New("--namespace applies to the phases of the in-process workflows in a namespace other than default: not with --mode release or unread, --worker or --tls")
	}
	return nil
}

// checkAttrs checks what --attrs excludes.
func (cfg *config) checkAttrs() error {
	if cfg.Attrs && (cfg.Mode != modePhases || len(cfg.Workers) > 0) {
		return errors.New("--attrs applies to the phases of the in-process approval workflow: not with --mode release or --worker")
	}
	return nil
}

// checkRelease checks what --mode release excludes and its own flags.
func (cfg *config) checkRelease(set map[string]bool) error {
	switch {
	case cfg.Mode == modeRelease && cfg.N < 2:
		return errors.New("--mode release needs -n of at least 2 (one rehydrate run at 1 client, one at -c)")
	case cfg.Mode == modeRelease && (cfg.Addr != "" || cfg.ServerPID != 0):
		return errors.New("--mode release starts and restarts its own server: --addr and --server-pid do not apply")
	case cfg.Mode == modeRelease && cfg.Store != "":
		return errors.New("--mode release measures the bbolt file: --store does not apply")
	case cfg.Mode == modeRelease && set["echo"]:
		return errors.New("--mode release runs no echo phase: --echo does not apply")
	case cfg.Mode == modePhases && (set["rehydrate"] || set["settle"] || set["server-gc"] || set["heapprofile"]):
		return errors.New("--rehydrate, --settle, --server-gc and --heapprofile need --mode release")
	case cfg.Rehydrate < 1:
		return errors.New("--rehydrate must be at least 1")
	case cfg.Settle < 0:
		return errors.New("--settle must not be negative")
	case cfg.HeapProf != "" && !cfg.ServerGC:
		return errors.New("--heapprofile needs --server-gc (the heap profile comes from the server's pprof endpoint)")
	}
	return nil
}

// checkLoad checks the load the clients put on the server: the counts, the
// client library and protocol, the timeout.
func (cfg *config) checkLoad() error {
	switch {
	case cfg.N < 1:
		return errors.New("-n must be at least 1")
	case cfg.C < 1:
		return errors.New("-c must be at least 1")
	case cfg.Echo < 0, cfg.Warmup < 0:
		return errors.New("--echo and --warmup must not be negative")
	case cfg.Conns < 1:
		return errors.New("--conns must be at least 1")
	case cfg.Protocol != "grpc" && cfg.Protocol != "connect":
		return fmt.Errorf("--protocol %q is not one of grpc, connect", cfg.Protocol)
	case cfg.Client != clientGRPCGo && cfg.Client != clientConnectGo:
		return fmt.Errorf("--client %q is not one of %s, %s", cfg.Client, clientGRPCGo, clientConnectGo)
	case cfg.Client == clientGRPCGo && (cfg.Protocol != "grpc" || cfg.Gzip):
		return errors.New("--protocol connect and --gzip need --client connect-go (grpc-go speaks gRPC and asks for no compression)")
	case cfg.Timeout <= 0:
		return errors.New("--timeout must be positive")
	}
	return nil
}

// checkServer checks where the workflows run: the server started or
// found (--addr), the worker processes, --tls.
func (cfg *config) checkServer(set map[string]bool) error {
	switch {
	case cfg.Addr != "" && (cfg.Wfd != "" || cfg.Data != "" || cfg.Store != ""):
		return errors.New("--addr uses a running server: --wfd, --data and --store start one")
	case cfg.Mode == modeRelease && (len(cfg.Workers) > 0 || set["in-process"]):
		return errors.New("--mode release runs the built-in workflows: --worker and --in-process do not apply")
	case cfg.Addr != "" && len(cfg.Workers) > 1:
		return errors.New("--addr with --worker takes one language: the workers register the same workflows, each needs its own server")
	case !cfg.InProcess && len(cfg.Workers) == 0:
		return errors.New("--in-process=false needs --worker (nothing would run)")
	case cfg.WorkerMaxRuns < 1:
		return errors.New("--worker-max-runs must be at least 1")
	case cfg.TLS && (cfg.Mode != modePhases || cfg.Addr != "" || !cfg.InProcess):
		return errors.New("--tls starts its own TLS server for the in-process phases: not with --mode release, --addr or --in-process=false")
	case cfg.ServerPID != 0 && cfg.Addr == "":
		return errors.New("--server-pid needs --addr (a started server's pid is known)")
	}
	return nil
}

// checkRoute checks --route.
func (cfg *config) checkRoute() error {
	switch {
	case cfg.Route != routeSpread && cfg.Route != routeOwner:
		return fmt.Errorf("--route %q: want %s or %s", cfg.Route, routeSpread, routeOwner)
	case cfg.Route == routeOwner && cfg.Replicas == 0 && cfg.Compare == "":
		return errors.New("--route owner needs --replicas or --compare-stores: one server owns every handler")
	}
	return nil
}

// checkStores checks --replicas and --compare-stores.
func (cfg *config) checkStores(set map[string]bool) error {
	if err := cfg.checkRoute(); err != nil {
		return err
	}
	switch {
	case cfg.Replicas < 0:
		return errors.New("--replicas must not be negative")
	case cfg.Replicas > 0 && cfg.Store == "":
		return errors.New("--replicas needs --store: the replicas share a PostgreSQL database")
	case (cfg.Replicas > 0 || cfg.Compare != "") && (cfg.Mode != modePhases || cfg.Addr != "" || len(cfg.Workers) > 0 || cfg.TLS):
		return errors.New("--replicas and --compare-stores start their own servers for the in-process phases: not with --mode release, --addr, --worker or --tls")
	case cfg.Compare != "" && (cfg.Store != "" || cfg.Replicas > 0 || cfg.Data != ""):
		return errors.New("--compare-stores chooses the stores itself: not with --store, --replicas or --data")
	case (set["compare-replicas"] || set["rounds"]) && cfg.Compare == "":
		return errors.New("--compare-replicas and --rounds need --compare-stores")
	case cfg.Rounds < 1:
		return errors.New("--rounds must be at least 1")
	}
	return nil
}

func writeDefaults(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, "\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		left := "--" + f.Name
		if len(f.Name) == 1 {
			left = "-" + f.Name
		}
		if name != "" {
			left += " " + name
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			usage += " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(w, "  %-24s %s\n", left, usage)
	})
}

// run runs the phases with the workflows in the server, then with each
// --worker, and returns what it measured so far even when it fails.
func run(ctx context.Context, cfg config, log io.Writer) (res *Result, err error) {
	if cfg.Mode == modeRelease {
		return runRelease(ctx, cfg, log)
	}
	if cfg.Mode == modeUnread {
		return runUnread(ctx, cfg, log)
	}
	res = &Result{Config: resultConfig{
		Mode: cfg.Mode, N: cfg.N, C: cfg.C, Echo: cfg.Echo, Conns: cfg.Conns, Client: cfg.Client, Protocol: cfg.Protocol, Gzip: cfg.Gzip,
		Fsync: "on (the server's default)",
	}}
	if cfg.Addr != "" {
		res.Config.Fsync = "the running server's setting"
	}
	if cfg.Replicas > 0 || cfg.Compare != "" {
		res.Config.Route = cfg.Route
	}
	if cfg.Compare != "" {
		res.Config.Rounds = cfg.Rounds
		return res, runCompare(ctx, cfg, res, log)
	}
	if cfg.InProcess {
		err := runMode(ctx, cfg, "", &res.modeResult, nil)
		res.Config.Server, res.Config.ServerPID = res.Server, res.ServerPID
		res.Server, res.ServerPID = "", 0
		if err != nil {
			return res, err
		}
	}
	if cfg.TLS {
		sec, err := newSecurity()
		if err != nil {
			return res, fmt.Errorf("--tls: %w", err)
		}
		defer sec.close()
		res.TLS = &modeResult{}
		if err := runMode(ctx, cfg, "", res.TLS, sec); err != nil {
			return res, fmt.Errorf("--tls: %w", err)
		}
	}
	for _, lang := range cfg.Workers {
		m := &modeResult{Worker: lang}
		res.Workers = append(res.Workers, m)
		if err := runMode(ctx, cfg, lang, m, nil); err != nil {
			return res, fmt.Errorf("--worker %s: %w", lang, err)
		}
		if res.Config.Server == "" {
			res.Config.Server, res.Config.ServerPID = m.Server, m.ServerPID
		}
	}
	return res, nil
}

// runMode starts (or finds) the server, starts lang's worker (none for
// ""), runs the phases into res and stops what it started. With sec the
// server and the clients speak TLS. With --replicas the server is several
// replicas (replicas.go).
func runMode(ctx context.Context, cfg config, lang string, res *modeResult, sec *security) (err error) {
	addr, pid := cfg.Addr, cfg.ServerPID
	var srvs []*child
	if addr == "" {
		var extra []string
		if sec != nil {
			extra = sec.serveArgs()
		}
		srvs, err = startServers(cfg, extra)
		if err != nil {
			return err
		}
		addr, pid = srvs[0].addr, srvs[0].pid()
		res.Server = "started: " + strings.Join(srvs[0].args, " ")
		if len(srvs) > 1 {
			res.Server = fmt.Sprintf("started %d replicas, the first: %s", len(srvs), strings.Join(srvs[0].args, " "))
		}
		defer func() {
			if serr := stopServers(srvs, cfg.Grace); serr != nil {
				err = errors.Join(err, serr)
			}
		}()
	} else {
		res.Server = "running at " + addr
	}
	res.ServerPID, res.Replicas = pid, cfg.Replicas
	cl := newClients(addr, cfg, sec)
	defer cl.close()
	b := &runner{cfg: cfg, cl: cl, pid: pid, res: res, echoWF: echoWorkflow, approvalWF: approvalWorkflow}
	for i, s := range srvs {
		c := cl
		if i > 0 {
			c = newClients(s.addr, cfg, sec)
			defer c.close()
			b.more, b.morePIDs = append(b.more, c), append(b.morePIDs, s.pid())
		}
		if cfg.Replicas > 0 {
			res.ReplicaPIDs = append(res.ReplicaPIDs, s.pid())
		}
		if err := waitHealthy(ctx, c, s, 10*time.Millisecond); err != nil {
			return err
		}
	}
	if srvs == nil {
		if err := waitHealthy(ctx, cl, nil, 10*time.Millisecond); err != nil {
			return err
		}
	}
	if cfg.Store != "" {
		// Not measured (nil) when the database is not on this machine.
		b.pg, _ = findPostgres(ctx, cfg.Store)
	}
	if lang != "" {
		w, err := startWorker(ctx, cfg, cl, lang, addr)
		if err != nil {
			return err
		}
		// Stopped before the server: a worker outliving its server would
		// only reconnect in vain.
		defer func() {
			if werr := w.stop(cfg.Grace); werr != nil {
				err = errors.Join(err, werr)
			}
		}()
		res.WorkerCommand, res.WorkerPID = strings.Join(w.args, " "), w.pid()
		b.workerPID, b.echoWF, b.approvalWF = w.pid(), workerEchoWorkflow, workerApprovalWorkflow
	}
	return b.phases(ctx)
}
