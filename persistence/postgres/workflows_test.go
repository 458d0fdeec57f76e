package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// TestWorkflowVersionsMigration: 00006 and back. Going down keeps one
// definition per name (the current one), as schema 5 requires; a row
// written then, without a version and with a def that has none, comes
// back up as the current version of its name, named after its hash.
func TestWorkflowVersionsMigration(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	s := openShared(t, url, postgres.Options{})
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	def := func(name, version, hash string, current bool) persistence.WorkflowDef {
		return persistence.WorkflowDef{Name: name, Version: version, Current: current, Hash: hash,
			Def: []byte(name + hash), CreatedAt: at, UpdatedAt: at}
	}
	for _, d := range []persistence.WorkflowDef{def("kept", "a", "ha", false), def("kept", "b", "hb", true)} {
		if err := s.PutWorkflow(ctx, d, ""); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Close()
	if err := postgres.MigrateDownTo(ctx, url, 5); err != nil {
		t.Fatalf("migrating down to schema 5: %v", err)
	}
	old := def("old", "", "0123456789abcdef0123", false)
	raw, err := codec.EncodeWorkflowDef(&old)
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, `INSERT INTO wfd_workflows (name, hash, def) VALUES ($1, $2, $3)`, old.Name, old.Hash, raw); err != nil {
		t.Fatalf("inserting a schema 5 row: %v", err)
	}
	var names []string
	rows, err := conn.Query(ctx, `SELECT name || '/' || hash FROM wfd_workflows ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if want := []string{"kept/hb", "old/" + old.Hash}; rows.Err() != nil || !slices.Equal(names, want) {
		t.Fatalf("definitions at schema 5 = %v, %v; want %v", names, rows.Err(), want)
	}

	s = openShared(t, url, postgres.Options{})
	defer func() { _ = s.Close() }()
	got, err := s.GetWorkflow(ctx, "old", "")
	if err != nil || got.Version != "0123456789abcdef" || !got.Current || got.Hash != old.Hash {
		t.Fatalf("current version of a schema 5 definition = %+v, %v; want version 0123456789abcdef", got, err)
	}
	// The version kept going down is named after its hash coming up.
	if got, err := s.GetWorkflow(ctx, "kept", "hb"); err != nil || !got.Current || got.Version != "hb" {
		t.Fatalf("GetWorkflow(kept, hb) after the round trip = %+v, %v", got, err)
	}
	// A new current version takes the mark from the migrated one.
	if err := s.PutWorkflow(ctx, def("old", "v2", "h2", true), persistence.Absent); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetWorkflow(ctx, "old", ""); err != nil || got.Version != "v2" {
		t.Fatalf("current version after a new one = %+v, %v; want v2", got, err)
	}
}
