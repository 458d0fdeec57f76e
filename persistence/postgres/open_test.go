package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

func testHandler(id string) persistence.Handler {
	now := time.Date(2025, 6, 1, 12, 0, 0, 123, time.UTC)
	return persistence.Handler{
		ID: id, Workflow: "wf", Status: persistence.StatusRunning, Residency: persistence.ResidencyReleased,
		CreatedAt: now, UpdatedAt: now, IdleSince: now,
		Waiters: []persistence.Waiter{{ID: "w", Key: "answer", Deadline: now.Add(time.Hour)}},
	}
}

// TestReopen checks that what a Write acknowledged is read back by a new
// store on the same database, and that opening an up-to-date database
// again (or several times at once, as replicas starting together would)
// migrates nothing twice.
func TestReopen(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, err := postgres.Open(t.Context(), url, postgres.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	h := testHandler("h1")
	if err := s.Write(t.Context(), persistence.Change{Handler: h, Snapshot: []byte("snap"), Records: []persistence.Record{{Seq: 1, Data: []byte("r")}}}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	var wg sync.WaitGroup
	stores := make([]*postgres.Store, 4)
	for i := range stores {
		wg.Go(func() {
			var err error
			if stores[i], err = postgres.Open(t.Context(), url, postgres.Options{Shared: true}); err != nil {
				t.Errorf("Open %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, s := range stores {
		t.Cleanup(func() { _ = s.Close() })
	}
	got, snap, err := stores[0].LoadHandler(t.Context(), "h1")
	if err != nil || string(snap) != "snap" || got.LastSeq != 1 {
		t.Fatalf("LoadHandler after reopening: %+v, %q, %v", got, snap, err)
	}
	timers, err := stores[1].DueTimers(t.Context(), h.Waiters[0].Deadline, 0)
	if err != nil || len(timers) != 1 || timers[0].HandlerID != "h1" {
		t.Fatalf("DueTimers after reopening: %v, %v", timers, err)
	}
	var applied, distinct int
	conn := connect(t, url)
	if err := conn.QueryRow(t.Context(), `SELECT count(*), count(DISTINCT version_id) FROM wfd_schema_version WHERE version_id > 0`).Scan(&applied, &distinct); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if applied != len(files) || distinct != len(files) {
		t.Errorf("%d migrations recorded (%d distinct) after five opens, want each of the %d once", applied, distinct, len(files))
	}
}

// TestInUse checks that a second store on a database another has open
// is refused, naming the holder, until the first closes.
func TestInUse(t *testing.T) {
	url := pgtest.NewDatabase(t)
	first, err := postgres.Open(t.Context(), url, postgres.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	_, err = postgres.Open(t.Context(), url, postgres.Options{LockWait: 200 * time.Millisecond})
	var inUse *postgres.InUseError
	if !errors.As(err, &inUse) || !errors.Is(err, persistence.ErrUnavailable) || !strings.Contains(inUse.Holder, `"wfd" from 127.0.0.1`) {
		t.Fatalf("second Open: %v, want an InUseError naming the first", err)
	}
	// An Open that waits gets the database once the first lets go.
	opened := make(chan error, 1)
	go func() {
		second, err := postgres.Open(t.Context(), url, postgres.Options{LockWait: time.Minute})
		if err == nil {
			err = second.Close()
		}
		opened <- err
	}()
	admin := connect(t, url)
	testwait.For(t, "the second Open waits for the lock", func() bool {
		var n int
		err := admin.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n)
		return err == nil && n == 1
	})
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("Open waiting for the first to close: %v", err)
	}
}

// TestNewerSchemaRefused checks that a database migrated by a newer wfd
// is refused, not used with a schema this one does not know.
func TestNewerSchemaRefused(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, err := postgres.Open(t.Context(), url, postgres.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	_ = s.Close()
	conn := connect(t, url)
	if _, err := conn.Exec(t.Context(), `INSERT INTO wfd_schema_version (version_id, is_applied) VALUES (999, true)`); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(t.Context(), url, postgres.Options{})
	if !errors.Is(err, persistence.ErrCorrupt) {
		t.Fatalf("Open on a newer schema: %v, want ErrCorrupt", err)
	}
}

// TestUnreachable checks that a database that cannot be reached, at
// Open or once open (its connections cut), is ErrUnavailable, and that
// the store works again once it can be reached.
func TestUnreachable(t *testing.T) {
	// A port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	_ = l.Close()
	_, err = postgres.Open(t.Context(), "postgres://wfd@"+dead+"/x?sslmode=disable&connect_timeout=5", postgres.Options{})
	if !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("Open on a closed port: %v, want ErrUnavailable", err)
	}

	url := pgtest.NewDatabase(t)
	p := startProxy(t, hostPort(t, url))
	s, err := postgres.Open(t.Context(), strings.Replace(url, hostPort(t, url), p.addr(), 1), postgres.Options{WriteTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("Open through the proxy: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Write(t.Context(), persistence.Change{Handler: testHandler("h1")}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	p.cut()
	err = s.Write(t.Context(), persistence.Change{Handler: testHandler("h2")})
	if !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("Write with the connection cut: %v, want ErrUnavailable", err)
	}
	if _, err := s.GetHandler(t.Context(), "h1"); !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("GetHandler with the connection cut: %v, want ErrUnavailable", err)
	}
	p.restore()
	if err := s.Write(t.Context(), persistence.Change{Handler: testHandler("h2")}); err != nil {
		t.Fatalf("Write once the database is reachable again: %v", err)
	}
}

// TestNotUTF8 checks that an id PostgreSQL cannot store (text must be
// UTF-8) is refused as ErrInvalid, and fails nothing else.
func TestNotUTF8(t *testing.T) {
	s := open(t)
	t.Cleanup(func() { _ = s.Close() })
	err := s.Write(t.Context(), persistence.Change{Handler: testHandler("h\xff")})
	if !errors.Is(err, persistence.ErrInvalid) {
		t.Fatalf("Write of a handler id that is not UTF-8: %v, want ErrInvalid", err)
	}
	if err := s.Write(t.Context(), persistence.Change{Handler: testHandler("h")}); err != nil {
		t.Fatalf("Write after: %v", err)
	}
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func hostPort(t *testing.T, url string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
}

// proxy forwards TCP connections to a database; cut closes every
// connection and refuses new ones until restore.
type proxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, target: target}
	t.Cleanup(func() { _ = l.Close(); p.cut() })
	go p.accept()
	return p
}

func (p *proxy) addr() string { return p.l.Addr().String() }

func (p *proxy) accept() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			_ = c.Close()
			continue
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(u, c); _ = u.Close() }()
		go func() { _, _ = io.Copy(c, u); _ = c.Close() }()
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

func (p *proxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// TestSynchronousCommitOn checks that the store's connections commit
// durably even on a database configured with synchronous_commit off, and
// keep a stronger setting.
func TestSynchronousCommitOn(t *testing.T) {
	for _, tt := range []struct{ configured, want string }{{"off", "on"}, {"remote_apply", "remote_apply"}} {
		t.Run(tt.configured, func(t *testing.T) {
			url := pgtest.NewDatabase(t)
			conn := connect(t, url)
			var db string
			if err := conn.QueryRow(t.Context(), "SELECT current_database()").Scan(&db); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(t.Context(), "ALTER DATABASE "+db+" SET synchronous_commit = "+tt.configured); err != nil {
				t.Fatal(err)
			}
			s, err := postgres.Open(t.Context(), url, postgres.Options{})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			t.Cleanup(func() { _ = s.Close() })
			got, err := postgres.SynchronousCommit(t.Context(), s)
			if err != nil || got != tt.want {
				t.Fatalf("synchronous_commit = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
