package codec_test

import (
	"errors"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

func TestRoundTrip(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("X", -7200))
	tests := []struct {
		name string
		h    persistence.Handler
	}{
		{"minimal", persistence.Handler{ID: "h", Workflow: "w", Status: persistence.StatusRunning, Residency: persistence.ResidencyActive}},
		{"full", persistence.Handler{
			ID: "h", Workflow: "w", Status: persistence.StatusFailed, Residency: persistence.ResidencyReleased,
			Owner: "r1", CreatedAt: at, UpdatedAt: at.Add(time.Second), CompletedAt: at.Add(time.Minute), IdleSince: at,
			Waiters: []persistence.Waiter{
				{ID: "w1", Step: "s", EventType: "e", Match: []byte("m"), Deadline: at.Add(time.Hour), Key: "k"},
				{ID: "w2"},
			},
			Error: "boom", Result: []byte("{}"), Parent: "p", LastSeq: 42,
		}},
		{"year 1 but not zero", persistence.Handler{
			ID: "h", Workflow: "w", Status: persistence.StatusRunning, Residency: persistence.ResidencyActive,
			CreatedAt: time.Time{}.Add(time.Nanosecond),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := codec.EncodeHandler(&tt.h)
			if err != nil {
				t.Fatal(err)
			}
			got, err := codec.DecodeHandler(b)
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != tt.h.ID || got.Status != tt.h.Status || got.LastSeq != tt.h.LastSeq ||
				!got.CreatedAt.Equal(tt.h.CreatedAt) || got.IdleSince.IsZero() != tt.h.IdleSince.IsZero() ||
				!got.CompletedAt.Equal(tt.h.CompletedAt) || len(got.Waiters) != len(tt.h.Waiters) {
				t.Fatalf("round trip: got %+v, want %+v", got, tt.h)
			}
			for i, w := range got.Waiters {
				if want := tt.h.Waiters[i]; w.ID != want.ID || !w.Deadline.Equal(want.Deadline) || w.Key != want.Key {
					t.Fatalf("waiter %d: got %+v, want %+v", i, w, want)
				}
			}
		})
	}
}

func TestDecodeRefusesInvalid(t *testing.T) {
	// Metadata that Write would refuse (here: no workflow) is corrupt when
	// read, because index keys are derived from it.
	b, err := codec.EncodeHandler(&persistence.Handler{ID: "h", Status: persistence.StatusRunning, Residency: persistence.ResidencyActive})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := codec.DecodeHandler(b); !errors.Is(err, persistence.ErrCorrupt) {
		t.Fatalf("DecodeHandler = %v, want ErrCorrupt", err)
	}
}

func TestTaskRoundTrip(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("X", -7200))
	for _, task := range []persistence.Task{
		{ID: "h:w", HandlerID: "h", Workflow: "w", Status: persistence.TaskPending},
		{
			ID: "h:w/1.a-b", HandlerID: "h", Workflow: "w", Step: "ask", Title: "t", Description: "d",
			Schema: []byte(`{"type":"string"}`), Assignee: "alice", Status: persistence.TaskCompleted,
			CreatedAt: at, Deadline: at.Add(time.Hour), CompletedAt: at.Add(time.Minute), CompletedBy: "bob", Answer: []byte(`"yes"`),
		},
	} {
		b, err := codec.EncodeTask(&task)
		if err != nil {
			t.Fatal(err)
		}
		got, err := codec.DecodeTask(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != task.ID || got.HandlerID != task.HandlerID || got.Workflow != task.Workflow || got.Step != task.Step ||
			got.Title != task.Title || got.Description != task.Description || string(got.Schema) != string(task.Schema) ||
			got.Assignee != task.Assignee || got.Status != task.Status || !got.CreatedAt.Equal(task.CreatedAt) ||
			!got.Deadline.Equal(task.Deadline) || got.Deadline.IsZero() != task.Deadline.IsZero() ||
			!got.CompletedAt.Equal(task.CompletedAt) || got.CompletedBy != task.CompletedBy || string(got.Answer) != string(task.Answer) {
			t.Fatalf("round trip: got %+v, want %+v", got, task)
		}
	}
	// A task Write would refuse (no handler) is corrupt when read.
	b, err := codec.EncodeTask(&persistence.Task{ID: "x", Workflow: "w", Status: persistence.TaskPending})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := codec.DecodeTask(b); !errors.Is(err, persistence.ErrCorrupt) {
		t.Fatalf("DecodeTask = %v, want ErrCorrupt", err)
	}
}

func TestPublishedRoundTrip(t *testing.T) {
	p := persistence.Published{Seq: 42, ID: "e", Key: "k", HandlerID: "h", Data: []byte("d"), At: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)}
	b, err := codec.EncodePublished(&p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := codec.DecodePublished(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seq != p.Seq || got.ID != p.ID || got.Key != p.Key || got.HandlerID != p.HandlerID || string(got.Data) != "d" || !got.At.Equal(p.At) {
		t.Fatalf("round trip: got %+v, want %+v", got, p)
	}
	for _, bad := range []persistence.Published{
		{ID: "e", Key: "k", At: p.At}, // no seq
		{Seq: 1, ID: "e", At: p.At},   // no key
		{Seq: 1, ID: "e", Key: "k"},   // no time
	} {
		b, err := codec.EncodePublished(&bad)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := codec.DecodePublished(b); !errors.Is(err, persistence.ErrCorrupt) {
			t.Fatalf("DecodePublished(%+v) = %v, want ErrCorrupt", bad, err)
		}
	}
}
