package postgres_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// TestDatabaseCrash crashes the database server (every process killed,
// nothing flushed) right after a series of acknowledged Writes and
// Publishes, and checks that the store answers ErrUnavailable while the
// server is down, and, once it has recovered, has every acknowledged
// change, without reopening the store.
func TestDatabaseCrash(t *testing.T) {
	c := pgtest.StartCluster(t)
	url, err := c.CreateDatabase(t.Context(), "crash")
	if err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(t.Context(), url, postgres.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	const n = 50
	for i := range n {
		h := testHandler(fmt.Sprintf("h%02d", i))
		change := persistence.Change{Handler: h, Snapshot: fmt.Appendf(nil, "snapshot %d", i), Records: []persistence.Record{{Seq: 1, Data: []byte("r")}}}
		if err := s.Write(t.Context(), change); err != nil {
			t.Fatalf("Write %d: %v", i, err)
		}
		p := persistence.Published{ID: fmt.Sprint("p", i), Key: "k", At: h.CreatedAt}
		if _, err := s.Publish(t.Context(), p); err != nil {
			t.Fatalf("Publish %d: %v", i, err)
		}
	}
	if err := c.Crash(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetHandler(t.Context(), "h00"); !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("GetHandler with the database down: %v, want ErrUnavailable", err)
	}
	if err := s.Write(t.Context(), persistence.Change{Handler: testHandler("late")}); !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("Write with the database down: %v, want ErrUnavailable", err)
	}
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, func() error {
		_, err := s.Count(t.Context())
		return err
	})
	for i := range n {
		id := fmt.Sprintf("h%02d", i)
		h, snap, err := s.LoadHandler(t.Context(), id)
		if err != nil || string(snap) != fmt.Sprintf("snapshot %d", i) || h.LastSeq != 1 {
			t.Fatalf("LoadHandler(%s) after the crash: %+v, %q, %v", id, h, snap, err)
		}
	}
	log, err := s.PublishedAfter(t.Context(), 0, 0)
	if err != nil || len(log) != n {
		t.Fatalf("PublishedAfter after the crash: %d entries, %v; want %d", len(log), err, n)
	}
	counts, err := s.Count(t.Context())
	if err != nil || counts.Handlers != n {
		t.Fatalf("Count after the crash: %+v, %v; want %d handlers", counts, err, n)
	}
}
