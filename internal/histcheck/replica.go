package histcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"connectrpc.com/connect"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// State is where a replica process is.
type State int

// A replica is Down (never started, killed, stopped), Up (serving) or
// Paused (SIGSTOPped: its sockets stay open, nothing answers).
const (
	Down State = iota
	Up
	Paused
)

func (s State) String() string { return [...]string{"down", "up", "paused"}[s] }

// Replica is one `wfd serve --replica-id` process, restarted on the same
// address and data directory, so that what its peers have registered for
// it (its advertised address) stays right across restarts.
type Replica struct {
	ID   string
	Addr string

	args    []string // wfd serve's arguments
	bin     string
	logPath string

	// ops serialises what changes the process (start, signals); mu
	// guards the fields, and is never held while waiting, so that callers
	// asking for the state do not wait on a restart.
	ops    sync.Mutex
	mu     sync.Mutex
	state  State
	proc   *process
	starts int

	http   *http.Client
	client wfdv1connect.WorkflowServiceClient
}

// process is one run of the replica's binary.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

func newReplica(bin, id, addr, store, data, logPath string, ttl time.Duration, extra []string) *Replica {
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	// Pings find a connection to a paused or vanished process dead, so a
	// call on it fails as a transport error instead of hanging until its
	// deadline, and the next call dials again.
	tr := &http.Transport{Protocols: &protocols, HTTP2: &http.HTTP2Config{SendPingTimeout: time.Second, PingTimeout: time.Second}}
	hc := &http.Client{Transport: tr}
	r := &Replica{
		ID: id, Addr: addr, bin: bin, logPath: logPath, http: hc,
		client: wfdv1connect.NewWorkflowServiceClient(hc, "http://"+addr, connect.WithGRPC()),
		args: append([]string{"serve", "--addr", addr, "--advertise-addr", addr, "--store", store,
			"--replica-id", id, "--lease-ttl", ttl.String(), "--console-addr", "", "--data", data}, extra...),
	}
	return r
}

// Client is a Connect (gRPC protocol) client of this replica.
func (r *Replica) Client() wfdv1connect.WorkflowServiceClient { return r.client }

// State says where the process is.
func (r *Replica) State() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// Start starts the process and waits until its health check says
// SERVING. A start whose process exits at once (its port not yet free
// after a kill) is tried again.
func (r *Replica) Start(ctx context.Context) error {
	return r.StartStalled(ctx, nil, 0)
}

// StartStalled is Start with the new process stopped (SIGSTOP) for stall
// as soon as when says so (polled for up to two seconds from its exec): a
// replica that stalls during its start-up recovery (a crowded machine, a
// long GC pause), between what it read and what it writes.
func (r *Replica) StartStalled(ctx context.Context, when func(context.Context) bool, stall time.Duration) error {
	r.ops.Lock()
	defer r.ops.Unlock()
	r.mu.Lock()
	if r.proc != nil {
		select {
		case <-r.proc.exited: // it died by itself; Exited has told
			r.proc = nil
		default:
			r.mu.Unlock()
			return fmt.Errorf("histcheck: %s: already running", r.ID)
		}
	}
	r.mu.Unlock()
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if err = r.launch(ctx, when, stall); err == nil || ctx.Err() != nil {
			break
		}
		when = nil // a start that failed is tried again without the stall
	}
	return err
}

// launch starts one process and waits until it serves.
func (r *Replica) launch(ctx context.Context, when func(context.Context) bool, stall time.Duration) error {
	r.mu.Lock()
	r.starts++
	n := r.starts
	r.mu.Unlock()
	out, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("histcheck: %s log: %w", r.ID, err)
	}
	defer func() { _ = out.Close() }() // the child holds its own copy
	fmt.Fprintf(out, "=== histcheck: start %d of %s at %s ===\n", n, r.ID, time.Now().Format(time.RFC3339Nano))
	p := &process{cmd: exec.Command(r.bin, r.args...), exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	// The child dies with the test process, however it ends.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("histcheck: start %s: %w", r.ID, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	r.mu.Lock()
	r.proc = p
	r.mu.Unlock()
	if when != nil {
		r.stall(ctx, p, when, stall)
	}
	err = r.waitHealthy(ctx, p)
	if err != nil {
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.proc = nil
		return err
	}
	r.state = Up
	return nil
}

// stall stops p for stall once when holds, if it does within two seconds.
func (r *Replica) stall(ctx context.Context, p *process, when func(context.Context) bool, stall time.Duration) {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-p.exited:
			return
		default:
		}
		if when(ctx) {
			_ = p.cmd.Process.Signal(syscall.SIGSTOP)
			time.Sleep(stall) // the fault's length, not a wait for a condition
			_ = p.cmd.Process.Signal(syscall.SIGCONT)
			return
		}
	}
}

func (r *Replica) waitHealthy(ctx context.Context, p *process) error {
	health := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](
		r.http, "http://"+r.Addr+"/grpc.health.v1.Health/Check", connect.WithGRPC())
	deadline := time.Now().Add(testwait.Timeout)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		res, err := health.CallUnary(cctx, connect.NewRequest(&healthpb.HealthCheckRequest{}))
		cancel()
		if err == nil && res.Msg.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("histcheck: %s exited while starting: %v\n%s", r.ID, p.err, r.LogTail(20))
		case <-ctx.Done():
			return fmt.Errorf("histcheck: %s not healthy: %w", r.ID, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("histcheck: %s not healthy after %v: %v", r.ID, testwait.Timeout, err)
		}
	}
}

// Kill sends SIGKILL (a stopped process dies of it too) and waits for the
// process to be gone.
func (r *Replica) Kill() error {
	return r.end(syscall.SIGKILL, 0)
}

// Stop sends SIGTERM and waits for a clean exit, killing the process if it
// takes longer than testwait.Timeout.
func (r *Replica) Stop() error {
	return r.end(syscall.SIGTERM, testwait.Timeout)
}

func (r *Replica) end(sig syscall.Signal, wait time.Duration) error {
	r.ops.Lock()
	defer r.ops.Unlock()
	r.mu.Lock()
	p, paused := r.proc, r.state == Paused
	r.mu.Unlock()
	if p == nil {
		return nil
	}
	if paused {
		_ = p.cmd.Process.Signal(syscall.SIGCONT) // SIGTERM waits for a stopped process
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("histcheck: signal %s: %w", r.ID, err)
	}
	if wait > 0 {
		select {
		case <-p.exited:
		case <-time.After(wait):
			_ = p.cmd.Process.Kill()
		}
	}
	<-p.exited
	r.mu.Lock()
	r.proc, r.state = nil, Down
	r.mu.Unlock()
	r.http.CloseIdleConnections()
	return nil
}

// Pause sends SIGSTOP: the process stays, with its sockets and database
// sessions, and does nothing.
func (r *Replica) Pause() error {
	return r.signal(syscall.SIGSTOP, Up, Paused)
}

// Resume sends SIGCONT to a paused replica.
func (r *Replica) Resume() error {
	return r.signal(syscall.SIGCONT, Paused, Up)
}

func (r *Replica) signal(sig syscall.Signal, from, to State) error {
	r.ops.Lock()
	defer r.ops.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != from || r.proc == nil {
		return fmt.Errorf("histcheck: %s is %v, not %v", r.ID, r.state, from)
	}
	if err := r.proc.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("histcheck: signal %s: %w", r.ID, err)
	}
	r.state = to
	return nil
}

// Exited says whether the process died by itself (it was not stopped or
// killed through the Replica), with its error; a replica that exits by
// itself is a finding.
func (r *Replica) Exited() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == nil {
		return false, nil
	}
	select {
	case <-r.proc.exited:
		return true, r.proc.err
	default:
		return false, nil
	}
}

// Log returns everything the replica's processes wrote.
func (r *Replica) Log() string {
	b, _ := os.ReadFile(r.logPath)
	return string(b)
}

// LogTail returns the last n lines of the replica's log.
func (r *Replica) LogTail(n int) string {
	b, _ := os.ReadFile(r.logPath)
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(string(bytes.Join(lines, []byte("\n"))))
}
