package postgres_test

import (
	"errors"
	"testing"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
	"github.com/wfd-dev/wfd/persistence/storetest"
)

// TestConformanceInSchema runs the backend-neutral suite on a store in a
// schema of its own (a namespace's), in a database whose default schema
// already holds another store's handlers of the same ids.
func TestConformanceInSchema(t *testing.T) {
	storetest.Run(t, func(t *testing.T) persistence.Store {
		url := pgtest.NewDatabase(t)
		other, err := postgres.Open(t.Context(), url, postgres.Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		for _, id := range []string{"h1", "h2", "a", "b"} {
			if err := other.Write(t.Context(), persistence.Change{Handler: testHandler(id), Snapshot: []byte("x")}); err != nil {
				t.Fatalf("Write: %v", err)
			}
		}
		t.Cleanup(func() { _ = other.Close() })
		s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: "wfd_ns_acme"})
		if err != nil {
			t.Fatalf("Open in a schema: %v", err)
		}
		return s
	})
}

// TestSchemasAreSeparate: stores in two schemas of one database each hold
// their own handlers and their own exclusive lock, and a schema's store
// reopens on what it wrote.
func TestSchemasAreSeparate(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	open := func(schema string) *postgres.Store {
		t.Helper()
		s, err := postgres.Open(ctx, url, postgres.Options{Schema: schema, LockWait: -1})
		if err != nil {
			t.Fatalf("Open schema %q: %v", schema, err)
		}
		return s
	}
	def, a, b := open(""), open("ns_a"), open("ns_b")
	for s, wf := range map[*postgres.Store]string{def: "in-default", a: "in-a"} {
		h := testHandler("same-id")
		h.Workflow = wf
		if err := s.Write(ctx, persistence.Change{Handler: h, Snapshot: []byte(wf)}); err != nil {
			t.Fatal(err)
		}
	}
	for s, wf := range map[*postgres.Store]string{def: "in-default", a: "in-a"} {
		got, err := s.GetHandler(ctx, "same-id")
		if err != nil || got.Workflow != wf {
			t.Fatalf("Get same-id = %v, %v; want workflow %s", got.Workflow, err, wf)
		}
	}
	if _, err := b.GetHandler(ctx, "same-id"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("Get in ns_b = %v, want ErrNotFound", err)
	}
	// One exclusive store per schema.
	var inUse *postgres.InUseError
	if _, err := postgres.Open(ctx, url, postgres.Options{Schema: "ns_a", LockWait: -1}); !errors.As(err, &inUse) {
		t.Fatalf("second Open of ns_a = %v, want InUseError", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a = open("ns_a")
	for _, s := range []*postgres.Store{a, def, b} {
		t.Cleanup(func() { _ = s.Close() })
	}
	if got, err := a.GetHandler(ctx, "same-id"); err != nil || got.Workflow != "in-a" {
		t.Fatalf("after reopening ns_a: %v, %v", got.Workflow, err)
	}
	for _, bad := range []string{"Acme", "1a", "a-b", "a;drop", ""} {
		if bad == "" {
			continue // "" is the default schema
		}
		if _, err := postgres.Open(ctx, url, postgres.Options{Schema: bad}); !errors.Is(err, persistence.ErrInvalid) {
			t.Errorf("Open with schema %q = %v, want ErrInvalid", bad, err)
		}
	}
}
