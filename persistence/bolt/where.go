package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/attrs"
	"github.com/wfd-dev/wfd/internal/status"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
)

// orderedTokenVersion marks the page tokens of ordered listings
// (Query.Where with an order), whose position is the last handler's id.
const orderedTokenVersion = 4

// listWhere answers a ListHandlers whose Query has a Where. The term
// backend.DriveTerm picks becomes one more order-key stream of the join
// planQuery builds for the other filters, and each handler the join
// yields is read and kept if the whole condition matches it, until the
// page is full. Without a condition (an order alone) the join is
// planQuery's. An ordered listing collects every match and pages through
// them sorted, its token holding the last handler's id.
func (s *Store) listWhere(ctx context.Context, q *persistence.Query) ([]persistence.Handler, string, error) {
	term, hasTerm, err := backend.DriveTerm(q)
	if err != nil {
		return nil, "", fmt.Errorf("bolt: list handlers: %w", err)
	}
	ordered := q.Where.Order != nil
	version := byte(handlerTokenVersion)
	if ordered {
		version = orderedTokenVersion
	}
	check := handlerTokenCheck(q)
	var after []byte
	switch {
	case q.PageToken == "":
	case ordered:
		after, err = unpackRawToken(q.PageToken, version, check)
	default:
		after, err = unpackToken(q.PageToken, version, check)
	}
	if err != nil {
		return nil, "", fmt.Errorf("bolt: list handlers: %w", err)
	}
	limit := q.Limit()
	var w whereScan
	if ordered {
		err = s.view(ctx, func(tx *bolt.Tx) error {
			return w.scan(ctx, tx, q, term, hasTerm, nil, persistence.MaxOrderedMatches+1)
		})
	} else {
		err = s.view(ctx, func(tx *bolt.Tx) error { return w.scan(ctx, tx, q, term, hasTerm, after, limit+1) })
	}
	if err != nil {
		return nil, "", fmt.Errorf("bolt: list handlers: %w", err)
	}
	var next string
	switch {
	case ordered:
		if len(w.out.Items) > persistence.MaxOrderedMatches {
			return nil, "", fmt.Errorf("bolt: list handlers: %w", backend.TooManyOrdered())
		}
		backend.SortOrdered(q, w.out.Items)
		page, lastID, err := backend.OrderedPage(w.out.Items, string(after), limit)
		if err != nil {
			return nil, "", fmt.Errorf("bolt: list handlers: %w", err)
		}
		w.out.Items = page
		if lastID != "" {
			next = packToken(version, []byte(lastID), check)
		}
	case len(w.out.Items) > limit:
		w.out.Items = w.out.Items[:limit]
		next = packToken(version, w.orders[limit-1], check)
	}
	if err := w.out.Err("handlers"); err != nil {
		return w.out.Items, next, fmt.Errorf("bolt: list handlers: %w", err)
	}
	return w.out.Items, next, nil
}

// whereScan is what a Where listing's join yields: the matching handlers
// in order, with their order keys, and those it could not read.
type whereScan struct {
	out    backend.Listing[persistence.Handler]
	orders [][]byte
}

// scan reads up to want matching handlers below the order key after (nil:
// from the newest).
func (w *whereScan) scan(ctx context.Context, tx *bolt.Tx, q *persistence.Query, term attrs.IndexTerm, hasTerm bool, after []byte, want int) error {
	streams := filterStreams(tx, q)
	if hasTerm {
		streams = append([]idStream{termStream(tx, q, term)}, streams...)
	}
	if len(streams) == 0 {
		streams = append(streams, &prefixStream{c: bucket(tx, bucketCreated).Cursor()})
	}
	upper := after
	for len(w.out.Items) < want {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := intersect(streams, upper, false)
		if k == nil {
			return nil
		}
		upper = bytes.Clone(k)
		id, _ := orderKeyID(k)
		h, err := getHandler(tx, id)
		switch {
		case errors.Is(err, persistence.ErrNotFound):
			w.out.Skip(fmt.Errorf("%w: index entry for missing handler %q", persistence.ErrCorrupt, id))
		case err != nil && !errors.Is(err, persistence.ErrCorrupt):
			return err
		case err != nil:
			w.out.Skip(err)
		case backend.Match(q, &h):
			w.out.Items = append(w.out.Items, h)
			w.orders = append(w.orders, upper)
		}
	}
	return nil
}

// termStream is the order keys of the handlers term selects, newest
// first.
func termStream(tx *bolt.Tx, q *persistence.Query, t attrs.IndexTerm) idStream {
	if t.Builtin {
		switch t.Field {
		case attrs.FieldWorkflow:
			var u unionStream
			for _, v := range t.Values {
				u = append(u, &prefixStream{c: bucket(tx, bucketWorkflow).Cursor(), prefix: workflowPrefix(v.AsString())})
			}
			return u
		case attrs.FieldStatus:
			var u unionStream
			for _, v := range t.Values {
				for _, st := range status.All() {
					if st.String() == v.AsString() {
						u = append(u, &prefixStream{c: bucket(tx, bucketStatus).Cursor(), prefix: []byte{byte(st)}})
					}
				}
			}
			return u
		default: // created_at, a range (DriveTerm allows no other)
			return createdRange(tx, t)
		}
	}
	prefix := attrPrefix(q.Workflow, t.Field)
	switch t.Kind {
	case attrs.TermEqual:
		var u unionStream
		for _, v := range t.Values {
			u = append(u, &prefixStream{c: bucket(tx, bucketAttr).Cursor(), prefix: attrs.AppendKey(bytes.Clone(prefix), v)})
		}
		return u
	case attrs.TermContains:
		return &prefixStream{c: bucket(tx, bucketAttr).Cursor(), prefix: attrItemKey(bytes.Clone(prefix), t.Values[0].AsString())}
	default:
		return attrRange(tx, prefix, t)
	}
}

// attrRange collects the order keys of the handlers whose attribute lies
// in t's range: a scan of that range of idx_attr (in value order), whose
// keys it sorts newest first. Its cost is the number of handlers in the
// range, which the caller narrows with a better term when it has one.
func attrRange(tx *bolt.Tx, prefix []byte, t attrs.IndexTerm) idStream {
	typed := append(bytes.Clone(prefix), byte(t.Type))
	start := typed
	if t.Lower != nil {
		start = attrs.AppendKey(bytes.Clone(prefix), t.Lower.Value)
	}
	var upper []byte
	if t.Upper != nil {
		upper = attrs.AppendKey(nil, t.Upper.Value)
	}
	var lower []byte
	if t.Lower != nil {
		lower = attrs.AppendKey(nil, t.Lower.Value)
	}
	var orders [][]byte
	c := bucket(tx, bucketAttr).Cursor()
	for k, _ := c.Seek(start); k != nil && bytes.HasPrefix(k, typed); k, _ = c.Next() {
		rest := k[len(prefix):]
		n, ok := valueKeyLen(rest)
		if !ok {
			continue
		}
		v := rest[:n]
		if lower != nil {
			if c := bytes.Compare(v, lower); c < 0 || c == 0 && !t.Lower.Inclusive {
				continue
			}
		}
		if upper != nil {
			if c := bytes.Compare(v, upper); c > 0 || c == 0 && !t.Upper.Inclusive {
				break
			}
		}
		if _, ok := orderKeyID(rest[n:]); ok {
			orders = append(orders, bytes.Clone(rest[n:]))
		}
	}
	slices.SortFunc(orders, func(a, b []byte) int { return bytes.Compare(b, a) })
	return sliceStream(orders)
}

// createdRange is the handlers created within t's range, from
// idx_created. Queries compare created_at to the microsecond, the index
// holds nanoseconds: the range is widened to whole microseconds, and
// Match decides at its edges.
func createdRange(tx *bolt.Tx, t attrs.IndexTerm) idStream {
	r := &boundedStream{s: &prefixStream{c: bucket(tx, bucketCreated).Cursor()}}
	if t.Lower != nil {
		r.lower = appendTime(nil, t.Lower.Value.AsTime())
	}
	if t.Upper != nil {
		r.upper = appendTime(nil, t.Upper.Value.AsTime().Add(time.Microsecond))
	}
	return r
}

// sliceStream yields the order keys it holds, sorted descending.
type sliceStream [][]byte

func (s sliceStream) seek(upper []byte, inclusive bool) []byte {
	if upper == nil {
		if len(s) == 0 {
			return nil
		}
		return s[0]
	}
	// The first key not above upper (or below it, if not inclusive).
	i, _ := slices.BinarySearchFunc(s, upper, func(k, target []byte) int {
		c := bytes.Compare(target, k) // descending
		if c == 0 && !inclusive {
			return -1
		}
		return c
	})
	if i == len(s) {
		return nil
	}
	return s[i]
}

// boundedStream yields the keys of s in [lower, upper) (nil: unbounded).
type boundedStream struct {
	s            idStream
	lower, upper []byte
}

func (b *boundedStream) seek(upper []byte, inclusive bool) []byte {
	if b.upper != nil && (upper == nil || bytes.Compare(upper, b.upper) >= 0) {
		upper, inclusive = b.upper, false
	}
	k := b.s.seek(upper, inclusive)
	if k == nil || b.lower != nil && bytes.Compare(k, b.lower) < 0 {
		return nil
	}
	return k
}
