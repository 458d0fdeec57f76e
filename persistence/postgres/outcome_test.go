package postgres_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// TestLostCommitAnswer cuts the connection while the database runs a
// Write's COMMIT, so that the answer never arrives: a Write whose commit
// went through returns nil (the store asks the database what became of
// the transaction), and one whose commit failed returns ErrUnavailable
// and left nothing. A deferred constraint trigger holds the COMMIT long
// enough to cut the connection in it, and fails it for handler "fail".
func TestLostCommitAnswer(t *testing.T) {
	url := pgtest.NewDatabase(t)
	p := startProxy(t, hostPort(t, url))
	s, err := postgres.Open(t.Context(), strings.Replace(url, hostPort(t, url), p.addr(), 1), postgres.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	admin := connect(t, url)
	if _, err := admin.Exec(t.Context(), `
		CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			PERFORM pg_sleep(1);
			IF NEW.id = 'fail' THEN RAISE EXCEPTION 'commit refused'; END IF;
			RETURN NULL;
		END $$;
		CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT OR UPDATE ON wfd_handlers
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit();`); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id        string
		committed bool
	}{{"ok", true}, {"fail", false}} {
		t.Run(tt.id, func(t *testing.T) {
			p.restore()
			done := make(chan error, 1)
			go func() { done <- s.Write(t.Context(), persistence.Change{Handler: testHandler(tt.id)}) }()
			testwait.For(t, "the COMMIT runs its deferred trigger", func() bool {
				var n int
				err := admin.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE query = 'COMMIT' AND wait_event = 'PgSleep'`).Scan(&n)
				return err == nil && n == 1
			})
			p.cut() // the answer is lost with the connection
			// The store cannot reach the database until the COMMIT has
			// ended (a cancel request would end it otherwise).
			testwait.For(t, "the COMMIT ends", func() bool {
				var n int
				err := admin.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE query = 'COMMIT' AND wait_event = 'PgSleep'`).Scan(&n)
				return err == nil && n == 0
			})
			p.restore()
			err := <-done
			_, getErr := s.GetHandler(t.Context(), tt.id)
			if tt.committed {
				if err != nil || getErr != nil {
					t.Fatalf("Write whose commit went through: %v (GetHandler: %v), want nil", err, getErr)
				}
				return
			}
			if !errors.Is(err, persistence.ErrUnavailable) || !errors.Is(getErr, persistence.ErrNotFound) {
				t.Fatalf("Write whose commit failed: %v (GetHandler: %v), want ErrUnavailable and nothing stored", err, getErr)
			}
		})
	}
}
