package bolt

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
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
	enc, err := backend.PrepareWorkflowDef(def, ifHash)
	if err != nil {
		return fmt.Errorf("bolt: %w", err)
	}
	err = s.update(func(tx *bolt.Tx) error {
		b := bucket(tx, bucketWorkflows)
		if err := checkIfHash(b, def.Name, ifHash, false); err != nil {
			return err
		}
		return b.Put([]byte(def.Name), enc)
	})
	if err != nil {
		return fmt.Errorf("bolt: put workflow %q: %w", def.Name, storageError(err))
	}
	return nil
}

// checkIfHash checks a PutWorkflow or (del) DeleteWorkflow condition
// against the stored definition of name.
func checkIfHash(b *bolt.Bucket, name, ifHash string, del bool) error {
	key := []byte(name)
	return backend.CheckIfHash(name, ifHash, del, has(b, key), func() (string, error) {
		stored, err := codec.DecodeStoredWorkflowDef(name, b.Get(key))
		return stored.Hash, err
	})
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
		d, err = codec.DecodeStoredWorkflowDef(name, b.Get([]byte(name)))
		return err // decoding copied Def out of the mapped file
	})
	if err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("bolt: get workflow: %w", err)
	}
	return d, nil
}

// ListWorkflowDefs returns every stored definition in key (name) order.
func (s *Store) ListWorkflowDefs(ctx context.Context) ([]persistence.WorkflowDef, error) {
	var defs backend.Listing[persistence.WorkflowDef]
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return bucket(tx, bucketWorkflows).ForEach(func(k, v []byte) error {
			defs.Add(codec.DecodeStoredWorkflowDef(string(k), v))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: list workflows: %w", err)
	}
	if err := defs.Err("definitions"); err != nil {
		return defs.Items, fmt.Errorf("bolt: list workflows: %w", err)
	}
	return defs.Items, nil
}

// DeleteWorkflow removes the definition stored under name, in its own
// commit (as PutWorkflow).
func (s *Store) DeleteWorkflow(ctx context.Context, name, ifHash string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := backend.CheckDeleteWorkflow(name, ifHash); err != nil {
		return fmt.Errorf("bolt: %w", err)
	}
	err := s.update(func(tx *bolt.Tx) error {
		b := bucket(tx, bucketWorkflows)
		if err := checkIfHash(b, name, ifHash, true); err != nil {
			return err
		}
		return b.Delete([]byte(name))
	})
	if err != nil {
		return fmt.Errorf("bolt: delete workflow %q: %w", name, storageError(err))
	}
	return nil
}
