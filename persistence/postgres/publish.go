package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
	"github.com/wfd-dev/wfd/persistence/internal/pagetoken"
)

// Publish appends p to the published-event log. Concurrent Publishes
// share a transaction (publisher.go). Sequence numbers come from the one
// row of wfd_published_seq, which the transaction locks first and holds
// until it commits: entries are numbered in commit order with no gaps (a
// rolled-back transaction returns its numbers), so a reader that has seen
// seq n never finds a smaller one committed later, which a SEQUENCE
// cannot promise (numbers are taken at insert and committed in any
// order). Transactions that publish therefore commit one at a time, each
// with every Publish that queued meanwhile.
//
// The id check runs after the lock is granted, as its own statement, so
// it sees a concurrent Publish of the same id that committed meanwhile:
// of two, the second returns the first's entry.
func (s *Store) Publish(ctx context.Context, p persistence.Published) (persistence.Published, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.Published{}, err
	}
	p, err := backend.PreparePublished(p)
	if err != nil {
		return persistence.Published{}, fmt.Errorf("postgres: %w", err)
	}
	out, err := s.pub.publish(p)
	if err != nil {
		return persistence.Published{}, fmt.Errorf("postgres: publish %q: %w", p.ID, s.classify(ctx, err))
	}
	return out, nil
}

// decodePublished decodes the log entry stored under seq (a bigint).
func decodePublished(seq int64, raw []byte) (persistence.Published, error) {
	return codec.DecodeStoredPublished(uint64(seq), raw)
}

// FindPublished returns the oldest matching entry: the older of the
// oldest global one and the oldest addressed to handlerID, each one index
// probe of wfd_published_key_handler.
func (s *Store) FindPublished(ctx context.Context, key, handlerID string, since time.Time) (persistence.Published, bool, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.Published{}, false, err
	}
	if err := persistence.ValidatePublishedFilter(key, handlerID); err != nil {
		return persistence.Published{}, false, fmt.Errorf("postgres: find published: %w", err)
	}
	var (
		seq   int64
		entry []byte
	)
	err := s.queryRow(ctx, `SELECT seq, entry FROM (
		(SELECT at, at_ns, seq, entry FROM wfd_published WHERE key = $1 AND handler_id = ''
			AND (at, at_ns) >= ($3, $4) ORDER BY at, at_ns, seq LIMIT 1)
		UNION ALL
		(SELECT at, at_ns, seq, entry FROM wfd_published WHERE $2 <> '' AND key = $1 AND handler_id = $2
			AND (at, at_ns) >= ($3, $4) ORDER BY at, at_ns, seq LIMIT 1)
	) e ORDER BY at, at_ns, seq LIMIT 1`, key, handlerID, since, nsOf(since)).Scan(&seq, &entry)
	if errors.Is(err, pgx.ErrNoRows) {
		return persistence.Published{}, false, nil
	}
	if err != nil {
		return persistence.Published{}, false, fmt.Errorf("postgres: find published %q: %w", key, s.classify(ctx, err))
	}
	p, err := decodePublished(seq, entry)
	if err != nil {
		return persistence.Published{}, false, fmt.Errorf("postgres: find published %q: %w", key, err)
	}
	return p, true, nil
}

// PublishedAfter returns up to limit log entries after afterSeq, in order.
func (s *Store) PublishedAfter(ctx context.Context, afterSeq uint64, limit int) ([]persistence.Published, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	if afterSeq >= math.MaxInt64 {
		return nil, nil // seqs are bigints
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, entry FROM wfd_published WHERE seq > $1 ORDER BY seq LIMIT $2`, int64(afterSeq), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: published after %d: %w", afterSeq, s.classify(ctx, err))
	}
	var (
		out   backend.Listing[persistence.Published]
		seq   int64
		entry []byte
	)
	if _, err := pgx.ForEachRow(rows, []any{&seq, &entry}, func() error {
		out.Add(decodePublished(seq, entry))
		return nil
	}); err != nil {
		return nil, fmt.Errorf("postgres: published after %d: %w", afterSeq, s.classify(ctx, err))
	}
	if err := out.Err("entries"); err != nil {
		return out.Items, fmt.Errorf("postgres: published after %d: %w", afterSeq, err)
	}
	return out.Items, nil
}

// ListPublished lists the log latest first (At, then Seq, descending),
// from the index that matches the filters, stopping at Since.
func (s *Store) ListPublished(ctx context.Context, q persistence.PublishedQuery) ([]persistence.Published, string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, "", err
	}
	if err := q.Validate(); err != nil {
		return nil, "", fmt.Errorf("postgres: list published: %w", err)
	}
	filters := pagetoken.PublishedFilters(&q, appendUnixTime)
	var w where
	if q.PageToken != "" {
		p, err := unpackToken(q.PageToken, tokenPublished, filters)
		if err != nil {
			return nil, "", fmt.Errorf("postgres: list published: %w", err)
		}
		w.add("(at, at_ns, seq) < ($%d, $%d, $%d)", p.at, nsOf(p.at), p.seq)
	}
	if q.Key != "" {
		w.add("key = $%d", q.Key)
	}
	if q.HandlerID != "" {
		// handler_id <> '' as written lets the planner use the partial
		// index wfd_published_handler with a generic plan too.
		w.add("handler_id = $%d AND handler_id <> ''", q.HandlerID)
	}
	if !q.Since.IsZero() {
		w.add("(at, at_ns) >= ($%d, $%d)", q.Since, nsOf(q.Since))
	}
	limit := q.Limit()
	sql := fmt.Sprintf("SELECT seq, at, at_ns, entry FROM wfd_published%s ORDER BY at DESC, at_ns DESC, seq DESC LIMIT $%d",
		w.sql(), w.param(limit+1))
	return readPage(ctx, s, page{what: "list published", items: "entries", kind: tokenPublished, filters: filters, limit: limit}, sql, w.args, bySeq, decodePublished)
}
