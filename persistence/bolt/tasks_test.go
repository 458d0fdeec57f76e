package bolt_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

func testTask(h persistence.Handler, waiter, assignee string, created time.Time) persistence.Task {
	return persistence.Task{
		ID: h.ID + ":" + waiter, HandlerID: h.ID, Workflow: h.Workflow, Step: "ask", Title: "t",
		Schema: []byte(`{}`), Assignee: assignee, Status: persistence.TaskPending, CreatedAt: created,
	}
}

func taskIDs(ts []persistence.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func rawUpdate(t *testing.T, path string, fn func(tx *bbolt.Tx) error) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// TestReopenTasksAndPublished checks that tasks, their indexes and counts,
// and the published-event log (with its sequence) survive a reopen.
func TestReopenTasksAndPublished(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wfd.db")
	s := open(t, path)
	created := time.Date(2025, 6, 1, 12, 0, 0, 5, time.UTC)
	var changes []persistence.Change
	for i, id := range testIDs() {
		h := testHandler(id)
		done := testTask(h, "b", "bob", created.Add(time.Minute))
		done.Status, done.Answer, done.CompletedAt = persistence.TaskCompleted, []byte(`1`), created
		changes = append(changes, persistence.Change{Handler: h, Tasks: []persistence.Task{
			testTask(h, "a", "alice", created.Add(time.Duration(i)*time.Second)), done,
		}})
	}
	if err := s.Write(t.Context(), changes...); err != nil {
		t.Fatal(err)
	}
	var events []persistence.Published
	for i := range 3 {
		p, err := s.Publish(t.Context(), persistence.Published{ID: fmt.Sprint("e", i), Key: "k", HandlerID: testIDs()[i], At: created, Data: []byte{byte(i)}})
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, p)
	}
	before, err := s.Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, path)
	defer func() { _ = s.Close() }()
	ids := testIDs()
	pending, _, err := s.ListTasks(t.Context(), persistence.TaskQuery{Statuses: []persistence.TaskStatus{persistence.TaskPending}, Assignee: "alice"})
	if want := []string{ids[2] + ":a", ids[1] + ":a", ids[0] + ":a"}; err != nil || !slices.Equal(taskIDs(pending), want) {
		t.Fatalf("alice's pending tasks after reopen = %v, %v; want %v", taskIDs(pending), err, want)
	}
	task, err := s.GetTask(t.Context(), ids[1]+":b")
	if err != nil || task.Status != persistence.TaskCompleted || string(task.Answer) != "1" || !task.CreatedAt.Equal(created.Add(time.Minute)) {
		t.Fatalf("GetTask after reopen = %+v, %v", task, err)
	}
	after, err := s.Count(t.Context())
	if err != nil || after.Tasks != 6 || after.Tasks != before.Tasks ||
		after.TasksByStatus[persistence.TaskPending] != 3 || after.TasksByStatus[persistence.TaskCompleted] != 3 {
		t.Fatalf("Count after reopen = %+v, %v; before %+v", after, err, before)
	}
	p, ok, err := s.FindPublished(t.Context(), "k", ids[1], created)
	if err != nil || !ok || p.Seq != events[1].Seq {
		t.Fatalf("FindPublished after reopen = %+v, %v, %v; want %+v", p, ok, err, events[1])
	}
	// The sequence continues; published ids are still known.
	p, err = s.Publish(t.Context(), persistence.Published{ID: "e3", Key: "k", At: created})
	if err != nil || p.Seq <= events[2].Seq {
		t.Fatalf("Publish after reopen: Seq %d, %v; want after %d", p.Seq, err, events[2].Seq)
	}
	p, err = s.Publish(t.Context(), persistence.Published{ID: "e0", Key: "other", At: created})
	if err != nil || p.Seq != events[0].Seq || p.Key != "k" {
		t.Fatalf("republishing after reopen = %+v, %v; want %+v", p, err, events[0])
	}
	log, err := s.PublishedAfter(t.Context(), 0, 0)
	if err != nil || len(log) != 4 {
		t.Fatalf("PublishedAfter after reopen = %d entries, %v", len(log), err)
	}
}

// TestCorruptTask damages one task's stored value: that task reports
// ErrCorrupt, the others keep working, and an upsert of the damaged task or
// a delete of its handler repairs its index entries and counters.
func TestCorruptTask(t *testing.T) {
	created := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	h := testHandler(testIDs()[0])
	tasks := []persistence.Task{
		testTask(h, "a", "alice", created),
		testTask(h, "b", "alice", created.Add(time.Second)),
		testTask(h, "c", "alice", created.Add(2*time.Second)),
	}
	bad := tasks[1]
	encodeTask := func(task persistence.Task) []byte {
		b, err := codec.EncodeTask(&task)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	values := map[string][]byte{
		"garbage":         []byte("\xff\xfe not protobuf"),
		"empty":           {},
		"unknown version": append(encodeTask(bad), 0x08, 99), // a later field 1 wins
		"other task":      encodeTask(tasks[0]),
		"invalid status":  encodeTask(func() persistence.Task { x := bad; x.Status = 42; return x }()),
		"no handler":      encodeTask(func() persistence.Task { x := bad; x.HandlerID = ""; return x }()),
	}
	for name, value := range values {
		for _, repair := range []string{"upsert", "delete handler"} {
			t.Run(name+"/"+repair, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "wfd.db")
				s := open(t, path)
				if err := s.Write(t.Context(), persistence.Change{Handler: h, Tasks: tasks}); err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				rawUpdate(t, path, func(tx *bbolt.Tx) error {
					return tx.Bucket([]byte("tasks")).Put([]byte(bad.ID), value)
				})

				s = open(t, path)
				defer func() { _ = s.Close() }()
				_, err := s.GetTask(t.Context(), bad.ID)
				if !errors.Is(err, persistence.ErrCorrupt) {
					t.Fatalf("GetTask(corrupt) = %v, want ErrCorrupt", err)
				}
				for _, task := range []persistence.Task{tasks[0], tasks[2]} {
					if _, err := s.GetTask(t.Context(), task.ID); err != nil {
						t.Fatalf("GetTask(%s) next to a corrupt task: %v", task.ID, err)
					}
				}
				for _, q := range []persistence.TaskQuery{{}, {Assignee: "alice", Statuses: []persistence.TaskStatus{persistence.TaskPending}}} {
					ts, _, err := s.ListTasks(t.Context(), q)
					if !errors.Is(err, persistence.ErrCorrupt) || !slices.Equal(taskIDs(ts), []string{tasks[2].ID, tasks[0].ID}) {
						t.Fatalf("ListTasks(%+v) = %v, %v; want the two healthy tasks and ErrCorrupt", q, taskIDs(ts), err)
					}
				}

				switch repair {
				case "upsert":
					fixed := bad
					fixed.Status, fixed.Assignee, fixed.CreatedAt = persistence.TaskCompleted, "bob", created.Add(time.Hour)
					if err := s.Write(t.Context(), persistence.Change{Handler: h, Tasks: []persistence.Task{fixed}}); err != nil {
						t.Fatalf("overwriting a corrupt task: %v", err)
					}
					for _, tt := range []struct {
						q    persistence.TaskQuery
						want []string
					}{
						{persistence.TaskQuery{}, []string{fixed.ID, tasks[2].ID, tasks[0].ID}},
						{persistence.TaskQuery{Assignee: "alice"}, []string{tasks[2].ID, tasks[0].ID}},
						{persistence.TaskQuery{Statuses: []persistence.TaskStatus{persistence.TaskPending}}, []string{tasks[2].ID, tasks[0].ID}},
						{persistence.TaskQuery{HandlerID: h.ID, Statuses: []persistence.TaskStatus{persistence.TaskCompleted}}, []string{fixed.ID}},
					} {
						ts, _, err := s.ListTasks(t.Context(), tt.q)
						if err != nil || !slices.Equal(taskIDs(ts), tt.want) {
							t.Fatalf("ListTasks(%+v) after repair = %v, %v; want %v", tt.q, taskIDs(ts), err, tt.want)
						}
					}
					c, err := s.Count(t.Context())
					if err != nil || c.Tasks != 3 || c.TasksByStatus[persistence.TaskPending] != 2 || c.TasksByStatus[persistence.TaskCompleted] != 1 {
						t.Fatalf("Count after repair = %+v, %v", c, err)
					}
				case "delete handler":
					if err := s.Write(t.Context(), persistence.Change{Handler: persistence.Handler{ID: h.ID}, Delete: true}); err != nil {
						t.Fatalf("deleting the handler of a corrupt task: %v", err)
					}
					for _, task := range tasks {
						if _, err := s.GetTask(t.Context(), task.ID); !errors.Is(err, persistence.ErrNotFound) {
							t.Fatalf("GetTask(%s) after deleting its handler = %v, want ErrNotFound", task.ID, err)
						}
					}
					ts, _, err := s.ListTasks(t.Context(), persistence.TaskQuery{})
					if err != nil || len(ts) != 0 {
						t.Fatalf("ListTasks after deleting the handler = %v, %v", taskIDs(ts), err)
					}
					c, err := s.Count(t.Context())
					if err != nil || c.Tasks != 0 || c.TasksByStatus[persistence.TaskPending] != 0 {
						t.Fatalf("Count after deleting the handler = %+v, %v", c, err)
					}
				}
			})
		}
	}
}

// TestCorruptPublished damages one entry of the log: finding or listing it
// reports ErrCorrupt, the other entries stay readable, and publishing goes
// on.
func TestCorruptPublished(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wfd.db")
	s := open(t, path)
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	var events []persistence.Published
	for i, key := range []string{"a", "b", "c"} {
		p, err := s.Publish(t.Context(), persistence.Published{ID: fmt.Sprint("e", i), Key: key, At: at})
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, p)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("published")).Put(binary.BigEndian.AppendUint64(nil, events[1].Seq), []byte("junk"))
	})

	s = open(t, path)
	defer func() { _ = s.Close() }()
	if _, _, err := s.FindPublished(t.Context(), "b", "", at); !errors.Is(err, persistence.ErrCorrupt) {
		t.Fatalf("FindPublished(corrupt) = %v, want ErrCorrupt", err)
	}
	if p, ok, err := s.FindPublished(t.Context(), "c", "", at); err != nil || !ok || p.ID != "e2" {
		t.Fatalf("FindPublished next to a corrupt entry = %+v, %v, %v", p, ok, err)
	}
	log, err := s.PublishedAfter(t.Context(), 0, 0)
	if !errors.Is(err, persistence.ErrCorrupt) || len(log) != 2 || log[0].ID != "e0" || log[1].ID != "e2" {
		t.Fatalf("PublishedAfter = %v, %v; want e0, e2 and ErrCorrupt", log, err)
	}
	if _, err := s.Publish(t.Context(), persistence.Published{ID: "e1", Key: "b", At: at}); !errors.Is(err, persistence.ErrCorrupt) {
		t.Fatalf("republishing the corrupt entry's id = %v, want ErrCorrupt", err)
	}
	if p, err := s.Publish(t.Context(), persistence.Published{ID: "e3", Key: "b", At: at}); err != nil || p.Seq <= events[2].Seq {
		t.Fatalf("Publish after a corrupt entry = %+v, %v", p, err)
	}
}

func encodeTestTask(t testing.TB, task persistence.Task) []byte {
	t.Helper()
	b, err := codec.EncodeTask(&task)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzDecodeTask feeds arbitrary bytes to the task decoder: it must never
// panic, must classify every failure as ErrCorrupt, and whatever it accepts
// must be a valid task that survives a round trip unchanged.
func FuzzDecodeTask(f *testing.F) {
	h := testHandler(testIDs()[0])
	full := testTask(h, "w/1.a-b", "alice", time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC))
	full.Description, full.Deadline, full.CompletedAt, full.CompletedBy, full.Answer, full.Status =
		"d", full.CreatedAt.Add(time.Hour), full.CreatedAt.Add(time.Minute), "bob", []byte(`true`), persistence.TaskCompleted
	f.Add([]byte{})
	f.Add([]byte("junk"))
	f.Add(encodeTestTask(f, full))
	f.Add(encodeTestTask(f, persistence.Task{ID: "x", HandlerID: "h", Workflow: "w", Status: persistence.TaskExpired}))
	f.Add(append(encodeTestTask(f, full), 0x08, 2))
	f.Fuzz(func(t *testing.T, data []byte) {
		task, err := codec.DecodeTask(data)
		if err != nil {
			if !errors.Is(err, persistence.ErrCorrupt) {
				t.Fatalf("DecodeTask error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if err := task.Validate(); err != nil {
			t.Fatalf("DecodeTask accepted an invalid task: %v", err)
		}
		again, err := codec.DecodeTask(encodeTestTask(t, task))
		if err != nil {
			t.Fatalf("re-decoding an accepted task: %v", err)
		}
		if d := diffTask(again, task); d != "" {
			t.Fatalf("round trip changed the task: %s", d)
		}
	})
}

func diffTask(a, b persistence.Task) string {
	switch {
	case a.ID != b.ID || a.HandlerID != b.HandlerID || a.Workflow != b.Workflow || a.Step != b.Step ||
		a.Title != b.Title || a.Description != b.Description || a.Assignee != b.Assignee ||
		a.Status != b.Status || a.CompletedBy != b.CompletedBy:
		return "scalar fields differ"
	case !a.CreatedAt.Equal(b.CreatedAt) || !a.Deadline.Equal(b.Deadline) || !a.CompletedAt.Equal(b.CompletedAt):
		return "times differ"
	case !bytes.Equal(a.Schema, b.Schema) || !bytes.Equal(a.Answer, b.Answer):
		return "bytes differ"
	}
	return ""
}

// FuzzDecodePublished does the same for published-event log entries.
func FuzzDecodePublished(f *testing.F) {
	enc := func(t testing.TB, p persistence.Published) []byte {
		b, err := codec.EncodePublished(&p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	f.Add([]byte{})
	f.Add(enc(f, persistence.Published{Seq: 7, ID: "e", Key: "k", HandlerID: "h", Data: []byte("d"), At: time.Unix(1, 2)}))
	f.Add(enc(f, persistence.Published{Seq: 1, ID: "e", Key: "k", At: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)}))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := codec.DecodePublished(data)
		if err != nil {
			if !errors.Is(err, persistence.ErrCorrupt) {
				t.Fatalf("DecodePublished error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if err := p.Validate(); err != nil || p.Seq == 0 {
			t.Fatalf("DecodePublished accepted an invalid entry: %+v, %v", p, err)
		}
		again, err := codec.DecodePublished(enc(t, p))
		if err != nil {
			t.Fatalf("re-decoding an accepted entry: %v", err)
		}
		if again.Seq != p.Seq || again.ID != p.ID || again.Key != p.Key || again.HandlerID != p.HandlerID ||
			!bytes.Equal(again.Data, p.Data) || !again.At.Equal(p.At) {
			t.Fatal("round trip changed the entry")
		}
	})
}
