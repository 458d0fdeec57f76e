package bolt_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
)

// TestOpenSchema6 opens a file of layout version 6: definitions keyed by
// name alone, without versions, and no idx_workflow_version. Open moves
// each definition to a current version named after its hash (first 16
// characters), keeps one it cannot decode where deleting the name's
// versions removes it, and fills the index from the handlers' metadata,
// so listing by version and CountVersions see the handlers stored before.
func TestOpenSchema6(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wfd.db")
	s := open(t, path)
	ids := testIDs()
	old := testHandler(ids[0]) // stored before versions: version ""
	versioned := testHandler(ids[1])
	versioned.WorkflowVersion = "v2"
	versioned.Status = persistence.StatusCompleted
	versioned.CompletedAt = versioned.CreatedAt
	if err := s.Write(t.Context(), persistence.Change{Handler: old}, persistence.Change{Handler: versioned}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The old layout: a definition under its name, encoded without a
	// version (as wfd wrote it then), and one that cannot be decoded.
	unversioned := testDef("remote", "0123456789abcdef0123")
	unversioned.Version, unversioned.Current = "", false
	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		if err := tx.DeleteBucket([]byte("idx_workflow_version")); err != nil {
			return err
		}
		b := tx.Bucket([]byte("workflows"))
		if err := b.Put([]byte("remote"), encodeDef(t, unversioned)); err != nil {
			return err
		}
		if err := b.Put([]byte("broken"), []byte("junk")); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte{0, 0, 0, 6})
	})

	s = open(t, path)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if v := schemaVersion(t, path); !bytes.Equal(v, []byte{0, 0, 0, 9}) {
		t.Fatalf("schema version after migration = %v, want 7", v)
	}
	s = open(t, path)
	defer func() { _ = s.Close() }()
	ctx := t.Context()

	got, err := s.GetWorkflow(ctx, "remote", "")
	if err != nil || got.Version != "0123456789abcdef" || !got.Current || got.Hash != unversioned.Hash ||
		!bytes.Equal(got.Def, unversioned.Def) {
		t.Fatalf("current version of remote after migration = %+v, %v; want version 0123456789abcdef", got, err)
	}
	if _, err := s.GetWorkflow(ctx, "remote", "0123456789abcdef"); err != nil {
		t.Fatalf("GetWorkflow by the migrated version: %v", err)
	}
	defs, err := s.ListWorkflowDefs(ctx)
	if !errors.Is(err, persistence.ErrCorrupt) || len(defs) != 1 || defs[0].Name != "remote" {
		t.Fatalf("ListWorkflowDefs after migration = %v, %v; want remote and ErrCorrupt for broken", defs, err)
	}
	if err := s.DeleteWorkflow(ctx, "broken", "", ""); err != nil {
		t.Fatalf("DeleteWorkflow of every version of the undecodable definition: %v", err)
	}
	if _, err := s.ListWorkflowDefs(ctx); err != nil {
		t.Fatalf("ListWorkflowDefs after deleting it: %v", err)
	}

	counts, err := s.CountVersions(ctx, "wf")
	want := []persistence.VersionCount{
		{Version: "", Status: old.Status, Residency: old.Residency, Count: 1},
		{Version: "v2", Status: versioned.Status, Residency: versioned.Residency, Count: 1},
	}
	if err != nil || !slices.Equal(counts, want) {
		t.Fatalf("CountVersions after migration = %v, %v; want %v", counts, err, want)
	}
	hs, _, err := s.ListHandlers(ctx, persistence.Query{Workflow: "wf", Version: "v2"})
	if err != nil || len(hs) != 1 || hs[0].ID != versioned.ID {
		t.Fatalf("ListHandlers of version v2 after migration = %v, %v; want %s", hs, err, versioned.ID)
	}
}
