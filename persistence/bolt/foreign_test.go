package bolt_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
)

// writeBolt makes a bbolt file at path with bbolt itself (as another
// program would), running fn in one write transaction if given.
func writeBolt(t *testing.T, path string, fn func(tx *bbolt.Tx) error) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fn != nil {
		if err := db.Update(fn); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// buckets lists the top-level buckets of the bbolt file at path.
func buckets(t *testing.T, path string) []string {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var out []string
	_ = db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
			out = append(out, string(name))
			return nil
		})
	})
	return out
}

// TestOpenRefusesAnotherProgramsFile: a bbolt file that holds buckets but
// not wfd's mark (its meta bucket with the schema version, which every
// wfd writes in the transaction that creates its buckets) is another
// program's: Open refuses it with a ForeignFileError (ErrInvalid) naming
// the file and its buckets, and leaves it byte for byte as it was, where
// it used to add wfd's buckets to it. A bbolt file with no buckets yet
// is taken as a new store.
func TestOpenRefusesAnotherProgramsFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		fill func(tx *bbolt.Tx) error
		want []string // the buckets the error names
	}{
		{name: "foreign buckets", want: []string{"accounts", "sessions"}, fill: func(tx *bbolt.Tx) error {
			for _, name := range []string{"accounts", "sessions"} {
				b, err := tx.CreateBucket([]byte(name))
				if err != nil {
					return err
				}
				if err := b.Put([]byte("alice"), []byte("data of another program")); err != nil {
					return err
				}
			}
			return nil
		}},
		// A bucket named as one of wfd's is no mark: only the schema version is.
		{name: "a meta bucket without wfd's schema version", want: []string{"meta"}, fill: func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucket([]byte("meta"))
			if err != nil {
				return err
			}
			return b.Put([]byte("owner"), []byte("someone else"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wfd.db")
			writeBolt(t, path, tc.fill)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}

			s, err := bolt.Open(path, bolt.Options{})
			if err == nil {
				_ = s.Close()
				t.Fatalf("Open of another program's bbolt file succeeded; its buckets now: %v", buckets(t, path))
			}
			var foreign *bolt.ForeignFileError
			if !errors.As(err, &foreign) || !errors.Is(err, persistence.ErrInvalid) {
				t.Fatalf("Open: %v (%T), want a *bolt.ForeignFileError wrapping persistence.ErrInvalid", err, err)
			}
			if foreign.Path != path || strings.Join(foreign.Buckets, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("ForeignFileError{Path: %q, Buckets: %v}, want %q, %v", foreign.Path, foreign.Buckets, path, tc.want)
			}
			if msg := err.Error(); !strings.Contains(msg, "not a wfd store") || !strings.Contains(msg, tc.want[0]) {
				t.Fatalf("error %q does not say the file is not a wfd store, with its buckets", msg)
			}

			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Fatalf("Open changed the file (%d bytes before, %d after); buckets now: %v", len(before), len(after), buckets(t, path))
			}
			// Refused again, the same way: nothing was left half done.
			if _, err := bolt.Open(path, bolt.Options{}); !errors.As(err, &foreign) {
				t.Fatalf("second Open: %v, want a ForeignFileError", err)
			}
		})
	}

	t.Run("an empty bbolt file is a new store", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "wfd.db")
		writeBolt(t, path, nil)
		s := open(t, path)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if v := schemaVersion(t, path); len(v) != 4 {
			t.Fatalf("schema version %v after opening an empty bbolt file, want one written", v)
		}
		s = open(t, path) // and it opens again, as wfd's
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("wfd's own file, from an earlier wfd", func(t *testing.T) {
		path := copyTestdata(t, "schema2.db")
		s := open(t, path)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
