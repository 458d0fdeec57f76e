package bench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"connectrpc.com/connect"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
)

// child is a wfd server the benchmark started.
type child struct {
	cmd       *exec.Cmd
	args      []string
	extra     []string // serve flags after --addr and --data, kept for a restart
	addr      string
	debugAddr string // --debug-addr (pprof), "" when not asked for
	data      string
	tmpData   bool
	started   time.Time // just before the process was started
	stopped   bool      // terminate has run
	out       *tailBuffer
	exited    chan struct{} // closed when the process has exited
	waitErr   error         // set before exited is closed
}

// startChild starts `wfd serve` on a free loopback port with the extra
// serve flags; with debug it also serves pprof (--debug-addr) on another
// free port.
func startChild(cfg config, debug bool, extra ...string) (*child, error) {
	bin := cfg.Wfd
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding this executable to start the server (use --wfd): %w", err)
		}
		bin = exe
	}
	if cfg.Store != "" {
		extra = append(extra, "--store", cfg.Store)
	}
	if cfg.Namespace != "" {
		extra = append(extra, "--namespace", cfg.Namespace)
	}
	data, tmp := cfg.Data, false
	if data == "" {
		var err error
		if data, err = os.MkdirTemp("", "wfd-bench-"); err != nil {
			return nil, err
		}
		tmp = true
	}
	c, err := spawn(bin, data, debug, extra)
	if err != nil {
		if tmp {
			_ = os.RemoveAll(data)
		}
		return nil, err
	}
	c.tmpData = tmp
	return c, nil
}

// spawn starts `bin serve` on data with new free ports.
func spawn(bin, data string, debug bool, extra []string) (*child, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	c := &child{addr: fmt.Sprintf("127.0.0.1:%d", port), data: data, extra: extra, out: &tailBuffer{max: 64 << 10}, exited: make(chan struct{})}
	c.args = []string{bin, "serve", "--addr", c.addr, "--data", c.data}
	c.args = append(c.args, extra...)
	if debug {
		dport, err := freePort()
		if err != nil {
			return nil, err
		}
		c.debugAddr = fmt.Sprintf("127.0.0.1:%d", dport)
		c.args = append(c.args, "--debug-addr", c.debugAddr)
	}
	c.cmd = exec.Command(bin, c.args[1:]...)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	c.cmd.SysProcAttr = childAttrs()
	c.started = time.Now()
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the server: %w", err)
	}
	go func() {
		c.waitErr = c.cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// restart starts the same server again on the same data directory (with
// new ports) once c has been terminated. The new child owns the data
// directory from then on: stopping it removes a temporary one.
func (c *child) restart() (*child, error) {
	n, err := spawn(c.args[0], c.data, c.debugAddr != "", c.extra)
	if err != nil {
		return nil, err
	}
	n.tmpData, c.tmpData = c.tmpData, false
	return n, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// stop terminates the server (unless that was done) and removes a
// temporary data directory.
func (c *child) stop(grace time.Duration) error {
	defer c.removeData()
	if c.stopped {
		return nil
	}
	return c.terminate(grace)
}

// terminate sends SIGTERM, waits up to grace, then kills. It reports an
// unclean exit with the end of the server's output.
func (c *child) terminate(grace time.Duration) error {
	c.stopped = true
	select {
	case <-c.exited:
		return c.exitError("server exited early")
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		return c.exitError("server shutdown")
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.exited
		return fmt.Errorf("server did not stop within %v of SIGTERM; killed it\n%s", grace, c.out.String())
	}
}

func (c *child) exitError(what string) error {
	if c.waitErr == nil {
		return nil
	}
	return fmt.Errorf("%s: %v\n%s", what, c.waitErr, c.out.String())
}

func (c *child) removeData() {
	if c.tmpData {
		_ = os.RemoveAll(c.data)
	}
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before the server binds it; the server then fails to start and
// says so.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitHealthy polls grpc.health.v1.Health/Check, every interval, until
// the server says SERVING. With a started server it gives up as soon as
// the process exits.
func waitHealthy(ctx context.Context, cl *clients, c *child, interval time.Duration) error {
	health := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](
		cl.conns[0].http, cl.base+"/grpc.health.v1.Health/Check", connect.WithGRPC())
	req := connect.NewRequest(&healthpb.HealthCheckRequest{Service: wfdv1connect.WorkflowServiceName})
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var last error
	for {
		cctx, ccancel := context.WithTimeout(ctx, time.Second)
		res, err := health.CallUnary(cctx, req)
		ccancel()
		if err == nil && res.Msg.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("status %v", res.Msg.GetStatus())
		}
		last = err
		var exited <-chan struct{}
		if c != nil {
			exited = c.exited
		}
		select {
		case <-exited:
			return fmt.Errorf("server exited before it was healthy: %v\n%s", c.waitErr, c.out.String())
		case <-ctx.Done():
			return fmt.Errorf("server at %s not healthy: %w (last check: %v)", cl.base, ctx.Err(), last)
		case <-time.After(interval):
		}
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu   sync.Mutex
	max  int
	what string // whose output, for String (default "server")
	buf  bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	what := t.what
	if what == "" {
		what = "server"
	}
	if t.buf.Len() == 0 {
		return "(the " + what + " wrote nothing)"
	}
	return what + " output (last part):\n" + t.buf.String()
}
