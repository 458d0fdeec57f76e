//go:build linux

package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgProcs measures the CPU time of a PostgreSQL server on this machine:
// its postmaster and every process it started (backends, background
// writers, the WAL writer). A backend that exited is counted too: the
// postmaster waited for it, so its time is in the postmaster's children
// times (cutime, cstime) from then on.
type pgProcs struct {
	postmaster int
}

// findPostgres finds the server of the database at url: the parent of the
// backend that serves a new connection. It fails when that process is not
// on this machine (no /proc entry named postgres).
func findPostgres(ctx context.Context, url string) (*pgProcs, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close(ctx) }()
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return nil, err
	}
	st, err := procStat(backend)
	if err != nil {
		return nil, fmt.Errorf("the PostgreSQL backend (pid %d) is not on this machine: %w", backend, err)
	}
	pm, err := procStat(st.ppid)
	if err != nil {
		return nil, err
	}
	if st.comm != "postgres" || pm.comm != "postgres" {
		return nil, fmt.Errorf("pid %d (%s) and its parent %d (%s) are not PostgreSQL's", backend, st.comm, st.ppid, pm.comm)
	}
	return &pgProcs{postmaster: st.ppid}, nil
}

// cpu is the server's CPU time so far (user and system).
func (p *pgProcs) cpu() (time.Duration, error) {
	pm, err := procStat(p.postmaster)
	if err != nil {
		return 0, err
	}
	ticks := pm.utime + pm.stime + pm.cutime + pm.cstime
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := procStat(pid)
		if err != nil || st.ppid != p.postmaster {
			continue // gone meanwhile, or not the server's
		}
		ticks += st.utime + st.stime + st.cutime + st.cstime
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}
