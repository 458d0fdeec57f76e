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

// workflowLock is the class of the transaction-scoped advisory locks
// (pg_advisory_xact_lock(class, hashtext(name))) that serialise the
// writes of one workflow name: a put checks its condition and moves the
// current mark among rows that a concurrent put may be inserting, which
// row locks alone would not cover. Two names whose hashes collide only
// wait for each other.
const workflowLock = 0x77666477 // "wfdw"

// The current column is the truth about which version is current; the
// Current field in the def blob is what the writer gave and is not kept
// up to date when another version takes the mark (that would rewrite
// every version's blob), so reads take it from the column.

// PutWorkflow stores def in one transaction under the name's lock: the
// condition is checked on the stored row, and the row and the current
// mark change together, so of concurrent puts under one condition one
// wins and a name never has two current versions.
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
	err = s.workflowTx(cctx, def.Name, func(tx pgx.Tx) error {
		if err := checkWorkflowIfHash(cctx, tx, def.Name, def.Version, ifHash, false); err != nil {
			return err
		}
		if def.Current {
			if _, err := tx.Exec(cctx, `UPDATE wfd_workflows SET current = false WHERE name = $1 AND current`, def.Name); err != nil {
				return err
			}
		}
		_, err := tx.Exec(cctx, `INSERT INTO wfd_workflows (name, version, hash, def, current) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (name, version) DO UPDATE SET hash = excluded.hash, def = excluded.def, current = excluded.current`,
			def.Name, def.Version, def.Hash, enc, def.Current)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: put workflow %q version %q: %w", def.Name, def.Version, s.classify(ctx, err))
	}
	return nil
}

// workflowTx runs fn in a transaction that holds name's advisory lock.
func (s *Store) workflowTx(ctx context.Context, name string, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, int32(workflowLock), name); err != nil {
			return err
		}
		return fn(tx)
	})
}

// checkWorkflowIfHash checks a PutWorkflow or (del) DeleteWorkflow
// condition against the stored row of (name, version), under the name's
// lock.
func checkWorkflowIfHash(ctx context.Context, tx pgx.Tx, name, version, ifHash string, del bool) error {
	var hash string
	err := tx.QueryRow(ctx, `SELECT hash FROM wfd_workflows WHERE name = $1 AND version = $2`, name, version).Scan(&hash)
	exists := !errors.Is(err, pgx.ErrNoRows)
	if exists && err != nil {
		return err
	}
	return backend.CheckIfHash(name, ifHash, del, exists, func() (string, error) { return hash, nil })
}

func (s *Store) execRows(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := s.pool.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

// decodeWorkflowDef decodes the def column of the row (name, version),
// whose current column is current. The row's columns, its key, say which
// version it is, as they say whether it is current: a blob written before
// versions has none, and one written with a version and taken down to
// schema 5 and up again (00006's Down and Up) has another; either way,
// migration 00006 named the row.
func decodeWorkflowDef(name, version string, current bool, raw []byte) (persistence.WorkflowDef, error) {
	d, err := codec.DecodeWorkflowDef(raw)
	if err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("workflow %q version %q: %w", name, version, err)
	}
	if d.Name != name {
		return persistence.WorkflowDef{}, fmt.Errorf("workflow %q version %q: %w: value names workflow %q",
			name, version, persistence.ErrCorrupt, d.Name)
	}
	d.Version, d.Current = version, current
	return d, nil
}

// GetWorkflow returns version of name, or its current version (through
// the partial index on current) if version is "".
func (s *Store) GetWorkflow(ctx context.Context, name, version string) (persistence.WorkflowDef, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.WorkflowDef{}, err
	}
	if err := persistence.ValidateWorkflowVersion(name, version, true); err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("postgres: get workflow: %w", err)
	}
	var (
		raw     []byte
		current bool
		stored  string
		err     error
	)
	if version == "" {
		err = s.queryRow(ctx, `SELECT version, current, def FROM wfd_workflows WHERE name = $1 AND current`, name).
			Scan(&stored, &current, &raw)
	} else {
		err = s.queryRow(ctx, `SELECT version, current, def FROM wfd_workflows WHERE name = $1 AND version = $2`, name, version).
			Scan(&stored, &current, &raw)
	}
	if err != nil {
		what := fmt.Sprintf("%s version %q", name, version)
		if version == "" {
			what = name + " (current version)"
		}
		return persistence.WorkflowDef{}, fmt.Errorf("postgres: get workflow: %w", s.notFound(ctx, err, "workflow", what))
	}
	d, err := decodeWorkflowDef(name, stored, current, raw)
	if err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("postgres: get workflow: %w", err)
	}
	return d, nil
}

// ListWorkflowDefs returns every stored version, by name (bytes), then
// creation time and version (sorted after decoding: the time is in the
// blob).
func (s *Store) ListWorkflowDefs(ctx context.Context) ([]persistence.WorkflowDef, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT name, version, current, def FROM wfd_workflows ORDER BY name, version`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list workflows: %w", s.classify(ctx, err))
	}
	var (
		defs          backend.Listing[persistence.WorkflowDef]
		name, version string
		current       bool
		raw           []byte
	)
	if _, err := pgx.ForEachRow(rows, []any{&name, &version, &current, &raw}, func() error {
		defs.Add(decodeWorkflowDef(name, version, current, raw))
		return nil
	}); err != nil {
		return nil, fmt.Errorf("postgres: list workflows: %w", s.classify(ctx, err))
	}
	backend.SortWorkflowDefs(defs.Items)
	if err := defs.Err("definitions"); err != nil {
		return defs.Items, fmt.Errorf("postgres: list workflows: %w", err)
	}
	return defs.Items, nil
}

// SetCurrentWorkflow moves the current mark to version of name in one
// transaction under the name's lock.
func (s *Store) SetCurrentWorkflow(ctx context.Context, name, version string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := persistence.ValidateWorkflowVersion(name, version, false); err != nil {
		return fmt.Errorf("postgres: set current workflow: %w", err)
	}
	cctx, cancel := s.commitContext(ctx)
	defer cancel()
	err := s.workflowTx(cctx, name, func(tx pgx.Tx) error {
		if _, err := tx.Exec(cctx, `UPDATE wfd_workflows SET current = false WHERE name = $1 AND current AND version <> $2`,
			name, version); err != nil {
			return err
		}
		tag, err := tx.Exec(cctx, `UPDATE wfd_workflows SET current = true WHERE name = $1 AND version = $2`, name, version)
		if err == nil && tag.RowsAffected() == 0 {
			// Rolled back with the transaction: the mark stays where it was.
			err = fmt.Errorf("workflow %q version %q: %w", name, version, persistence.ErrNotFound)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: set current workflow %q version %q: %w", name, version, s.classify(ctx, err))
	}
	return nil
}

// DeleteWorkflow removes version of name, or every version of it.
func (s *Store) DeleteWorkflow(ctx context.Context, name, version, ifHash string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := backend.CheckDeleteWorkflow(name, version, ifHash); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	cctx, cancel := s.commitContext(ctx)
	defer cancel()
	var err error
	if version == "" {
		var n int64
		n, err = s.execRows(cctx, `DELETE FROM wfd_workflows WHERE name = $1`, name)
		if err == nil && n == 0 {
			err = fmt.Errorf("workflow %q: %w", name, persistence.ErrNotFound)
		}
	} else {
		err = s.workflowTx(cctx, name, func(tx pgx.Tx) error {
			if err := checkWorkflowIfHash(cctx, tx, name, version, ifHash, true); err != nil {
				return err
			}
			_, err := tx.Exec(cctx, `DELETE FROM wfd_workflows WHERE name = $1 AND version = $2`, name, version)
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("postgres: delete workflow %q%s: %w", name, versionSuffix(version), s.classify(ctx, err))
	}
	return nil
}

// versionSuffix names version in an error, if there is one.
func versionSuffix(version string) string {
	if version == "" {
		return " (every version)"
	}
	return fmt.Sprintf(" version %q", version)
}

// CountVersions counts the handlers of workflow by version, status and
// residency: a GROUP BY that wfd_handlers_version answers with an
// index-only scan where the visibility map allows.
func (s *Store) CountVersions(ctx context.Context, workflow string) ([]persistence.VersionCount, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if err := persistence.ValidateWorkflowName(workflow); err != nil {
		return nil, fmt.Errorf("postgres: count versions: %w", err)
	}
	rows, err := s.pool.Query(ctx, `SELECT workflow_version, status, residency, count(*) FROM wfd_handlers
		WHERE workflow = $1 GROUP BY workflow_version, status, residency ORDER BY workflow_version, status, residency`, workflow)
	if err != nil {
		return nil, fmt.Errorf("postgres: count versions: %w", s.classify(ctx, err))
	}
	var (
		out               []persistence.VersionCount
		version           string
		status, residency int16
		n                 int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&version, &status, &residency, &n}, func() error {
		out = append(out, persistence.VersionCount{Version: version, Status: persistence.Status(status),
			Residency: persistence.Residency(residency), Count: n})
		return nil
	}); err != nil {
		return nil, fmt.Errorf("postgres: count versions: %w", s.classify(ctx, err))
	}
	return out, nil
}

// RunningVersions lists the versions of workflow with running handlers.
func (s *Store) RunningVersions(ctx context.Context, workflow string) ([]string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if err := persistence.ValidateWorkflowName(workflow); err != nil {
		return nil, fmt.Errorf("postgres: running versions: %w", err)
	}
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT workflow_version FROM wfd_handlers
		WHERE workflow = $1 AND status = $2 ORDER BY workflow_version`, workflow, int16(persistence.StatusRunning))
	if err != nil {
		return nil, fmt.Errorf("postgres: running versions: %w", s.classify(ctx, err))
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: running versions: %w", s.classify(ctx, err))
	}
	return out, nil
}
