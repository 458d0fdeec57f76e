package bolt_test

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
)

// TestOpenSchema5 opens a file of layout version 5 (a current file without
// the indexes version 6 added: finished handlers by completion time and
// the published-event listing indexes). Open fills them from the metadata
// and the log, so retention and listing see what was stored before.
func TestOpenSchema5(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wfd.db")
	s := open(t, path)
	ids := testIDs()
	at := time.Date(2025, 6, 1, 13, 0, 0, 0, time.UTC)
	done := testHandler(ids[0])
	done.Status = persistence.StatusCompleted
	done.CompletedAt = at
	running := testHandler(ids[1])
	if err := s.Write(t.Context(), persistence.Change{Handler: done}, persistence.Change{Handler: running}); err != nil {
		t.Fatal(err)
	}
	var published []uint64
	for i, key := range []string{"a", "b", "a"} {
		p, err := s.Publish(t.Context(), persistence.Published{ID: ids[i] + "-event", Key: key, HandlerID: ids[i%2], At: at.Add(time.Duration(i) * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		published = append(published, p.Seq)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		for _, name := range []string{"idx_finished", "idx_published_time", "idx_published_by_key", "idx_published_handler"} {
			if err := tx.DeleteBucket([]byte(name)); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte{0, 0, 0, 5})
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
	got, err := s.FinishedBefore(t.Context(), at.Add(time.Hour), nil, 0)
	if err != nil || len(got) != 1 || got[0].HandlerID != ids[0] || !got[0].CompletedAt.Equal(at) {
		t.Fatalf("FinishedBefore after migration = %v, %v; want [%s]", got, err, ids[0])
	}
	for _, tt := range []struct {
		q    persistence.PublishedQuery
		want []uint64
	}{
		{persistence.PublishedQuery{}, []uint64{published[2], published[1], published[0]}},
		{persistence.PublishedQuery{Key: "a"}, []uint64{published[2], published[0]}},
		{persistence.PublishedQuery{HandlerID: ids[1]}, []uint64{published[1]}},
	} {
		ps, _, err := s.ListPublished(t.Context(), tt.q)
		var seqs []uint64
		for _, p := range ps {
			seqs = append(seqs, p.Seq)
		}
		if err != nil || !slices.Equal(seqs, tt.want) {
			t.Fatalf("ListPublished(%+v) after migration = %v, %v; want %v", tt.q, seqs, err, tt.want)
		}
	}
}

// TestDeleteCorruptFinished deletes a finished handler whose metadata
// cannot be decoded: its idx_finished entry, found by scanning, goes too,
// so the retention sweep does not find it again.
func TestDeleteCorruptFinished(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wfd.db")
	s := open(t, path)
	h := testHandler(testIDs()[0])
	h.Status = persistence.StatusCompleted
	h.CompletedAt = h.CreatedAt.Add(time.Minute)
	if err := s.Write(t.Context(), persistence.Change{Handler: h}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("handlers")).Put([]byte(h.ID), []byte("junk"))
	})
	s = open(t, path)
	defer func() { _ = s.Close() }()
	later := h.CompletedAt.Add(time.Hour)
	if got, err := s.FinishedBefore(t.Context(), later, nil, 0); err != nil || len(got) != 1 {
		t.Fatalf("FinishedBefore before deleting = %v, %v; want the handler", got, err)
	}
	if err := s.Write(t.Context(), persistence.Change{Handler: persistence.Handler{ID: h.ID}, Delete: true}); err != nil {
		t.Fatalf("Delete of a corrupt handler: %v", err)
	}
	if got, err := s.FinishedBefore(t.Context(), later, nil, 0); err != nil || len(got) != 0 {
		t.Fatalf("FinishedBefore after deleting = %v, %v; want none", got, err)
	}
}
