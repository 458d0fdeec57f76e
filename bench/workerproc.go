package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
)

// The languages --worker takes.
const (
	langGo     = "go"
	langTS     = "ts"
	langPython = "python"
)

// workerCommand is the command that starts the bench worker of lang,
// before the --addr and --max-runs the benchmark adds. The TypeScript and
// Python ones are scripts in the repository's examples/, so by default
// the benchmark runs from the repository root; --ts-worker and
// --python-worker name other commands.
func workerCommand(cfg config, lang string) ([]string, error) {
	switch lang {
	case langGo:
		// The wfd binary serves the Go bench worker: --wfd, else this one.
		exe := cfg.Wfd
		if exe == "" {
			var err error
			if exe, err = os.Executable(); err != nil {
				return nil, fmt.Errorf("finding this executable to start the Go worker: %w", err)
			}
		}
		return []string{exe, "bench", "worker"}, nil
	case langTS:
		if cfg.TSWorker != "" {
			return strings.Fields(cfg.TSWorker), nil
		}
		return scriptCommand("node", "examples/ts/bench-worker.mjs", "--ts-worker")
	case langPython:
		if cfg.PythonWorker != "" {
			return strings.Fields(cfg.PythonWorker), nil
		}
		py := "python3"
		// The client's test venv has wfd-client installed (clients/python/test.sh).
		if _, err := os.Stat("clients/python/.venv/bin/python"); err == nil {
			py = "clients/python/.venv/bin/python"
		}
		return scriptCommand(py, "examples/python/bench_worker.py", "--python-worker")
	}
	return nil, fmt.Errorf("--worker %q is not one of %s, %s, %s", lang, langGo, langTS, langPython)
}

func scriptCommand(interp, script, flagName string) ([]string, error) {
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("%s not found: run wfd bench from the repository root, or give the worker's command with %s", script, flagName)
	}
	return []string{interp, script}, nil
}

// workerProc is a bench worker process the benchmark started.
type workerProc struct {
	lang    string
	args    []string
	cmd     *exec.Cmd
	out     *tailBuffer
	exited  chan struct{}
	waitErr error
}

// startWorker starts the worker of lang against addr and waits until the
// server lists it serving both bench workflows.
func startWorker(ctx context.Context, cfg config, cl *clients, lang, addr string) (*workerProc, error) {
	args, err := workerCommand(cfg, lang)
	if err != nil {
		return nil, err
	}
	args = append(args, "--addr", addr, "--max-runs", strconv.Itoa(cfg.WorkerMaxRuns))
	p := &workerProc{lang: lang, args: args, out: &tailBuffer{max: 64 << 10, what: lang + " worker"}, exited: make(chan struct{})}
	p.cmd = exec.Command(args[0], args[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = childAttrs()
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s worker (%s): %w", lang, strings.Join(args, " "), err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	wc := wfdv1connect.NewWorkerServiceClient(cl.conns[0].http, cl.base)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		res, err := wc.ListWorkers(ctx, &wfdv1.ListWorkersRequest{})
		if err == nil && slices.ContainsFunc(res.GetWorkers(), serving) {
			return p, nil
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("the %s worker (%s) exited before it connected: %v\n%s", lang, strings.Join(args, " "), p.waitErr, p.out.String())
		case <-ctx.Done():
			_ = p.stop(time.Second) // the connect failure is the error to report
			return nil, fmt.Errorf("the %s worker did not connect: %w (last ListWorkers error: %v)\n%s", lang, ctx.Err(), err, p.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func serving(w *wfdv1.WorkerInfo) bool {
	return slices.Contains(w.GetWorkflows(), workerEchoWorkflow) && slices.Contains(w.GetWorkflows(), workerApprovalWorkflow)
}

func (p *workerProc) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM and waits up to grace, then kills the worker. A
// worker that exits with an error is reported with its output.
func (p *workerProc) stop(grace time.Duration) error {
	select {
	case <-p.exited:
		return fmt.Errorf("the %s worker exited during the benchmark: %v\n%s", p.lang, p.waitErr, p.out.String())
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if p.waitErr != nil {
			return fmt.Errorf("the %s worker: %v\n%s", p.lang, p.waitErr, p.out.String())
		}
		return nil
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("the %s worker did not stop within %v of SIGTERM; killed it", p.lang, grace)
	}
}
