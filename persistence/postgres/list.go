package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
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
	filters := handlerFilters(&q)
	var w where
	if q.PageToken != "" {
		p, err := unpackToken(q.PageToken, tokenHandlers, filters)
		if err != nil {
			return nil, "", fmt.Errorf("postgres: list handlers: %w", err)
		}
		w.add("(created_at, created_ns, id) < ($%d, $%d, $%d)", p.at, nsOf(p.at), p.id)
	}
	if q.Workflow != "" {
		w.add("workflow = $%d", q.Workflow)
	}
	if len(q.Statuses) > 0 {
		st := make([]int16, len(q.Statuses))
		for i, s := range q.Statuses {
			st[i] = int16(s)
		}
		w.add("status = ANY($%d)", st)
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
	limit := q.Limit()
	sql := fmt.Sprintf("SELECT id, created_at, created_ns, meta FROM wfd_handlers%s ORDER BY created_at DESC, created_ns DESC, id DESC LIMIT $%d",
		w.sql(), w.param(limit+1))
	return readPage(ctx, s, page{what: "list handlers", items: "handlers", kind: tokenHandlers, filters: filters, limit: limit}, sql, w.args, byID, decodeHandler)
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
	t, err := decodeTask(id, meta)
	if err != nil {
		return persistence.Task{}, fmt.Errorf("postgres: get task: %w", err)
	}
	return t, nil
}

func decodeTask(id string, raw []byte) (persistence.Task, error) {
	t, err := codec.DecodeTask(raw)
	if err != nil {
		return persistence.Task{}, fmt.Errorf("task %q: %w", id, err)
	}
	if t.ID != id {
		return persistence.Task{}, fmt.Errorf("task %q: %w: value names task %q", id, persistence.ErrCorrupt, t.ID)
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
	filters := taskFilters(&q)
	var w where
	if q.PageToken != "" {
		p, err := unpackToken(q.PageToken, tokenTasks, filters)
		if err != nil {
			return nil, "", fmt.Errorf("postgres: list tasks: %w", err)
		}
		w.add("(created_at, created_ns, id) < ($%d, $%d, $%d)", p.at, nsOf(p.at), p.id)
	}
	if len(q.Statuses) > 0 {
		st := make([]int16, len(q.Statuses))
		for i, s := range q.Statuses {
			st[i] = int16(s)
		}
		w.add("status = ANY($%d)", st)
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
	limit := q.Limit()
	sql := fmt.Sprintf("SELECT id, created_at, created_ns, meta FROM wfd_tasks%s ORDER BY created_at DESC, created_ns DESC, id DESC LIMIT $%d",
		w.sql(), w.param(limit+1))
	return readPage(ctx, s, page{what: "list tasks", items: "tasks", kind: tokenTasks, filters: filters, limit: limit}, sql, w.args, byID, decodeTask)
}
