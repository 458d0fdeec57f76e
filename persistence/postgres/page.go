package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/wfd-dev/wfd/persistence/internal/backend"
)

// page describes one page of a list: its query asks for limit+1 rows of
// (key, time, nanoseconds, encoded item), newest first, so that the extra
// row says whether another page follows.
type page struct {
	what    string // "list handlers", for errors
	items   string // "handlers", for the count of skipped ones
	kind    byte   // the page token's kind
	filters []byte // what the page token must be used with
	limit   int
}

// readPage runs sql and decodes its rows. An item that does not decode is
// skipped and reported in the error returned with the page (the rest is
// still returned, as bbolt does), so one damaged row does not hide the
// others.
func readPage[K string | int64, T any](ctx context.Context, s *Store, p page, sql string, args []any,
	pos func(K, time.Time) position, decode func(K, []byte) (T, error)) ([]T, string, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, "", fmt.Errorf("postgres: %s: %w", p.what, s.classify(ctx, err))
	}
	defer rows.Close()
	var (
		out  backend.Listing[T]
		last position
		n    int
		more bool
	)
	for rows.Next() {
		if n == p.limit {
			more = true
			break
		}
		var (
			key K
			at  time.Time
			ns  int16
			raw []byte
		)
		if err := rows.Scan(&key, &at, &ns, &raw); err != nil {
			return nil, "", fmt.Errorf("postgres: %s: %w", p.what, s.classify(ctx, err))
		}
		n++
		last = pos(key, fromParts(at, ns))
		out.Add(decode(key, raw))
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("postgres: %s: %w", p.what, s.classify(ctx, err))
	}
	var next string
	if more {
		next = packToken(p.kind, last, p.filters)
	}
	if err := out.Err(p.items); err != nil {
		return out.Items, next, fmt.Errorf("postgres: %s: %w", p.what, err)
	}
	return out.Items, next, nil
}

func byID(id string, at time.Time) position  { return position{at: at, id: id} }
func bySeq(seq int64, at time.Time) position { return position{at: at, seq: seq} }
