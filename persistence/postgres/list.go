package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
	"github.com/wfd-dev/wfd/persistence/internal/pagetoken"
)

// where builds a WHERE clause with numbered parameters.
type where struct {
	conds []string
	args  []any
}

// add appends a condition whose parameters are written $%d in order.
func (w *where) add(cond string, args ...any) {
	nums := make([]any, len(args))
	for i := range args {
		nums[i] = len(w.args) + i + 1
	}
	w.conds = append(w.conds, fmt.Sprintf(cond, nums...))
	w.args = append(w.args, args...)
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// param returns the number the next parameter gets.
func (w *where) param(arg any) int {
	w.args = append(w.args, arg)
	return len(w.args)
}

// ListHandlers returns handlers matching q, newest first: by CreatedAt,
// ties by id (bytes), both descending. Each filter has an index that ends
// in (created_at, created_ns, id), so the planner reads one backwards and
// stops after a page.
func (s *Store) ListHandlers(ctx context.Context, q persistence.Query) ([]persistence.Handler, string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, "", err
	}
	if err := q.Validate(); err != nil {
		return nil, "", fmt.Errorf("postgres: list handlers: %w", err)
	}
	filters := pagetoken.HandlerFilters(&q)
	if q.Where != nil && (q.Where.Where != nil || q.Where.Order != nil) {
		return s.listWhere(ctx, &q, filters)
	}
	p := page{what: "list handlers", items: "handlers", kind: tokenHandlers, filters: filters, limit: q.Limit()}
	return listNewest(ctx, s, "wfd_handlers", p, q.PageToken, handlerFilter(&q), codec.DecodeStoredHandler)
}

// handlerFilter returns the conditions of q's filters but Where, on the
// columns of wfd_handlers (unqualified).
func handlerFilter(q *persistence.Query) func(*where) {
	return func(w *where) {
		if q.Workflow != "" {
			w.add("workflow = $%d", q.Workflow)
		}
		if q.Version != "" {
			w.add("workflow_version = $%d", q.Version) // wfd_handlers_version
		}
		if len(q.Statuses) > 0 {
			w.add("status = ANY($%d)", int16s(q.Statuses))
		}
		if q.Residency != 0 {
			w.add("residency = $%d", int16(q.Residency))
		}
		if cutoff, idle := q.IdleCutoff(); idle {
			if cutoff.IsZero() {
				w.add("idle_since IS NOT NULL")
			} else {
				w.add("idle_since IS NOT NULL AND (idle_since, idle_ns) <= ($%d, $%d)", cutoff, nsOf(cutoff))
			}
		}
	}
}

// GetTask returns a task.
func (s *Store) GetTask(ctx context.Context, id string) (persistence.Task, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.Task{}, err
	}
	var meta []byte
	if err := s.queryRow(ctx, `SELECT meta FROM wfd_tasks WHERE id = $1`, id).Scan(&meta); err != nil {
		return persistence.Task{}, fmt.Errorf("postgres: get task: %w", s.notFound(ctx, err, "task", id))
	}
	t, err := codec.DecodeStoredTask(id, meta)
	if err != nil {
		return persistence.Task{}, fmt.Errorf("postgres: get task: %w", err)
	}
	return t, nil
}

// ListTasks returns tasks matching q, newest first (CreatedAt, then id,
// both descending), from the task index that matches its filters.
func (s *Store) ListTasks(ctx context.Context, q persistence.TaskQuery) ([]persistence.Task, string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, "", err
	}
	if err := q.Validate(); err != nil {
		return nil, "", fmt.Errorf("postgres: list tasks: %w", err)
	}
	if q.PostFiltered() {
		return backend.FilterTasks(ctx, q, s.listTasks)
	}
	return s.listTasks(ctx, q)
}

// listTasks lists by q's indexed filters (ListTasks).
func (s *Store) listTasks(ctx context.Context, q persistence.TaskQuery) ([]persistence.Task, string, error) {
	p := page{what: "list tasks", items: "tasks", kind: tokenTasks, filters: pagetoken.TaskFilters(&q), limit: q.Limit()}
	return listNewest(ctx, s, "wfd_tasks", p, q.PageToken, func(w *where) {
		if len(q.Statuses) > 0 {
			w.add("status = ANY($%d)", int16s(q.Statuses))
		}
		assignees := slices.Clone(q.Assignees)
		if q.Assignee != "" {
			assignees = []string{q.Assignee}
		}
		if len(assignees) > 0 {
			w.add("assignee = ANY($%d)", assignees)
		}
		if q.Workflow != "" {
			w.add("workflow = $%d", q.Workflow)
		}
		if q.HandlerID != "" {
			w.add("handler_id = $%d", q.HandlerID)
		}
	}, codec.DecodeStoredTask)
}

// listNewest reads page p of table, whose rows are listed newest first
// (by created_at, created_ns, id, all descending), after the position of
// token, with the conditions filter adds.
func listNewest[T any](ctx context.Context, s *Store, table string, p page, token string, filter func(*where),
	decode func(id string, raw []byte) (T, error)) ([]T, string, error) {
	var w where
	if token != "" {
		pos, err := unpackToken(token, p.kind, p.filters)
		if err != nil {
			return nil, "", fmt.Errorf("postgres: %s: %w", p.what, err)
		}
		w.add("(created_at, created_ns, id) < ($%d, $%d, $%d)", pos.at, nsOf(pos.at), pos.id)
	}
	filter(&w)
	sql := fmt.Sprintf("SELECT id, created_at, created_ns, meta FROM %s%s ORDER BY created_at DESC, created_ns DESC, id DESC LIMIT $%d",
		table, w.sql(), w.param(p.limit+1))
	return readPage(ctx, s, p, sql, w.args, byID, decode)
}

// int16s converts the values of a status filter to the column's type.
func int16s[S ~int](values []S) []int16 {
	out := make([]int16, len(values))
	for i, v := range values {
		out[i] = int16(v)
	}
	return out
}
