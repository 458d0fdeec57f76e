package postgres_test

import (
	"os"
	"slices"
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

// TestPageTokensUnchanged: the page tokens of fixed listings are those the
// store issued before its listings shared their token code with bbolt's
// (persistence/internal/pagetoken): clients keep them.
func TestPageTokensUnchanged(t *testing.T) {
	s := open(t)
	t.Cleanup(func() { _ = s.Close() })
	want := []string{
		"aAAAAABnwtqjB1vNFWgzzM3oZhhlVyg", "aAAAAABnwtqiB1vNFWgyaFsaRqWdKRU", "aAAAAABnwtqkB1vNFWg06cj1FgtzH1Q",
		"dAAAAABnwtqjB1vNFWgzOne87ApvurrVFw", "dAAAAABnwtqkB1vNFWg0Onf6l-DlxKmX8w", "dAAAAABnwtqjB1vNFWgzOnevMjvD0k0Biw",
		"cAAAAABnwtqkB1vNFQAAAAAAAAAJAzMWH8Yuk1E", "cAAAAABnwtqkB1vNFQAAAAAAAAAK8SfvTWBynkc",
	}
	if got := storetest.PageTokens(t, s); !slices.Equal(got, want) {
		t.Fatalf("page tokens:\n got %q\nwant %q", got, want)
	}
}
