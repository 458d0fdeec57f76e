package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestNewDatabase checks that each test gets a database of its own on a
// server that makes commits durable (fsync and synchronous_commit on).
func TestNewDatabase(t *testing.T) {
	a, b := connect(t, pgtest.NewDatabase(t)), connect(t, pgtest.NewDatabase(t))
	for _, setting := range []string{"fsync", "synchronous_commit"} {
		var v string
		if err := a.QueryRow(t.Context(), "SHOW "+setting).Scan(&v); err != nil || v != "on" {
			t.Errorf("%s = %q, %v; want on", setting, v, err)
		}
	}
	if _, err := a.Exec(t.Context(), "CREATE TABLE only_in_a (x int)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.QueryRow(t.Context(), "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'").Scan(&n); err != nil || n != 0 {
		t.Errorf("a table of one test's database is in another's: %d, %v", n, err)
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
