package postgres

import "context"

// SynchronousCommit returns the synchronous_commit setting of a
// connection of the store's pool.
func SynchronousCommit(ctx context.Context, s *Store) (string, error) {
	var v string
	err := s.pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&v)
	return v, err
}
