package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestRun starts a cluster, connects to the database whose URL it prints
// (fsync on), and stops it both ways: stdin closed, or a signal (the
// context). Once run returns, the database is gone.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(stdin io.Closer, cancel context.CancelFunc)
	}{
		{"stdin closed", func(stdin io.Closer, _ context.CancelFunc) { _ = stdin.Close() }},
		{"signal", func(_ io.Closer, cancel context.CancelFunc) { cancel() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stdinR, stdinW := io.Pipe()
			defer func() { _ = stdinW.Close() }()
			stdoutR, stdoutW := io.Pipe()
			var stderr strings.Builder
			code := make(chan int, 1)
			go func() {
				code <- run(ctx, stdinR, stdoutW, &stderr)
				_ = stdoutW.Close()
			}()
			line, err := bufio.NewReader(stdoutR).ReadString('\n')
			if err != nil {
				c := <-code
				if c == exitNoBinaries && os.Getenv(pgtest.EnvRequire) == "" {
					t.Skip(stderr.String())
				}
				t.Fatalf("no URL (exit %d): %v\n%s", c, err, stderr.String())
			}
			url := strings.TrimSpace(line)
			qctx, qcancel := context.WithTimeout(ctx, testwait.Timeout)
			defer qcancel()
			conn, err := pgx.Connect(qctx, url)
			if err != nil {
				t.Fatal(err)
			}
			var fsync string
			err = conn.QueryRow(qctx, "SHOW fsync").Scan(&fsync)
			_ = conn.Close(qctx)
			if err != nil || fsync != "on" {
				t.Fatalf("SHOW fsync: %q, %v; want on", fsync, err)
			}

			tc.stop(stdinW, cancel)
			if c := <-code; c != 0 {
				t.Fatalf("exit %d, want 0\n%s", c, stderr.String())
			}
			after, acancel := context.WithTimeout(context.Background(), testwait.Timeout)
			defer acancel()
			if conn, err := pgx.Connect(after, url); err == nil {
				_ = conn.Close(after)
				t.Fatal("the database still answers once run has returned")
			}
		})
	}
}
