package postgres_test

import (
	"os"
	"testing"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
	"github.com/wfd-dev/wfd/persistence/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open opens a store on a fresh database.
func open(t testing.TB) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), pgtest.NewDatabase(t), postgres.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// TestConformance runs the backend-neutral suite on a real PostgreSQL
// server, with fsync and synchronous_commit on.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) persistence.Store { return open(t) })
}

// TestConformanceReplicas runs the suites of leases, claims and worker
// routes on stores that share one database as replicas do
// (Options.Shared).
func TestConformanceReplicas(t *testing.T) {
	storetest.RunReplicas(t, func(t *testing.T) storetest.OpenFunc {
		url := pgtest.NewDatabase(t)
		return func(t *testing.T) persistence.Store {
			s, err := postgres.Open(t.Context(), url, postgres.Options{Shared: true})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			return s
		}
	})
}
