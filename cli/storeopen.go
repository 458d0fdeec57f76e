package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/persistence/postgres"
	"github.com/wfd-dev/wfd/server"
)

// openServeStore opens the store wfd serve runs on: the bbolt file in
// data when store is "", a PostgreSQL database when store is a
// postgres:// or postgresql:// URL. It returns the store and how to name
// it in logs (without a password). A replica (leaseTTL > 0) opens a
// database other replicas share (no advisory lock), with sessions that
// hold no lock or transaction past its leases (server.SessionTimeout).
func openServeStore(ctx context.Context, data, store string, leaseTTL time.Duration) (persistence.Store, string, error) {
	return openStoreAt(ctx, filepath.Join(data, "wfd.db"), store, "", leaseTTL)
}

// openStoreAt is openServeStore with the bbolt file at path, or the
// PostgreSQL store in schema ("": the database's own): the default
// namespace's store or another's (openNamespaces).
func openStoreAt(ctx context.Context, path, store, schema string, leaseTTL time.Duration) (persistence.Store, string, error) {
	switch {
	case store == "":
		s, err := bolt.Open(path, bolt.Options{})
		if err != nil {
			return nil, "", explainStore(filepath.Dir(path), fmt.Errorf("open store: %w", err))
		}
		return s, path, nil
	case postgres.IsURL(store):
		opts := postgres.Options{Shared: leaseTTL > 0, Schema: schema}
		if leaseTTL > 0 {
			opts.SessionTimeout = server.SessionTimeout(leaseTTL)
		}
		s, err := postgres.Open(ctx, store, opts)
		if err != nil {
			return nil, "", fmt.Errorf("open store: %w", err)
		}
		return s, postgres.Redact(store), nil
	default:
		return nil, "", usageErrorf("--store: %q is not a postgres:// or postgresql:// URL (leave it empty for the bbolt file in --data)", postgres.Redact(store))
	}
}
