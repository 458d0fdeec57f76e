package bolt_test

import (
	"path/filepath"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/persistence/storetest"
)

// TestCorruptSchedule: a schedule value that cannot be decoded fails
// only that schedule, and a delete removes it with its due entry.
func TestCorruptSchedule(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wfd.db")
	s := open(t, path)
	storetest.CorruptSchedule(t, s, func(id string) persistence.Store {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		rawUpdate(t, path, func(tx *bbolt.Tx) error {
			return tx.Bucket([]byte("schedules")).Put([]byte(id), []byte(`{"v":1,"id":`))
		})
		reopened := open(t, path)
		t.Cleanup(func() { _ = reopened.Close() })
		return reopened
	})
}

// TestOpenWithoutScheduleBuckets: a file an older wfd wrote (schema 7,
// without the schedule buckets) is sound to Check, and Open adds the
// buckets without a new schema version.
func TestOpenWithoutScheduleBuckets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wfd.db")
	if err := open(t, path).Close(); err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		for _, name := range []string{"schedules", "idx_schedule_due"} {
			if err := tx.DeleteBucket([]byte(name)); err != nil {
				return err
			}
		}
		return nil
	})
	if r, err := bolt.Check(t.Context(), path); err != nil || !r.OK() {
		t.Fatalf("Check of a file without the schedule buckets = %+v, %v", r, err)
	}
	s := open(t, path)
	if _, _, err := s.ListSchedules(t.Context(), 0, ""); err != nil {
		t.Fatalf("ListSchedules after Open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if v := schemaVersion(t, path); len(v) != 4 || v[3] != 9 {
		t.Fatalf("schema version = %v, want 8", v)
	}
}
