package histcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/internal/pgtest"
)

// Build builds `wfd` from this module into dir and returns its path. It
// takes tens of seconds on a cold cache: build once per test binary.
func Build(ctx context.Context, dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("histcheck: no go command: %w", err)
	}
	path := filepath.Join(dir, "wfd")
	out, err := exec.CommandContext(ctx, goBin, "build", "-o", path, "github.com/wfd-dev/wfd/cmd/wfd").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("histcheck: go build: %w\n%s", err, out)
	}
	return path, nil
}

// ClusterConfig says what StartCluster starts.
type ClusterConfig struct {
	Bin      string        // the wfd binary (Build)
	Replicas int           // how many (default 3)
	TTL      time.Duration // --lease-ttl (default 2s)
	Dir      string        // replica logs and data directories
	Extra    []string      // more wfd serve flags
}

// Cluster is a PostgreSQL cluster of its own (so that it can be crashed)
// and the wfd replicas sharing one database in it.
type Cluster struct {
	TTL      time.Duration
	Replicas []*Replica
	URL      string

	pg     *pgtest.Cluster
	mu     sync.Mutex
	dbDown bool
	mon    *pgx.Conn // InTransaction's session, opened on first use
	// rowLocks: the pgrowlocks extension is there (LocksRows); tried once.
	rowLocks, rowLocksTried bool
}

// StartCluster starts PostgreSQL and the replicas, one after the other
// (the first one creates the schema). Everything is stopped when t ends;
// if t failed, the tail of every replica's log is logged. Without the
// PostgreSQL binaries t is skipped (failed with WFD_PGTEST_REQUIRE set).
func StartCluster(t testing.TB, cfg ClusterConfig) *Cluster {
	t.Helper()
	if cfg.Replicas == 0 {
		cfg.Replicas = 3
	}
	if cfg.TTL == 0 {
		cfg.TTL = 2 * time.Second
	}
	pg := pgtest.StartCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url, err := pg.CreateDatabase(ctx, "wfd_history")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{TTL: cfg.TTL, URL: url, pg: pg}
	t.Cleanup(func() {
		c.mu.Lock()
		if c.mon != nil {
			_ = c.mon.Close(context.Background())
		}
		c.mu.Unlock()
		if t.Failed() {
			for _, r := range c.Replicas {
				t.Logf("last lines of %s's log (all of it in %s):\n%s", r.ID, r.logPath, r.LogTail(40))
			}
		}
	})
	for i := range cfg.Replicas {
		id := fmt.Sprintf("r%d", i+1)
		addr, err := freeAddr()
		if err != nil {
			t.Fatal(err)
		}
		// Its sessions carry its id, so that pg_stat_activity tells
		// whose they are (InTransaction).
		store := url + "&application_name=wfd-" + id
		r := newReplica(cfg.Bin, id, addr, store, filepath.Join(cfg.Dir, id+"-data"), filepath.Join(cfg.Dir, id+".log"), cfg.TTL, cfg.Extra)
		c.Replicas = append(c.Replicas, r)
		// Registered after pgtest's: runs before PostgreSQL stops.
		t.Cleanup(func() { _ = r.Kill() })
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// freeAddr returns a loopback address with a port free at the moment; the
// replica keeps it across restarts.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("histcheck: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", fmt.Errorf("histcheck: %w", err)
	}
	return addr, nil
}

// Replica returns the replica with this id, or nil.
func (c *Cluster) Replica(id string) *Replica {
	for _, r := range c.Replicas {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// InState returns the replicas in one of the states.
func (c *Cluster) InState(states ...State) []*Replica {
	var out []*Replica
	for _, r := range c.Replicas {
		st := r.State()
		for _, s := range states {
			if st == s {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// CrashDB stops PostgreSQL as a crash would (pg_ctl stop -m immediate).
func (c *Cluster) CrashDB() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.pg.Crash(); err != nil {
		return err
	}
	if c.mon != nil {
		_ = c.mon.Close(context.Background())
		c.mon = nil
	}
	c.dbDown = true
	return nil
}

// RestartDB starts PostgreSQL again on the same port; it recovers from
// its WAL.
func (c *Cluster) RestartDB() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dbDown {
		return nil
	}
	if err := c.pg.Restart(); err != nil {
		return err
	}
	c.dbDown = false
	return nil
}

// InTransaction says whether a database session of replica id is idle
// in a transaction that has locked rows of wfd_leases (a commit's fence
// check, FOR SHARE): between two round trips of it, holding the locks
// until the replica sends the next. A read-only transaction (a load) does
// not count: it blocks nobody.
func (c *Cluster) InTransaction(ctx context.Context, id string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mon == nil {
		conn, err := pgx.Connect(ctx, c.URL+"&application_name=histcheck")
		if err != nil {
			return false, fmt.Errorf("histcheck: monitor session: %w", err)
		}
		c.mon = conn
	}
	var n int
	err := c.mon.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
		WHERE a.application_name = $1 AND a.state = 'idle in transaction'
		AND l.relation = 'wfd_leases'::regclass AND l.mode IN ('RowShareLock', 'RowExclusiveLock')`, "wfd-"+id).Scan(&n)
	if err != nil {
		_ = c.mon.Close(context.Background())
		c.mon = nil
		return false, fmt.Errorf("histcheck: pg_stat_activity: %w", err)
	}
	return n > 0, nil
}

// Recovering says whether a session of replica id has read the handlers
// it must recover at start-up (wfd's listing of running handlers by
// residency, the only such query a replica makes as it starts). It
// matches the query's text: if wfd's changes, it never holds, and a stall
// meant for the recovery does not happen (no false finding, a weaker run).
func (c *Cluster) Recovering(ctx context.Context, id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mon == nil {
		conn, err := pgx.Connect(ctx, c.URL+"&application_name=histcheck")
		if err != nil {
			return false
		}
		c.mon = conn
	}
	var n int
	err := c.mon.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE application_name = $1 AND query LIKE '%FROM wfd_handlers%residency =%'`, "wfd-"+id).Scan(&n)
	if err != nil {
		_ = c.mon.Close(context.Background())
		c.mon = nil
		return false
	}
	return n > 0
}

// LocksRows says whether a session of replica id, idle in a transaction,
// holds a lock on the lease row of one of handlers: another replica taking
// that handler over waits for it. It needs the pgrowlocks extension
// (PostgreSQL's contrib); without it, it is InTransaction.
func (c *Cluster) LocksRows(ctx context.Context, id string, handlers []string) (bool, error) {
	in, err := c.InTransaction(ctx, id)
	if !in || err != nil {
		return in, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.rowLocksTried {
		c.rowLocksTried = true
		_, err := c.mon.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pgrowlocks")
		c.rowLocks = err == nil
	}
	if !c.rowLocks {
		return true, nil
	}
	var n int
	err = c.mon.QueryRow(ctx, `SELECT count(*) FROM pgrowlocks('wfd_leases') p JOIN wfd_leases l ON l.ctid = p.locked_row
		WHERE l.handler_id = ANY($2) AND EXISTS (SELECT 1 FROM pg_stat_activity a
			WHERE a.pid = ANY(p.pids) AND a.application_name = $1 AND a.state = 'idle in transaction')`, "wfd-"+id, handlers).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("histcheck: pgrowlocks: %w", err)
	}
	return n > 0, nil
}

// DBUp says whether PostgreSQL is running.
func (c *Cluster) DBUp() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.dbDown
}

// Heal brings everything back: PostgreSQL up, paused replicas continued,
// dead ones started.
func (c *Cluster) Heal(ctx context.Context) error {
	var errs []error
	if err := c.RestartDB(); err != nil {
		errs = append(errs, err)
	}
	for _, r := range c.Replicas {
		switch r.State() {
		case Paused:
			errs = append(errs, r.Resume())
		case Down:
			errs = append(errs, r.Start(ctx))
		case Up:
			if dead, err := r.Exited(); dead {
				errs = append(errs, fmt.Errorf("histcheck: %s exited by itself: %v", r.ID, err), r.Start(ctx))
			}
		}
	}
	return errors.Join(errs...)
}

// Crashes lists the replicas whose process exited without being told to,
// with what their log said last: a replica must survive its peers' and
// its database's faults.
func (c *Cluster) Crashes() []string {
	var out []string
	for _, r := range c.Replicas {
		if dead, err := r.Exited(); dead {
			out = append(out, fmt.Sprintf("%s exited: %v\n%s", r.ID, err, indent(r.LogTail(15))))
		}
	}
	return out
}

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }
