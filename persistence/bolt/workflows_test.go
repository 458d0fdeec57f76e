package bolt_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

func testDef(name, hash string) persistence.WorkflowDef {
	at := time.Date(2025, 6, 1, 12, 0, 0, 123, time.UTC)
	return persistence.WorkflowDef{Name: name, Version: "v-" + hash, Current: true, Hash: hash,
		Def: []byte("def of " + name + " " + hash), CreatedAt: at, UpdatedAt: at, Source: "worker-1"}
}

func encodeDef(t testing.TB, d persistence.WorkflowDef) []byte {
	t.Helper()
	b, err := codec.EncodeWorkflowDef(&d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenSchema4 opens a file of layout version 4 (a current file without
// the workflows bucket, which version 5 added): Check finds it sound, and
// Open migrates it in place, keeping its handlers, and stores definitions
// that survive a reopen.
func TestOpenSchema4(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wfd.db")
	s := open(t, path)
	h := testHandler(testIDs()[0])
	if err := s.Write(t.Context(), persistence.Change{Handler: h, Snapshot: []byte("snap")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		if err := tx.DeleteBucket([]byte("workflows")); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte{0, 0, 0, 4})
	})
	if r, err := bolt.Check(t.Context(), path); err != nil || !r.OK() {
		t.Fatalf("Check on a schema 4 file = %+v, %v", r, err)
	}

	s = open(t, path)
	if got, err := s.GetHandler(t.Context(), h.ID); err != nil || got.Workflow != h.Workflow {
		t.Fatalf("GetHandler after migration = %+v, %v", got, err)
	}
	def := testDef("remote", "h1")
	if err := s.PutWorkflow(t.Context(), def, persistence.Absent); err != nil {
		t.Fatalf("PutWorkflow after migration: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if v := schemaVersion(t, path); !bytes.Equal(v, []byte{0, 0, 0, 9}) {
		t.Fatalf("schema version after migration = %v, want 9", v)
	}
	if r, err := bolt.Check(t.Context(), path); err != nil || !r.OK() {
		t.Fatalf("Check after migration = %+v, %v", r, err)
	}
	s = open(t, path)
	defer func() { _ = s.Close() }()
	got, err := s.GetWorkflow(t.Context(), "remote", "")
	if err != nil || got.Hash != def.Hash || !bytes.Equal(got.Def, def.Def) || !got.CreatedAt.Equal(def.CreatedAt) {
		t.Fatalf("GetWorkflow after reopen = %+v, %v", got, err)
	}
}

// TestCheckMissingWorkflows: in a file of schema 5 the workflows bucket
// must be there.
func TestCheckMissingWorkflows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wfd.db")
	if err := open(t, path).Close(); err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, path, func(tx *bbolt.Tx) error { return tx.DeleteBucket([]byte("workflows")) })
	r, err := bolt.Check(t.Context(), path)
	if err != nil || r.OK() || !strings.Contains(strings.Join(r.Problems, "\n"), "bucket workflows is missing") {
		t.Fatalf("Check on a schema 5 file without workflows = %+v, %v", r, err)
	}
}

// TestCorruptWorkflowDef: a stored definition that cannot be decoded (or
// names another workflow) fails reading it and conditional writes with
// ErrCorrupt, is left out of ListWorkflowDefs with an error naming it,
// and an unconditional put or delete replaces it.
func TestCorruptWorkflowDef(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wfd.db")
	s := open(t, path)
	ctx := t.Context()
	for _, name := range []string{"a", "b", "c"} {
		if err := s.PutWorkflow(ctx, testDef(name, "h"), ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("workflows"))
		if err := b.Put([]byte("b\x00v-h"), []byte("junk")); err != nil {
			return err
		}
		return b.Put([]byte("c\x00v-h"), encodeDef(t, testDef("a", "h")))
	})
	s = open(t, path)
	defer func() { _ = s.Close() }()

	defs, err := s.ListWorkflowDefs(ctx)
	if !errors.Is(err, persistence.ErrCorrupt) || !strings.Contains(err.Error(), `workflow "b"`) ||
		!strings.Contains(err.Error(), `workflow "c"`) || len(defs) != 1 || defs[0].Name != "a" {
		t.Fatalf("ListWorkflowDefs = %v, %v; want a, and an ErrCorrupt naming b and c", defs, err)
	}
	for _, name := range []string{"b", "c"} {
		for _, version := range []string{"v-h", ""} {
			if _, err := s.GetWorkflow(ctx, name, version); !errors.Is(err, persistence.ErrCorrupt) {
				t.Errorf("GetWorkflow(%s, %q) = %v, want ErrCorrupt", name, version, err)
			}
		}
		over := testDef(name, "h2")
		over.Version = "v-h"
		if err := s.PutWorkflow(ctx, over, "h"); !errors.Is(err, persistence.ErrCorrupt) {
			t.Errorf("conditional PutWorkflow(%s) = %v, want ErrCorrupt", name, err)
		}
		if err := s.PutWorkflow(ctx, over, persistence.Absent); !errors.Is(err, persistence.ErrExists) {
			t.Errorf("create-only PutWorkflow(%s) = %v, want ErrExists", name, err)
		}
	}
	repaired := testDef("b", "h2")
	repaired.Version = "v-h"
	if err := s.PutWorkflow(ctx, repaired, ""); err != nil {
		t.Fatalf("unconditional PutWorkflow over a corrupt definition: %v", err)
	}
	if err := s.DeleteWorkflow(ctx, "c", "v-h", ""); err != nil {
		t.Fatalf("unconditional DeleteWorkflow of a corrupt definition: %v", err)
	}
	if defs, err := s.ListWorkflowDefs(ctx); err != nil || len(defs) != 2 || defs[1].Hash != "h2" {
		t.Fatalf("ListWorkflowDefs after repair = %v, %v", defs, err)
	}
}

// FuzzDecodeWorkflowDef feeds arbitrary bytes to the definition decoder:
// it must never panic, must classify every failure as ErrCorrupt, and
// whatever it accepts must be a valid definition that survives a round
// trip unchanged.
func FuzzDecodeWorkflowDef(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("junk"))
	f.Add(encodeDef(f, testDef("approval-py", strings.Repeat("ab", 32))))
	f.Add(encodeDef(f, persistence.WorkflowDef{Name: "w", Hash: "h", Def: []byte{0}}))
	f.Add(append(encodeDef(f, testDef("w", "h")), 0x08, 2))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := codec.DecodeWorkflowDef(data)
		if err != nil {
			if !errors.Is(err, persistence.ErrCorrupt) {
				t.Fatalf("DecodeWorkflowDef error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		check := d
		if check.Version == "" {
			check.Version = "old" // a record from before versions
		}
		if err := check.Validate(); err != nil {
			t.Fatalf("DecodeWorkflowDef accepted an invalid definition: %v", err)
		}
		again, err := codec.DecodeWorkflowDef(encodeDef(t, d))
		if err != nil {
			t.Fatalf("re-decoding an accepted definition: %v", err)
		}
		if again.Name != d.Name || again.Version != d.Version || again.Current != d.Current || again.Hash != d.Hash || !bytes.Equal(again.Def, d.Def) || again.Source != d.Source ||
			!again.CreatedAt.Equal(d.CreatedAt) || !again.UpdatedAt.Equal(d.UpdatedAt) {
			t.Fatalf("round trip changed the definition:\n got %+v\nwant %+v", again, d)
		}
	})
}
