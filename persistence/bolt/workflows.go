package bolt

import (
	"bytes"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// The workflows bucket keys each version name|0|version (names and
// versions have no NUL), so the versions of a name are one prefix scan.
// Which version is current is the Current field of its record: a name has
// few versions, and putting that mark in the record keeps a version and
// its mark in one key, which no crash can tear apart.

func workflowDefPrefix(name string) []byte { return append([]byte(name), 0) }

func workflowDefKey(name, version string) []byte {
	return append(workflowDefPrefix(name), version...)
}

// splitWorkflowDefKey splits a key of the workflows bucket; ok is false
// for a key without a version (a layout older than schema 7).
func splitWorkflowDefKey(k []byte) (name, version string, ok bool) {
	i := bytes.IndexByte(k, 0)
	if i <= 0 || i == len(k)-1 {
		return "", "", false
	}
	return string(k[:i]), string(k[i+1:]), true
}

// PutWorkflow stores def in its own commit, shared with concurrent writers
// through the group commit (as Publish). The transaction function checks
// ifHash against the committed state each time it runs, so of concurrent
// puts under the same condition exactly one commits; and it moves the
// current mark in the same transaction, so no reader sees two current
// versions.
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
		if err := checkIfHash(b, def.Name, def.Version, ifHash, false); err != nil {
			return err
		}
		if err := b.Put(workflowDefKey(def.Name, def.Version), enc); err != nil {
			return err
		}
		if !def.Current {
			return nil
		}
		return setCurrent(b, def.Name, def.Version)
	})
	if err != nil {
		return fmt.Errorf("bolt: put workflow %q version %q: %w", def.Name, def.Version, storageError(err))
	}
	return nil
}

// setCurrent marks version current and every other version of name not,
// rewriting only the records whose mark changes. A version whose record
// cannot be decoded is left as it is: it cannot be read as current
// anyway, and an unconditional put replaces it.
func setCurrent(b *bolt.Bucket, name, version string) error {
	type rewrite struct{ key, value []byte }
	var puts []rewrite
	prefix := workflowDefPrefix(name)
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		ver := string(k[len(prefix):])
		d, err := codec.DecodeStoredWorkflowDef(name, ver, v)
		if err != nil {
			if ver == version {
				return err
			}
			continue
		}
		if d.Current == (ver == version) {
			continue
		}
		d.Current = ver == version
		enc, err := codec.EncodeWorkflowDef(&d)
		if err != nil {
			return err
		}
		puts = append(puts, rewrite{bytes.Clone(k), enc})
	}
	// Puts after the scan: a cursor must not see the bucket change under it.
	for _, p := range puts {
		if err := b.Put(p.key, p.value); err != nil {
			return err
		}
	}
	return nil
}

// checkIfHash checks a PutWorkflow or (del) DeleteWorkflow condition
// against the stored record of (name, version).
func checkIfHash(b *bolt.Bucket, name, version, ifHash string, del bool) error {
	key := workflowDefKey(name, version)
	return backend.CheckIfHash(name, ifHash, del, has(b, key), func() (string, error) {
		stored, err := codec.DecodeStoredWorkflowDef(name, version, b.Get(key))
		return stored.Hash, err
	})
}

// GetWorkflow returns version of name, or the current version if version
// is "" (a scan of the name's few versions).
func (s *Store) GetWorkflow(ctx context.Context, name, version string) (persistence.WorkflowDef, error) {
	if err := persistence.ValidateWorkflowVersion(name, version, true); err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("bolt: get workflow: %w", err)
	}
	var d persistence.WorkflowDef
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := bucket(tx, bucketWorkflows)
		if version != "" {
			key := workflowDefKey(name, version)
			if !has(b, key) {
				return fmt.Errorf("workflow %q version %q: %w", name, version, persistence.ErrNotFound)
			}
			var err error
			d, err = codec.DecodeStoredWorkflowDef(name, version, b.Get(key))
			return err // decoding copied Def out of the mapped file
		}
		var damaged error
		prefix := workflowDefPrefix(name)
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			got, err := codec.DecodeStoredWorkflowDef(name, string(k[len(prefix):]), v)
			switch {
			case err != nil:
				damaged = err
			case got.Current:
				d = got
				return nil
			}
		}
		if damaged != nil {
			// The current version may be the one that cannot be read.
			return damaged
		}
		return fmt.Errorf("workflow %q: no current version: %w", name, persistence.ErrNotFound)
	})
	if err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("bolt: get workflow: %w", err)
	}
	return d, nil
}

// ListWorkflowDefs returns every stored version, by name, creation time
// and version.
func (s *Store) ListWorkflowDefs(ctx context.Context) ([]persistence.WorkflowDef, error) {
	var defs backend.Listing[persistence.WorkflowDef]
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return bucket(tx, bucketWorkflows).ForEach(func(k, v []byte) error {
			name, version, ok := splitWorkflowDefKey(k)
			if !ok {
				defs.Skip(fmt.Errorf("%w: workflow key %q has no version", persistence.ErrCorrupt, k))
				return nil
			}
			defs.Add(codec.DecodeStoredWorkflowDef(name, version, v))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: list workflows: %w", err)
	}
	backend.SortWorkflowDefs(defs.Items)
	if err := defs.Err("definitions"); err != nil {
		return defs.Items, fmt.Errorf("bolt: list workflows: %w", err)
	}
	return defs.Items, nil
}

// SetCurrentWorkflow moves the current mark to version of name, in its
// own commit (as PutWorkflow).
func (s *Store) SetCurrentWorkflow(ctx context.Context, name, version string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := persistence.ValidateWorkflowVersion(name, version, false); err != nil {
		return fmt.Errorf("bolt: set current workflow: %w", err)
	}
	err := s.update(func(tx *bolt.Tx) error {
		b := bucket(tx, bucketWorkflows)
		if !has(b, workflowDefKey(name, version)) {
			return fmt.Errorf("workflow %q version %q: %w", name, version, persistence.ErrNotFound)
		}
		return setCurrent(b, name, version)
	})
	if err != nil {
		return fmt.Errorf("bolt: set current workflow %q version %q: %w", name, version, storageError(err))
	}
	return nil
}

// DeleteWorkflow removes version of name, or every version of it, in its
// own commit (as PutWorkflow).
func (s *Store) DeleteWorkflow(ctx context.Context, name, version, ifHash string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := backend.CheckDeleteWorkflow(name, version, ifHash); err != nil {
		return fmt.Errorf("bolt: %w", err)
	}
	err := s.update(func(tx *bolt.Tx) error {
		b := bucket(tx, bucketWorkflows)
		if version != "" {
			if err := checkIfHash(b, name, version, ifHash, true); err != nil {
				return err
			}
			return b.Delete(workflowDefKey(name, version))
		}
		var keys [][]byte
		prefix := workflowDefPrefix(name)
		c := b.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			keys = append(keys, bytes.Clone(k))
		}
		if len(keys) == 0 {
			return fmt.Errorf("workflow %q: %w", name, persistence.ErrNotFound)
		}
		for _, k := range keys {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("bolt: delete workflow %q%s: %w", name, versionSuffix(version), storageError(err))
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
