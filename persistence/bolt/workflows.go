package bolt

import (
	"context"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// PutWorkflow stores def in its own commit, shared with concurrent writers
// through the group commit (as Publish). The transaction function checks
// ifHash against the committed state each time it runs, so of concurrent
// puts under the same condition exactly one commits.
func (s *Store) PutWorkflow(ctx context.Context, def persistence.WorkflowDef, ifHash string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := def.Validate(); err != nil {
		return fmt.Errorf("bolt: put workflow: %w", err)
	}
	if err := persistence.ValidateIfHash(ifHash, true); err != nil {
		return fmt.Errorf("bolt: put workflow %q: %w", def.Name, err)
	}
	// Encoded once, here: the caller may reuse def.Def once PutWorkflow
	// returns, and the function may run again.
	def.CreatedAt, def.UpdatedAt = def.CreatedAt.UTC(), def.UpdatedAt.UTC()
	enc, err := codec.EncodeWorkflowDef(&def)
	if err != nil {
		return fmt.Errorf("bolt: put workflow %q: %w", def.Name, err)
	}
	key := []byte(def.Name)
	err = s.update(func(tx *bolt.Tx) error {
		b := bucket(tx, bucketWorkflows)
		if err := checkIfHash(b, def.Name, ifHash); err != nil {
			return err
		}
		return b.Put(key, enc)
	})
	if err != nil {
		return fmt.Errorf("bolt: put workflow %q: %w", def.Name, storageError(err))
	}
	return nil
}

// checkIfHash checks a PutWorkflow or DeleteWorkflow condition against
// the stored definition of name. A stored value that cannot be decoded
// fails a conditional call (its hash is unknown) but not an unconditional
// one, which is how an operator's tool replaces or removes it.
func checkIfHash(b *bolt.Bucket, name, ifHash string) error {
	if ifHash == "" {
		return nil
	}
	exists := has(b, []byte(name))
	switch {
	case !exists && ifHash == persistence.Absent:
		return nil
	case !exists:
		return fmt.Errorf("workflow %q: %w", name, persistence.ErrNotFound)
	case ifHash == persistence.Absent:
		return fmt.Errorf("workflow %q: %w", name, persistence.ErrExists)
	}
	stored, err := decodeStoredDef(name, b.Get([]byte(name)))
	if err != nil {
		return err
	}
	if stored.Hash != ifHash {
		return fmt.Errorf("%w: workflow %q has hash %q, not %q", persistence.ErrConflict, name, stored.Hash, ifHash)
	}
	return nil
}

// GetWorkflow returns the definition stored under name.
func (s *Store) GetWorkflow(ctx context.Context, name string) (persistence.WorkflowDef, error) {
	if err := persistence.ValidateWorkflowName(name); err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("bolt: get workflow: %w", err)
	}
	var d persistence.WorkflowDef
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := bucket(tx, bucketWorkflows)
		if !has(b, []byte(name)) {
			return fmt.Errorf("workflow %q: %w", name, persistence.ErrNotFound)
		}
		var err error
		d, err = decodeStoredDef(name, b.Get([]byte(name)))
		return err
	})
	if err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("bolt: get workflow: %w", err)
	}
	return d, nil
}

// ListWorkflowDefs returns every stored definition in key (name) order.
func (s *Store) ListWorkflowDefs(ctx context.Context) ([]persistence.WorkflowDef, error) {
	var (
		out     []persistence.WorkflowDef
		corrupt []error
	)
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return bucket(tx, bucketWorkflows).ForEach(func(k, v []byte) error {
			d, err := decodeStoredDef(string(k), v)
			if err != nil {
				corrupt = append(corrupt, err)
				return nil
			}
			out = append(out, d)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: list workflows: %w", err)
	}
	if len(corrupt) > 0 {
		return out, fmt.Errorf("bolt: list workflows: %d definitions skipped: %w", len(corrupt), errors.Join(corrupt...))
	}
	return out, nil
}

// DeleteWorkflow removes the definition stored under name, in its own
// commit (as PutWorkflow).
func (s *Store) DeleteWorkflow(ctx context.Context, name, ifHash string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := persistence.ValidateWorkflowName(name); err != nil {
		return fmt.Errorf("bolt: delete workflow: %w", err)
	}
	if err := persistence.ValidateIfHash(ifHash, false); err != nil {
		return fmt.Errorf("bolt: delete workflow %q: %w", name, err)
	}
	key := []byte(name)
	err := s.update(func(tx *bolt.Tx) error {
		b := bucket(tx, bucketWorkflows)
		if !has(b, key) {
			return fmt.Errorf("workflow %q: %w", name, persistence.ErrNotFound)
		}
		if err := checkIfHash(b, name, ifHash); err != nil {
			return err
		}
		return b.Delete(key)
	})
	if err != nil {
		return fmt.Errorf("bolt: delete workflow %q: %w", name, storageError(err))
	}
	return nil
}

// decodeStoredDef decodes the definition stored under name; a value that
// names another workflow is corrupt.
func decodeStoredDef(name string, raw []byte) (persistence.WorkflowDef, error) {
	d, err := codec.DecodeWorkflowDef(raw)
	if err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("workflow %q: %w", name, err)
	}
	if d.Name != name {
		return persistence.WorkflowDef{}, fmt.Errorf("workflow %q: %w: value names workflow %q", name, persistence.ErrCorrupt, d.Name)
	}
	return d, nil // decoding copied Def out of the mapped file
}
