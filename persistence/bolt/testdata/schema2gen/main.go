// Command schema2gen writes the store files in persistence/bolt/testdata
// that the migration tests open: stores in the layout of schema version 2,
// written by the bolt package of wfd at commit 7a043f9 (the last one with
// that layout). It is kept for the record; run at a later commit it would
// write the current layout instead. See ../README.md.
//
//	go run ./persistence/bolt/testdata/schema2gen persistence/bolt/testdata
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
)

// fixture is the handlers both files hold; created is seconds after base.
// Ids deliberately do not sort by creation time, and two handlers share a
// creation time.
var fixture = []struct {
	id, workflow string
	status       persistence.Status
	residency    persistence.Residency
	created      int
	idle         time.Duration // after base; 0: not idle
}{
	{"zzz-first", "alpha", persistence.StatusRunning, persistence.ResidencyReleased, 0, time.Minute},
	{"0195a1b2-0000-7000-8000-000000000001", "beta", persistence.StatusCompleted, persistence.ResidencyActive, 1, 0},
	{"mmm-third", "alpha", persistence.StatusRunning, persistence.ResidencyActive, 2, 10 * time.Minute},
	{"aaa-fourth", "beta", persistence.StatusFailed, persistence.ResidencyReleased, 3, 0},
	{"ccc-tie", "alpha", persistence.StatusRunning, persistence.ResidencyActive, 4, 0},
	{"bbb-tie", "alpha", persistence.StatusCancelled, persistence.ResidencyActive, 4, 0},
	{"aaa-last", "alpha", persistence.StatusRunning, persistence.ResidencyReleased, 5, 20 * time.Minute},
}

var base = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: schema2gen DIR")
	}
	dir := os.Args[1]
	if err := write(filepath.Join(dir, "schema2.db"), false); err != nil {
		log.Fatal(err)
	}
	if err := write(filepath.Join(dir, "schema2-corrupt.db"), true); err != nil {
		log.Fatal(err)
	}
}

func write(path string, corrupt bool) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	ctx := context.Background()
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		return err
	}
	// Created one by one, as a server does, then updated with a record each.
	for _, f := range fixture {
		h := handler(f.id, f.workflow, f.created)
		if err := s.Write(ctx, persistence.Change{Handler: h, Create: true, Snapshot: []byte("snap " + f.id),
			Records: []persistence.Record{{Seq: 1, Data: []byte("created " + f.id)}}}); err != nil {
			return err
		}
	}
	for _, f := range fixture {
		h := handler(f.id, f.workflow, f.created)
		h.Status, h.Residency = f.status, f.residency
		if f.residency == persistence.ResidencyReleased {
			h.Owner = ""
		}
		if f.status.Terminal() {
			h.CompletedAt = base.Add(time.Hour)
		}
		var tasks []persistence.Task
		if f.idle > 0 {
			h.IdleSince = base.Add(f.idle)
			h.Waiters = []persistence.Waiter{{ID: "w", Step: "wait", EventType: "answer",
				Key: "answer/" + f.id, Deadline: base.Add(48 * time.Hour)}}
			tasks = []persistence.Task{{ID: f.id + ":w", HandlerID: f.id, Workflow: f.workflow, Step: "wait",
				Title: "answer " + f.id, Status: persistence.TaskPending, CreatedAt: h.IdleSince}}
		}
		if err := s.Write(ctx, persistence.Change{Handler: h, Tasks: tasks,
			Records: []persistence.Record{{Seq: 2, Data: []byte("updated " + f.id)}}}); err != nil {
			return err
		}
	}
	if corrupt {
		h := handler("kkk-corrupt", "alpha", 6)
		if err := s.Write(ctx, persistence.Change{Handler: h, Create: true}); err != nil {
			return err
		}
	}
	if err := s.Close(); err != nil {
		return err
	}
	if !corrupt {
		return nil
	}
	// Damage the last handler's metadata, leaving its index entries.
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("handlers")).Put([]byte("kkk-corrupt"), []byte("\xff\xff not protobuf"))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("damage %s: %w", path, err)
	}
	return nil
}

func handler(id, workflow string, created int) persistence.Handler {
	t := base.Add(time.Duration(created) * time.Second)
	return persistence.Handler{ID: id, Workflow: workflow, Status: persistence.StatusRunning,
		Residency: persistence.ResidencyActive, Owner: "replica-a", CreatedAt: t, UpdatedAt: t}
}
