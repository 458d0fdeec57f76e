package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wfd-dev/wfd/attrs"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
	"github.com/wfd-dev/wfd/persistence/internal/pagetoken"
)

// tokenOrdered is the kind of an ordered listing's page token (Query.Where
// with an order): its position is the id of the last handler listed.
const tokenOrdered byte = 'o'

// Batches of candidates a listing with a condition reads at a time: the
// first as many as the page needs, then twice as many each time, up to
// maxWhereBatch, until the page is full.
const (
	minWhereBatch = 50
	maxWhereBatch = 5000
)

// listWhere answers a ListHandlers with a Query.Where that has a
// condition or an order. One term of the condition (backend.DriveTerm)
// selects the candidates through an index, newest first: an attribute's
// term through wfd_handler_attrs, a built-in field's through
// wfd_handlers' columns. The other filters of q are SQL conditions; then
// the whole condition is q.Where.Match's, in Go, so the meaning is
// exactly attrs' (two-valued), whatever SQL would make of it. Candidates
// are read in batches until the page has its handlers and one more.
func (s *Store) listWhere(ctx context.Context, q *persistence.Query, filters []byte) ([]persistence.Handler, string, error) {
	term, ok, err := backend.DriveTerm(q)
	if err != nil {
		return nil, "", fmt.Errorf("postgres: list handlers: %w", err)
	}
	c := candidates{q: q}
	if ok {
		c.term = &term
	}
	if q.Where.Order != nil {
		return s.listOrdered(ctx, q, c, filters)
	}
	var after *position
	if q.PageToken != "" {
		pos, err := unpackToken(q.PageToken, tokenHandlers, filters)
		if err != nil {
			return nil, "", fmt.Errorf("postgres: list handlers: %w", err)
		}
		after = &pos
	}
	limit := q.Limit()
	hs, positions, lerr := s.matching(ctx, c, after, limit+1)
	var next string
	if len(hs) > limit {
		hs = hs[:limit]
		next = packToken(tokenHandlers, positions[limit-1], filters)
	}
	return hs, next, lerr
}

// listOrdered answers a ListHandlers whose Where has an order: every
// handler the query matches (at most persistence.MaxOrderedMatches),
// sorted, and the page after the handler of the token.
func (s *Store) listOrdered(ctx context.Context, q *persistence.Query, c candidates, filters []byte) ([]persistence.Handler, string, error) {
	var last string
	if q.PageToken != "" {
		payload, err := pagetoken.Open(q.PageToken, tokenOrdered, 2, func(payload []byte) uint64 { return pagetoken.Check(payload, filters) })
		if err != nil {
			return nil, "", fmt.Errorf("postgres: list handlers: %w", err)
		}
		last = string(payload[1:])
	}
	hs, _, lerr := s.matching(ctx, c, nil, persistence.MaxOrderedMatches+1)
	if len(hs) > persistence.MaxOrderedMatches {
		return nil, "", fmt.Errorf("postgres: list handlers: %w", backend.TooManyOrdered())
	}
	backend.SortOrdered(q, hs)
	page, nextID, err := backend.OrderedPage(hs, last, q.Limit())
	if err != nil {
		return nil, "", fmt.Errorf("postgres: list handlers: %w", err)
	}
	var next string
	if nextID != "" {
		payload := append([]byte{tokenOrdered}, nextID...)
		next = pagetoken.Seal(payload, pagetoken.Check(payload, filters))
	}
	return page, next, lerr
}

// matching returns the first want handlers after position after (nil:
// from the newest) that c selects and q.Where matches, newest first, with
// their positions. Handlers that do not decode are left out and reported
// in the error, returned with the rest.
func (s *Store) matching(ctx context.Context, c candidates, after *position, want int) ([]persistence.Handler, []position, error) {
	var (
		out       backend.Listing[persistence.Handler]
		positions []position
	)
	batch := min(max(want, minWhereBatch), maxWhereBatch)
	for {
		sql, args := c.sql(after, batch)
		n, err := s.scanCandidates(ctx, sql, args, func(id string, at time.Time, meta []byte) bool {
			after = &position{at: at, id: id}
			if meta == nil {
				return true // a filter of the query's, in SQL, left it out
			}
			h, err := codec.DecodeStoredHandler(id, meta)
			if err != nil {
				out.Skip(err)
				return true
			}
			if !backend.Match(c.q, &h) {
				return true
			}
			out.Add(h, nil)
			positions = append(positions, *after)
			return len(out.Items) < want
		})
		if err != nil {
			return nil, nil, fmt.Errorf("postgres: list handlers: %w", err)
		}
		if len(out.Items) >= want || n < batch {
			break
		}
		batch = min(2*batch, maxWhereBatch)
	}
	if err := out.Err("handlers"); err != nil {
		return out.Items, positions, fmt.Errorf("postgres: list handlers: %w", err)
	}
	return out.Items, positions, nil
}

// scanCandidates runs sql, whose rows are (id, created_at, created_ns,
// meta or NULL), and passes each row to f until it returns false. It
// returns the number of rows read.
func (s *Store) scanCandidates(ctx context.Context, sql string, args []any, f func(id string, at time.Time, meta []byte) bool) (int, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return 0, s.classify(ctx, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			id   string
			at   time.Time
			ns   int16
			meta []byte
		)
		if err := rows.Scan(&id, &at, &ns, &meta); err != nil {
			return n, s.classify(ctx, err)
		}
		n++
		if !f(id, fromParts(at, ns), meta) {
			break
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return n, s.classify(ctx, err)
	}
	return n, nil
}

// candidates is the query that selects a listing's candidates: the
// handlers its driving term selects (all, without one) that pass its
// other filters.
type candidates struct {
	q    *persistence.Query
	term *attrs.IndexTerm // nil: none (an order without a condition)
}

// sql returns the statement that reads n candidates after position after
// (nil: from the newest), newest first, as rows (id, created_at,
// created_ns, meta); meta is NULL for a candidate that a filter of the
// query other than Where leaves out.
func (c candidates) sql(after *position, n int) (string, []any) {
	var w where
	if c.term == nil || c.term.Builtin {
		// The columns of wfd_handlers, read through the index of the
		// term's column or of a filter's (or the creation index).
		if after != nil {
			w.add("(created_at, created_ns, id) < ($%d, $%d, $%d)", after.at, nsOf(after.at), after.id)
		}
		handlerFilter(c.q)(&w)
		if c.term != nil {
			builtinTerm(&w, c.term)
		}
		return fmt.Sprintf("SELECT id, created_at, created_ns, meta FROM wfd_handlers%s ORDER BY created_at DESC, created_ns DESC, id DESC LIMIT $%d",
			w.sql(), w.param(n)), w.args
	}
	// An attribute's term: the batch of candidates is read from an index
	// of wfd_handler_attrs alone (an index-only scan), then the handlers
	// of those rows, the other filters an expression on them.
	col := attrColumn(c.term.Type)
	w.add("workflow = $%d AND name = $%d AND typ = $%d", c.q.Workflow, c.term.Field, int16(c.term.Type))
	w.add(col + " IS NOT NULL") // the column's partial index
	attrTerm(&w, col, c.term)
	if after != nil {
		w.add("(created_at, created_ns, handler_id) < ($%d, $%d, $%d)", after.at, nsOf(after.at), after.id)
	}
	inner := w.sql()
	limit := w.param(n)
	w.conds = nil
	handlerFilter(c.q)(&w)
	meta := "h.meta"
	if len(w.conds) > 0 {
		// Unqualified, the filters' columns are wfd_handlers': c has
		// handler_id, created_at and created_ns only.
		meta = "CASE WHEN " + strings.Join(w.conds, " AND ") + " THEN h.meta END"
	}
	return fmt.Sprintf(`SELECT c.handler_id, c.created_at, c.created_ns, %s FROM (
	SELECT handler_id, created_at, created_ns FROM wfd_handler_attrs%s
	ORDER BY created_at DESC, created_ns DESC, handler_id DESC LIMIT $%d) c
LEFT JOIN wfd_handlers h ON h.id = c.handler_id
ORDER BY c.created_at DESC, c.created_ns DESC, c.handler_id DESC`, meta, inner, limit), w.args
}

// attrTerm adds the condition of an attribute's term on its column col.
func attrTerm(w *where, col string, t *attrs.IndexTerm) {
	if t.Kind == attrs.TermRange {
		for _, b := range []struct {
			bound  *attrs.Bound
			op, eq string
		}{{t.Lower, ">", ">="}, {t.Upper, "<", "<="}} {
			if b.bound == nil {
				continue
			}
			op := b.op
			if b.bound.Inclusive {
				op = b.eq
			}
			w.add(col+" "+op+" $%d", attrParam(b.bound.Value))
		}
		return
	}
	// =, in, contains: one value or several. With one, the index gives
	// the rows newest first and the scan stops after a batch.
	if len(t.Values) == 1 {
		w.add(col+" = $%d", attrParam(t.Values[0]))
		return
	}
	switch col {
	case "str":
		vs := make([]string, len(t.Values))
		for i, v := range t.Values {
			vs[i] = v.AsString()
		}
		w.add("str = ANY($%d)", vs)
	case "ts":
		vs := make([]time.Time, len(t.Values))
		for i, v := range t.Values {
			vs[i] = v.AsTime()
		}
		w.add("ts = ANY($%d)", vs)
	default:
		vs := make([]float64, len(t.Values))
		for i, v := range t.Values {
			vs[i] = attrNum(v)
		}
		w.add("num = ANY($%d)", vs)
	}
}

// attrParam is the parameter of a value compared to its column.
func attrParam(v attrs.Value) any {
	switch v.Type() {
	case attrs.String, attrs.KeywordList:
		return v.AsString()
	case attrs.Time:
		return v.AsTime()
	default:
		return attrNum(v)
	}
}

// builtinTerm adds the condition of a built-in field's term: workflow or
// status = or in, a created_at range. created_at is compared to the
// microsecond, which is what the column holds (the nanoseconds below it
// are created_ns).
func builtinTerm(w *where, t *attrs.IndexTerm) {
	switch t.Field {
	case attrs.FieldWorkflow:
		names := make([]string, len(t.Values))
		for i, v := range t.Values {
			names[i] = v.AsString()
		}
		if len(names) == 1 {
			w.add("workflow = $%d", names[0])
		} else {
			w.add("workflow = ANY($%d)", names)
		}
	case attrs.FieldStatus:
		var sts []int16
		for _, v := range t.Values {
			for _, st := range persistence.Statuses() {
				if st.String() == v.AsString() {
					sts = append(sts, int16(st))
				}
			}
		}
		if len(sts) == 1 {
			w.add("status = $%d", sts[0])
		} else {
			w.add("status = ANY($%d)", sts)
		}
	case attrs.FieldCreatedAt:
		if t.Lower != nil {
			op := ">"
			if t.Lower.Inclusive {
				op = ">="
			}
			w.add("created_at "+op+" $%d", t.Lower.Value.AsTime())
		}
		if t.Upper != nil {
			op := "<"
			if t.Upper.Inclusive {
				op = "<="
			}
			w.add("created_at "+op+" $%d", t.Upper.Value.AsTime())
		}
	}
}
