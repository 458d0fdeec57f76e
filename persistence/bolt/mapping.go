package bolt

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// DropMappedPages lets go of the process's mapping of the store's pages.
// bbolt maps its file read-only and shared, and every page the process
// reads stays resident and counted in its RSS, up to the whole file; after
// a burst of work (say, releasing many handlers) that is most of the file.
// Dropping the page-table entries loses no data: the pages stay in the
// kernel's page cache (or on disk), and a later read faults them back in.
// It is safe during reads and writes. On systems other than Linux it does
// nothing.
func (s *Store) DropMappedPages(ctx context.Context) error {
	// A read transaction holds bbolt's mapping lock, so the file cannot be
	// remapped (moved) while its pages are being dropped.
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return dropMapped(tx.DB().Info().Data, tx.Size())
	})
	if err != nil {
		return fmt.Errorf("bolt: drop mapped pages: %w", err)
	}
	return nil
}
