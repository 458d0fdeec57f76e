package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
)

// ListHandlers returns handlers matching q, newest first: by creation
// time, ties by id, whatever the ids.
//
// Each filter is a stream of order keys (time(CreatedAt)|id) in descending
// order, read backwards from an index (a prefix of it, for workflow, status
// and residency). The streams are intersected with a leapfrog join: the
// candidate is the first stream's key, every other stream seeks to the
// greatest key not above it, and a stream that lands lower proposes a new,
// lower candidate, until all agree. Only index keys are read to decide what
// matches; metadata is decoded only for the handlers returned.
func (s *Store) ListHandlers(ctx context.Context, q persistence.Query) ([]persistence.Handler, string, error) {
	if err := q.Validate(); err != nil {
		return nil, "", fmt.Errorf("bolt: list handlers: %w", err)
	}
	if q.Where != nil {
		return s.listWhere(ctx, &q)
	}
	return list(ctx, s, listing[persistence.Handler]{
		op: "list handlers", kind: "handler", items: "handlers",
		version: handlerTokenVersion, check: handlerTokenCheck(&q),
		plan: func(tx *bolt.Tx) []idStream { return planQuery(tx, &q) },
		get: func(tx *bolt.Tx) func(string) (persistence.Handler, error) {
			return func(id string) (persistence.Handler, error) { return getHandler(tx, id) }
		},
	}, q.PageToken, q.Limit())
}

// listing is what tells ListHandlers and ListTasks apart: which items
// (T) it lists, how it plans its streams of order keys, and how it reads
// the item an order key names.
type listing[T any] struct {
	op    string // "list handlers", for errors
	kind  string // "handler", what the order keys name
	items string // "handlers", for the count of skipped ones
	// version and check make and read its page tokens (token.go).
	version byte
	check   func(last []byte) uint64
	plan    func(tx *bolt.Tx) []idStream
	// get returns the reader of items by id in tx.
	get func(tx *bolt.Tx) func(id string) (T, error)
}

// list returns up to limit items of l, after the position of token, and
// the token of the next page. An item that cannot be read (corrupt, or
// missing behind an index entry) is left out and named in the error
// returned with the others.
func list[T any](ctx context.Context, s *Store, l listing[T], token string, limit int) ([]T, string, error) {
	var after []byte
	if token != "" {
		var err error
		if after, err = unpackToken(token, l.version, l.check); err != nil {
			return nil, "", fmt.Errorf("bolt: %s: %w", l.op, err)
		}
	}
	var (
		out  backend.Listing[T]
		next string
	)
	err := s.view(ctx, func(tx *bolt.Tx) error {
		orders, more := page(l.plan(tx), after, limit)
		if more {
			next = packToken(l.version, orders[len(orders)-1], l.check)
		}
		out.Items = make([]T, 0, len(orders))
		get := l.get(tx)
		for _, order := range orders {
			id, ok := orderKeyID(order)
			if !ok {
				out.Skip(fmt.Errorf("%w: %s index key ending in %q", persistence.ErrCorrupt, l.kind, order))
				continue
			}
			item, err := get(id)
			switch {
			case errors.Is(err, persistence.ErrNotFound):
				// An index names an item that does not exist.
				out.Skip(fmt.Errorf("%w: index entry for missing %s %q", persistence.ErrCorrupt, l.kind, id))
			case err != nil && !errors.Is(err, persistence.ErrCorrupt):
				return err
			default:
				out.Add(item, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("bolt: %s: %w", l.op, err)
	}
	if err := out.Err(l.items); err != nil {
		return out.Items, next, fmt.Errorf("bolt: %s: %w", l.op, err)
	}
	return out.Items, next, nil
}

// planQuery returns one order-key stream per filter of q, the likely most
// selective first (the join is correct in any order; a selective first
// stream proposes fewer candidates).
func planQuery(tx *bolt.Tx, q *persistence.Query) []idStream {
	streams := filterStreams(tx, q)
	if len(streams) == 0 {
		// No filter: every handler, from the index by creation alone.
		streams = append(streams, &prefixStream{c: bucket(tx, bucketCreated).Cursor()})
	}
	return streams
}

// filterStreams returns one order-key stream per filter of q (none for
// the zero Query).
func filterStreams(tx *bolt.Tx, q *persistence.Query) []idStream {
	var streams []idStream
	switch {
	case q.Version != "":
		// One prefix of idx_workflow_version per status and residency the
		// query keeps: the version's handlers in those, in order.
		streams = append(streams, versionStream(tx, q))
	case q.Workflow != "":
		streams = append(streams, &prefixStream{c: bucket(tx, bucketWorkflow).Cursor(), prefix: workflowPrefix(q.Workflow)})
	}
	if q.Residency != 0 {
		streams = append(streams, &prefixStream{c: bucket(tx, bucketResidency).Cursor(), prefix: []byte{byte(q.Residency)}})
	}
	if cutoff, idle := q.IdleCutoff(); idle {
		st := &prefixStream{c: bucket(tx, bucketIdle).Cursor()}
		if !cutoff.IsZero() {
			latest := appendTime(nil, cutoff)
			st.keep = func(since []byte) bool { return bytes.Compare(since, latest) <= 0 }
		}
		streams = append(streams, st)
	}
	if len(q.Statuses) > 0 {
		statuses := slices.Clone(q.Statuses)
		slices.Sort(statuses)
		var union unionStream
		for _, st := range slices.Compact(statuses) {
			union = append(union, &prefixStream{c: bucket(tx, bucketStatus).Cursor(), prefix: []byte{byte(st)}})
		}
		if len(union) == 1 {
			streams = append(streams, union[0])
		} else {
			streams = append(streams, union)
		}
	}
	return streams
}

// versionStream yields the handlers of q's workflow version whose status
// and residency q keeps, as a union of the prefixes of idx_workflow_version
// (a few dozen at most), so that neither filter needs another index.
func versionStream(tx *bolt.Tx, q *persistence.Query) idStream {
	statuses := slices.Clone(q.Statuses)
	if len(statuses) == 0 {
		statuses = persistence.Statuses()
	}
	slices.Sort(statuses)
	residencies := persistence.Residencies()
	if q.Residency != 0 {
		residencies = []persistence.Residency{q.Residency}
	}
	var union unionStream
	for _, st := range slices.Compact(statuses) {
		for _, r := range residencies {
			union = append(union, &prefixStream{c: bucket(tx, bucketVersion).Cursor(),
				prefix: versionStatePrefix(q.Workflow, q.Version, byte(st), byte(r))})
		}
	}
	return union
}

// page returns up to limit keys of the intersection of streams, in
// descending order, below upper (nil: from the greatest), and whether more
// follow. The keys are copies, valid after the transaction.
func page(streams []idStream, upper []byte, limit int) (keys [][]byte, more bool) {
	// One more than a page, to know whether there is a next page.
	keys = make([][]byte, 0, limit+1)
	for len(keys) <= limit {
		k := intersect(streams, upper, false)
		if k == nil {
			break
		}
		keys = append(keys, bytes.Clone(k))
		upper = keys[len(keys)-1]
	}
	if len(keys) > limit {
		return keys[:limit], true
	}
	return keys, false
}

// idStream yields order keys (time|id, of handlers or tasks) in
// descending order.
type idStream interface {
	// seek returns the greatest id below upper (or equal to it, if
	// inclusive); a nil upper means no bound. It returns nil if there is
	// none. The result is valid until the transaction ends.
	seek(upper []byte, inclusive bool) []byte
}

// intersect returns the greatest id below (or at) upper present in every
// stream.
func intersect(streams []idStream, upper []byte, inclusive bool) []byte {
	cand := streams[0].seek(upper, inclusive)
	for cand != nil {
		agreed := true
		for _, st := range streams[1:] {
			id := st.seek(cand, true)
			if id == nil {
				return nil
			}
			if !bytes.Equal(id, cand) {
				// Lower: no id in (id, cand] is in st, so none matches.
				cand, agreed = id, false
				break
			}
		}
		if agreed {
			return cand
		}
		cand = streams[0].seek(cand, true)
	}
	return nil
}

// prefixStream yields the ids of the keys of one bucket that start with
// prefix (the id is the rest of the key), optionally keeping only those
// whose value passes keep.
type prefixStream struct {
	c      *bolt.Cursor
	prefix []byte
	keep   func(value []byte) bool
}

func (s *prefixStream) seek(upper []byte, inclusive bool) []byte {
	var k, v []byte
	if upper == nil {
		if end := prefixEnd(s.prefix); end == nil {
			k, v = s.c.Last()
		} else if k, _ = s.c.Seek(end); k == nil {
			k, v = s.c.Last()
		} else {
			k, v = s.c.Prev()
		}
	} else {
		target := append(slices.Clip(s.prefix), upper...)
		k, v = s.c.Seek(target)
		switch {
		case k == nil:
			k, v = s.c.Last()
		case inclusive && bytes.Equal(k, target):
		default:
			k, v = s.c.Prev()
		}
	}
	for ; k != nil && bytes.HasPrefix(k, s.prefix); k, v = s.c.Prev() {
		if s.keep == nil || s.keep(v) {
			return k[len(s.prefix):]
		}
	}
	return nil
}

// unionStream yields the ids present in any of its streams.
type unionStream []idStream

func (u unionStream) seek(upper []byte, inclusive bool) []byte {
	var best []byte
	for _, st := range u {
		if id := st.seek(upper, inclusive); id != nil && bytes.Compare(id, best) > 0 {
			best = id
		}
	}
	return best
}
