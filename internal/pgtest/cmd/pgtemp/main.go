// Command pgtemp runs a throwaway PostgreSQL cluster for tests outside Go
// (the console's browser tests): it starts one with package pgtest
// (initdb and pg_ctl, as the postgres user when run as root, on a free
// loopback port, fsync on, stopped by a watchdog if pgtemp dies), creates
// an empty database, prints its URL on one line of stdout, and stops the
// cluster and removes its directory when its stdin closes or it gets
// SIGTERM or SIGINT.
//
// Without PostgreSQL's server binaries it prints why on stderr and exits
// with status 3, so the caller can skip (or fail, as CI does) knowingly;
// any other failure exits with status 1.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/wfd-dev/wfd/internal/pgtest"
)

// exitNoBinaries is the status without PostgreSQL's server binaries.
const exitNoBinaries = 3

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Stdin, os.Stdout, os.Stderr))
}

func run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := pgtest.Start()
	if err != nil {
		_, _ = fmt.Fprintln(stderr, err)
		if errors.Is(err, pgtest.ErrNoBinaries) {
			return exitNoBinaries
		}
		return 1
	}
	defer c.Stop()
	url, err := c.CreateDatabase(ctx, "wfd")
	if err != nil {
		_, _ = fmt.Fprintln(stderr, err)
		return 1
	}
	if _, err := fmt.Fprintln(stdout, url); err != nil {
		_, _ = fmt.Fprintln(stderr, err)
		return 1
	}
	// Runs until stdin ends (the caller closed it, or died) or a signal.
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(eof)
	}()
	select {
	case <-eof:
	case <-ctx.Done():
	}
	return 0
}
