package pgtest

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
)

// startWatchdog starts a shell that stops the cluster and removes its
// directory if this process dies without calling Stop (a test binary
// killed by go test's -timeout exits without running deferred calls): the
// kernel sends it SIGTERM when we die (Pdeathsig), and it traps that.
// Stop kills it with SIGKILL first, which it cannot trap.
func (c *Cluster) startWatchdog() error {
	stop := fmt.Sprintf("%s -D %s -m immediate -w stop", filepath.Join(c.bin, "pg_ctl"), c.data())
	if c.asPG {
		stop = "runuser -u postgres -- " + stop
	}
	// It says "ready" once the trap is set: a SIGTERM before that would
	// end it without stopping anything.
	script := fmt.Sprintf("trap '%s >/dev/null 2>&1; rm -rf %s; exit 0' TERM; echo ready; while :; do sleep 3600 & wait $!; done", stop, c.dir)
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("pgtest: watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: watchdog: %w", err)
	}
	c.watchdog = cmd
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		return fmt.Errorf("pgtest: watchdog: %w", err)
	}
	return nil
}

func (c *Cluster) stopWatchdog() {
	if c.watchdog != nil {
		_ = c.watchdog.Process.Kill()
		_ = c.watchdog.Wait()
	}
}
