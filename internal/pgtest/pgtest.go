// Package pgtest runs a real PostgreSQL server for tests: one cluster per
// test binary, started by Main from TestMain, and a fresh database per
// test (NewDatabase), dropped when the test ends.
//
// It uses the server binaries of the machine (Debian's postgresql package
// puts them in /usr/lib/postgresql/<version>/bin; WFD_PG_BIN overrides
// the directory). initdb refuses to run as root, so as root the cluster is
// created and run as the unprivileged postgres user (runuser), in a
// temporary directory that user owns. The server listens on a free
// loopback port and its own socket directory, with fsync on: what the
// tests call durable is durable.
//
// Without the binaries, tests that need a database skip with a message
// saying so, unless WFD_PGTEST_REQUIRE is set (CI sets it): then Main
// fails, so a CI machine without PostgreSQL cannot pass by skipping.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables.
const (
	// EnvBin names the directory of initdb, pg_ctl and postgres.
	EnvBin = "WFD_PG_BIN"
	// EnvRequire makes missing binaries fail Main instead of skipping.
	EnvRequire = "WFD_PGTEST_REQUIRE"
	// envAdmin carries the running cluster's admin URL from Main to
	// NewDatabase (and to the processes tests start); envSkip why there
	// is none.
	envAdmin = "WFD_PGTEST_ADMIN_URL"
	envSkip  = "WFD_PGTEST_SKIP"
)

// ErrNoBinaries is returned by Start when no PostgreSQL server binaries
// are found.
var ErrNoBinaries = errors.New("pgtest: PostgreSQL server binaries not found (install Debian's postgresql package, or set " + EnvBin + ")")

// Main starts a cluster, runs the tests and stops it: call it from
// TestMain as os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	c, err := Start()
	switch {
	case errors.Is(err, ErrNoBinaries) && os.Getenv(EnvRequire) == "":
		_ = os.Setenv(envSkip, err.Error())
		return m.Run()
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Stop()
	_ = os.Setenv(envAdmin, c.AdminURL())
	return m.Run()
}

// Cluster is a running PostgreSQL server in a temporary directory.
type Cluster struct {
	bin  string
	dir  string // owned by the user the server runs as
	port int
	asPG bool // run the binaries as the postgres user (we are root)
	// watchdog stops the cluster if this process dies without Stop
	// (watchdog_linux.go); nil elsewhere.
	watchdog *exec.Cmd
}

// Start creates a cluster in a temporary directory and starts it.
func Start() (*Cluster, error) {
	bin := findBin()
	if bin == "" {
		return nil, ErrNoBinaries
	}
	c := &Cluster{bin: bin, asPG: os.Geteuid() == 0}
	dir, err := os.MkdirTemp("", "wfd-pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c.dir = dir
	if c.asPG {
		u, err := user.Lookup("postgres")
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: running as root needs the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	// --no-sync only skips initdb's own final fsync of the new files;
	// the server runs with fsync on.
	if out, err := c.run("initdb", "-D", c.data(), "-U", "wfd", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	// A free port can be taken between the probe and the server's bind:
	// try a few.
	for attempt := 0; ; attempt++ {
		c.port, err = freePort()
		if err == nil {
			err = c.start()
		}
		if err == nil {
			if err := c.startWatchdog(); err != nil {
				c.Stop()
				return nil, err
			}
			return c, nil
		}
		if attempt == 3 {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *Cluster) start() error {
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c max_connections=300", c.port, c.dir)
	out, err := c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-w", "-t", "120", "-o", opts, "start")
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		return fmt.Errorf("pgtest: pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	return nil
}

// StartCluster starts a cluster of t's own, for a test that stops or
// crashes the server (the one Main starts is shared by the package's
// tests), and stops it when t ends. Without the binaries it skips t
// (fails it with EnvRequire set).
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	c, err := Start()
	if errors.Is(err, ErrNoBinaries) && os.Getenv(EnvRequire) == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// CreateDatabase creates an empty database and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	if err := adminExec(ctx, c.AdminURL(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE template0"); err != nil {
		return "", fmt.Errorf("pgtest: create database: %w", err)
	}
	return c.URL(name), nil
}

// Crash stops the server as a crash would: every server process is
// killed at once, nothing is flushed or checkpointed (pg_ctl stop -m
// immediate), and the next start recovers from the WAL.
func (c *Cluster) Crash() error {
	if out, err := c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop"); err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop -m immediate: %w\n%s", err, out)
	}
	return nil
}

// Restart starts the stopped server again, on the same port.
func (c *Cluster) Restart() error { return c.start() }

// Stop stops the server and removes its directory.
func (c *Cluster) Stop() {
	c.stopWatchdog()
	_, _ = c.run("pg_ctl", "-D", c.data(), "-m", "fast", "-w", "stop")
	_ = os.RemoveAll(c.dir)
}

// AdminURL is the URL of the cluster's postgres database, as its
// superuser.
func (c *Cluster) AdminURL() string { return c.URL("postgres") }

// URL is the URL of database db of the cluster.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://wfd@127.0.0.1:%d/%s?sslmode=disable", c.port, url.PathEscape(db))
}

// run runs one of the server binaries, as the postgres user when we are
// root.
func (c *Cluster) run(name string, args ...string) ([]byte, error) {
	path := filepath.Join(c.bin, name)
	var cmd *exec.Cmd
	if c.asPG {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = c.dir
	return cmd.CombinedOutput()
}

// findBin returns the directory of the newest PostgreSQL server binaries
// installed, or "".
func findBin() string {
	if d := os.Getenv(EnvBin); d != "" {
		return d
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// NewDatabase creates an empty database in the cluster Main started and
// returns its URL; the database is dropped when t ends. It skips t if
// there is no cluster because the binaries are missing.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(envAdmin)
	if admin == "" {
		if why := os.Getenv(envSkip); why != "" {
			t.Skip(why)
		}
		t.Fatal("pgtest: no cluster: call pgtest.Main from TestMain")
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "wfd_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := adminExec(ctx, admin, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := adminExec(ctx, admin, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database: %v", err)
		}
	})
	return strings.Replace(admin, "/postgres?", "/"+name+"?", 1)
}

func adminExec(ctx context.Context, admin, sql string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	_, err = conn.Exec(ctx, sql)
	return err
}
