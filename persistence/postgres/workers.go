package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/persistence"
)

var _ persistence.WorkerRoutes = (*Store)(nil)

const (
	// The rows no longer served go, the new ones come (disjoint rows,
	// so one statement); nothing is inserted for a replica that is not
	// registered (the foreign key would refuse it).
	sqlAdvertise = `WITH s AS (
			SELECT * FROM unnest($2::text[], $3::text[]) AS s(workflow, hash)
		), gone AS (
			DELETE FROM wfd_replica_workflows r WHERE r.replica_id = $1
			AND NOT EXISTS (SELECT 1 FROM s WHERE s.workflow = r.workflow AND s.hash = r.hash)
		)
		INSERT INTO wfd_replica_workflows (replica_id, workflow, hash)
		SELECT $1, s.workflow, s.hash FROM s WHERE EXISTS (SELECT 1 FROM wfd_replicas WHERE id = $1)
		ON CONFLICT DO NOTHING`
	sqlWorkflowRoutes = `SELECT r.id, r.address, w.workflow, w.hash
		FROM wfd_replica_workflows w JOIN wfd_replicas r ON r.id = w.replica_id
		WHERE r.expires_at > now() ORDER BY r.id, w.workflow, w.hash`
	sqlStranded = `SELECT h.id FROM wfd_handlers h LEFT JOIN wfd_leases l ON l.handler_id = h.id
		WHERE h.workflow = ANY($1) AND h.status = $2 AND h.residency = $3 AND h.idle_since IS NULL
		AND (l.handler_id IS NULL OR l.owner = '' OR l.expires_at <= now())
		ORDER BY h.id LIMIT $4`
)

// AdvertiseWorkflows implements persistence.WorkerRoutes.
func (s *Store) AdvertiseWorkflows(ctx context.Context, replica string, served []persistence.ServedWorkflow) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if replica == "" {
		return fmt.Errorf("%w: postgres: advertise workflows: no replica", persistence.ErrInvalid)
	}
	names, hashes := make([]string, len(served)), make([]string, len(served))
	for i, w := range served {
		names[i], hashes[i] = w.Workflow, w.Hash
	}
	if _, err := s.pool.Exec(ctx, sqlAdvertise, replica, names, hashes); err != nil {
		return fmt.Errorf("postgres: advertise workflows of %q: %w", replica, s.classify(ctx, err))
	}
	return nil
}

// WorkflowRoutes implements persistence.WorkerRoutes.
func (s *Store) WorkflowRoutes(ctx context.Context) ([]persistence.WorkflowRoute, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, sqlWorkflowRoutes)
	if err != nil {
		return nil, fmt.Errorf("postgres: workflow routes: %w", s.classify(ctx, err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (persistence.WorkflowRoute, error) {
		var r persistence.WorkflowRoute
		err := row.Scan(&r.Replica, &r.Address, &r.Workflow, &r.Hash)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: workflow routes: %w", s.classify(ctx, err))
	}
	return out, nil
}

// StrandedHandlers implements persistence.WorkerRoutes.
func (s *Store) StrandedHandlers(ctx context.Context, workflows []string, limit int) ([]string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if len(workflows) == 0 || limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, sqlStranded, workflows, int16(persistence.StatusRunning), int16(persistence.ResidencyActive), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: stranded handlers: %w", s.classify(ctx, err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: stranded handlers: %w", s.classify(ctx, err))
	}
	return ids, nil
}
