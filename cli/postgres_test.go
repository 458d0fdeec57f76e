package cli_test

import (
	"net"
	"strings"
	"testing"

	"github.com/wfd-dev/wfd/internal/pgtest"
)

// TestServePostgresRestart serves on a real PostgreSQL database: a
// handler parks and is released to the database, the server stops, and a
// second server on the same database (and another, empty, data
// directory: nothing is kept in it) wakes and finishes it.
func TestServePostgresRestart(t *testing.T) {
	url := pgtest.NewDatabase(t)

	// The password is not checked (the test server trusts loopback), but
	// it must not reach the logs.
	withPassword := strings.Replace(url, "postgres://wfd@", "postgres://wfd:hunter2@", 1)
	addr, stop, logs := serveStoppable(t, "--store", withPassword)
	if strings.Contains(logs.String(), "hunter2") || !strings.Contains(logs.String(), `"store":"postgres://wfd:xxxxx@`) {
		t.Errorf("the logs show the password, or not the store:\n%s", logs)
	}
	id := field(ok(t, "run", "approval", "--input", `{"amount": 7}`, "--addr", addr))
	eventually(t, "the handler waits for approval", func() bool {
		return strings.Contains(ok(t, "get", id, "--addr", addr), "waits for approval")
	})
	if out := ok(t, "release", id, "--addr", addr); !strings.Contains(out, id+"  approval  released") {
		t.Fatalf("release printed %q", out)
	}
	stop()

	addr, _, _ = serveStoppable(t, "--store", url)
	matchLines(t, ok(t, "get", id, "--addr", addr), []string{`^status: +running$`, `^residency: +released$`})
	ok(t, "send", id, "approval", `{"approved": true, "comment": "after a restart"}`, "--addr", addr)
	eventually(t, "the handler completes", func() bool {
		return strings.Contains(ok(t, "get", id, "--addr", addr), "completed")
	})
	matchLines(t, ok(t, "get", id, "--addr", addr), []string{`^status: +completed$`, `^result: +\{"approved":true,"comment":"after a restart"`})
}

// TestServeStoreFlag checks that --store refuses what is not a
// PostgreSQL URL, and that WFD_STORE sets it.
func TestServeStoreFlag(t *testing.T) {
	r := wfd(t, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--store", "mysql://x")
	if r.code != 2 || !strings.Contains(r.stderr, "not a postgres://") {
		t.Errorf("serve --store mysql://x: exit %d, stderr %q", r.code, r.stderr)
	}
	t.Setenv("WFD_STORE", "sqlite:///x")
	r = wfd(t, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "not a postgres://") {
		t.Errorf("serve with WFD_STORE=sqlite:///x: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestServePostgresUnreachable checks that serve on a database that
// cannot be reached exits at once with a message that says so, without
// the password.
func TestServePostgresUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	_ = l.Close()
	r := wfd(t, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--store", "postgres://wfd:hunter2@"+dead+"/wfd?sslmode=disable")
	if r.code != 1 || !strings.Contains(r.stderr, "open store") || !strings.Contains(r.stderr, "unavailable") || strings.Contains(r.stderr, "hunter2") {
		t.Errorf("serve on an unreachable database: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestServeReplicaFlags checks that replica mode needs PostgreSQL and a
// usable lease ttl, from flags and from WFD_REPLICA_ID.
func TestServeReplicaFlags(t *testing.T) {
	for _, c := range []struct {
		name string
		env  string
		args []string
		want string
	}{
		{"bbolt", "", []string{"--replica-id", "r1"}, "--replica-id needs a PostgreSQL --store"},
		{"bbolt from the environment", "r1", nil, "--replica-id needs a PostgreSQL --store"},
		{"tiny ttl", "", []string{"--store", "postgres://wfd@127.0.0.1:1/wfd", "--replica-id", "r1", "--lease-ttl", "1ms"}, "--lease-ttl must be at least"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("WFD_REPLICA_ID", c.env)
			}
			r := wfd(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, c.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, c.want)
			}
		})
	}
}
