package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// PutWorkflow stores def, each condition one statement that PostgreSQL
// evaluates on the row it locks: of concurrent puts under one condition,
// one wins (a conditional UPDATE re-checks the hash on the row version a
// concurrent put committed; a create-only INSERT hits the primary key).
func (s *Store) PutWorkflow(ctx context.Context, def persistence.WorkflowDef, ifHash string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	enc, err := backend.PrepareWorkflowDef(def, ifHash)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	cctx, cancel := s.commitContext(ctx)
	defer cancel()
	switch ifHash {
	case "":
		_, err = s.pool.Exec(cctx, `INSERT INTO wfd_workflows (name, hash, def) VALUES ($1, $2, $3)
			ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, def = excluded.def`, def.Name, def.Hash, enc)
	case persistence.Absent:
		_, err = s.pool.Exec(cctx, `INSERT INTO wfd_workflows (name, hash, def) VALUES ($1, $2, $3)`, def.Name, def.Hash, enc)
		if isUniqueViolation(err, "wfd_workflows_pkey") {
			err = fmt.Errorf("workflow %q: %w", def.Name, persistence.ErrExists)
		}
	default:
		var n int64
		n, err = s.execRows(cctx, `UPDATE wfd_workflows SET hash = $2, def = $3 WHERE name = $1 AND hash = $4`, def.Name, def.Hash, enc, ifHash)
		if err == nil && n == 0 {
			err = s.conditionFailed(cctx, def.Name, ifHash, false)
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: put workflow %q: %w", def.Name, s.classify(ctx, err))
	}
	return nil
}

func (s *Store) execRows(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := s.pool.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

// conditionFailed says why a conditional statement on workflow name
// (del: a delete) touched no row: there is none, or its hash is not
// ifHash. Should the condition hold by now (a concurrent put since the
// statement), the statement still met another hash: a conflict.
func (s *Store) conditionFailed(ctx context.Context, name, ifHash string, del bool) error {
	var hash string
	err := s.queryRow(ctx, `SELECT hash FROM wfd_workflows WHERE name = $1`, name).Scan(&hash)
	exists := !errors.Is(err, pgx.ErrNoRows)
	if exists && err != nil {
		return err
	}
	if err := backend.CheckIfHash(name, ifHash, del, exists, func() (string, error) { return hash, nil }); err != nil {
		return err
	}
	return backend.HashConflict(name, hash, ifHash)
}

// GetWorkflow returns the definition stored under name.
func (s *Store) GetWorkflow(ctx context.Context, name string) (persistence.WorkflowDef, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.WorkflowDef{}, err
	}
	if err := persistence.ValidateWorkflowName(name); err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("postgres: get workflow: %w", err)
	}
	var raw []byte
	if err := s.queryRow(ctx, `SELECT def FROM wfd_workflows WHERE name = $1`, name).Scan(&raw); err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("postgres: get workflow: %w", s.notFound(ctx, err, "workflow", name))
	}
	d, err := codec.DecodeStoredWorkflowDef(name, raw)
	if err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("postgres: get workflow: %w", err)
	}
	return d, nil
}

// ListWorkflowDefs returns every stored definition, by name (bytes).
func (s *Store) ListWorkflowDefs(ctx context.Context) ([]persistence.WorkflowDef, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT name, def FROM wfd_workflows ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list workflows: %w", s.classify(ctx, err))
	}
	var (
		defs backend.Listing[persistence.WorkflowDef]
		name string
		raw  []byte
	)
	if _, err := pgx.ForEachRow(rows, []any{&name, &raw}, func() error {
		defs.Add(codec.DecodeStoredWorkflowDef(name, raw))
		return nil
	}); err != nil {
		return nil, fmt.Errorf("postgres: list workflows: %w", s.classify(ctx, err))
	}
	if err := defs.Err("definitions"); err != nil {
		return defs.Items, fmt.Errorf("postgres: list workflows: %w", err)
	}
	return defs.Items, nil
}

// DeleteWorkflow removes the definition stored under name.
func (s *Store) DeleteWorkflow(ctx context.Context, name, ifHash string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := backend.CheckDeleteWorkflow(name, ifHash); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	cctx, cancel := s.commitContext(ctx)
	defer cancel()
	n, err := s.execRows(cctx, `DELETE FROM wfd_workflows WHERE name = $1 AND ($2 = '' OR hash = $2)`, name, ifHash)
	if err == nil && n == 0 {
		err = s.conditionFailed(cctx, name, ifHash, true)
	}
	if err != nil {
		return fmt.Errorf("postgres: delete workflow %q: %w", name, s.classify(ctx, err))
	}
	return nil
}
