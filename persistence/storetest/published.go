package storetest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/wfd-dev/wfd/persistence"
)

func newEventID(t *testing.T) string {
	t.Helper()
	u, err := uuid.NewV7()
	if err != nil {
		t.Fatalf("uuid: %v", err)
	}
	return u.String()
}

func publish(t *testing.T, s persistence.Store, p persistence.Published) persistence.Published {
	t.Helper()
	got, err := s.Publish(t.Context(), p)
	if err != nil {
		t.Fatalf("Publish(%s): %v", p.ID, err)
	}
	return got
}

// diffPublished describes the first difference between two entries, or
// returns "". Times compare as instants.
func diffPublished(got, want persistence.Published) string {
	switch {
	case got.Seq != want.Seq:
		return fmt.Sprintf("Seq = %d, want %d", got.Seq, want.Seq)
	case got.ID != want.ID || got.Key != want.Key || got.HandlerID != want.HandlerID:
		return fmt.Sprintf("ID, Key, HandlerID = %q, %q, %q; want %q, %q, %q", got.ID, got.Key, got.HandlerID, want.ID, want.Key, want.HandlerID)
	case !bytes.Equal(got.Data, want.Data):
		return fmt.Sprintf("Data = %q, want %q", got.Data, want.Data)
	case !got.At.Equal(want.At):
		return fmt.Sprintf("At = %v, want %v", got.At, want.At)
	case got.At.Location() != time.UTC:
		return fmt.Sprintf("At location = %v, want UTC", got.At.Location())
	case got.PublishedBy != want.PublishedBy:
		return fmt.Sprintf("PublishedBy = %q, want %q", got.PublishedBy, want.PublishedBy)
	}
	return ""
}

func checkPublished(t *testing.T, what string, got, want persistence.Published) {
	t.Helper()
	if d := diffPublished(got, want); d != "" {
		t.Fatalf("%s: %s", what, d)
	}
}

func testPublish(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	now := baseTime()
	handler := newIDs(t, 1)[0]
	data := []byte(`{"n":1}`)
	first := persistence.Published{ID: newEventID(t), Key: "answer/q1", HandlerID: handler, Data: data, At: now, Seq: 99}
	got := publish(t, s, first)
	if got.Seq == 0 {
		t.Fatal("Publish returned no Seq")
	}
	first.Seq = got.Seq // the caller's Seq is ignored
	checkPublished(t, "Publish", got, first)

	// The store keeps its own copy of Data, and returns copies.
	data[0] = 'X'
	got.Data[1] = 'Y'
	first.Data = []byte(`{"n":1}`)
	log, err := s.PublishedAfter(t.Context(), 0, 0)
	if err != nil || len(log) != 1 {
		t.Fatalf("PublishedAfter(0) = %d entries, %v; want 1", len(log), err)
	}
	checkPublished(t, "logged entry", log[0], first)

	// Seqs increase; an entry may have no data.
	second := publish(t, s, persistence.Published{ID: newEventID(t), Key: "k", At: now.Add(-time.Hour)})
	if second.Seq <= first.Seq {
		t.Fatalf("second Seq %d is not after the first's %d", second.Seq, first.Seq)
	}

	// Publishing an id again returns the first entry, whatever the rest
	// says, and logs nothing.
	again := publish(t, s, persistence.Published{ID: first.ID, Key: "other", Data: []byte("other"), At: now.Add(time.Hour)})
	checkPublished(t, "Publish of a published id", again, first)
	if _, ok, err := s.FindPublished(t.Context(), "other", "", now); err != nil || ok {
		t.Fatalf("FindPublished of a repeated publish's key = %v, %v; want none", ok, err)
	}
	log, err = s.PublishedAfter(t.Context(), 0, 0)
	if err != nil || len(log) != 2 {
		t.Fatalf("PublishedAfter(0) = %d entries, %v; want 2", len(log), err)
	}

	// Invalid entries are refused and logged nowhere.
	valid := func(edit func(p *persistence.Published)) persistence.Published {
		p := persistence.Published{ID: newEventID(t), Key: "k", HandlerID: handler, At: now}
		edit(&p)
		return p
	}
	for _, tt := range []struct {
		name string
		p    persistence.Published
	}{
		{"empty id", valid(func(p *persistence.Published) { p.ID = "" })},
		{"long id", valid(func(p *persistence.Published) { p.ID = strings.Repeat("x", persistence.MaxIDLen+1) })},
		{"NUL in id", valid(func(p *persistence.Published) { p.ID = "a\x00" })},
		{"empty key", valid(func(p *persistence.Published) { p.Key = "" })},
		{"long key", valid(func(p *persistence.Published) { p.Key = strings.Repeat("k", persistence.MaxKeyLen+1) })},
		{"NUL in key", valid(func(p *persistence.Published) { p.Key = "k\x00" })},
		{"NUL in handler id", valid(func(p *persistence.Published) { p.HandlerID = "h\x00" })},
		{"no time", valid(func(p *persistence.Published) { p.At = time.Time{} })},
		{"time out of range", valid(func(p *persistence.Published) { p.At = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) })},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Publish(t.Context(), tt.p)
			wantErr(t, "Publish", err, persistence.ErrInvalid)
		})
	}
	if log, err := s.PublishedAfter(t.Context(), 0, 0); err != nil || len(log) != 2 {
		t.Fatalf("PublishedAfter(0) after invalid publishes = %d entries, %v; want 2", len(log), err)
	}
}

func testFindPublished(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	T := baseTime()
	ids := newIDs(t, 3)
	h1, h2, h3 := ids[0], ids[1], ids[2]
	at := func(d time.Duration) time.Time { return T.Add(d) }
	// Published in this order, so Seq follows the index.
	events := []persistence.Published{
		{Key: "k", At: at(time.Second)},                          // 0: global
		{Key: "k", HandlerID: h1, At: at(2 * time.Second)},       // 1
		{Key: "k", HandlerID: h2, At: at(0)},                     // 2: the oldest, for h2 only
		{Key: "k", HandlerID: h1, At: at(5 * time.Second)},       // 3: tie with 4, smaller seq
		{Key: "k", At: at(5 * time.Second)},                      // 4
		{Key: "k", At: at(9 * time.Second)},                      // 5: tie with 6, smaller seq
		{Key: "k", HandlerID: h1, At: at(9 * time.Second)},       // 6
		{Key: "k2", At: at(0)},                                   // 7: another key, a longer one
		{Key: "k", HandlerID: h1 + "-x", At: at(-time.Second)},   // 8: a handler id with h1 as prefix
		{Key: "k/", At: at(-time.Hour)},                          // 9: a key with "k" as prefix
		{Key: "k", HandlerID: h3, At: at(-365 * 24 * time.Hour)}, // 10: long before
		{Key: "k", At: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)}, // 11: year 1, global
	}
	for i := range events {
		events[i].ID = newEventID(t)
		events[i].Data = fmt.Appendf(nil, "event %d", i)
		events[i] = publish(t, s, events[i])
	}
	const none = -1
	tests := []struct {
		name      string
		key       string
		handlerID string
		since     time.Time
		want      int
	}{
		{"global only", "k", "", T, 0},
		{"global older than the handler's", "k", h1, T, 0},
		{"the handler's older than global", "k", h2, T, 2},
		{"since is inclusive", "k", h1, at(time.Second), 0},
		{"a nanosecond later", "k", h1, at(time.Second + 1), 1},
		{"tie: the handler's has the smaller seq", "k", h1, at(3 * time.Second), 3},
		{"tie: only global for another handler", "k", h2, at(3 * time.Second), 4},
		{"tie: global has the smaller seq", "k", h1, at(6 * time.Second), 5},
		{"nothing after the last", "k", h1, at(9*time.Second + 1), none},
		{"an unknown handler gets global events", "k", "someone", T, 0},
		{"handler id prefix is not a match", "k", h1, at(-2 * time.Second), 0},
		{"the prefixed handler's own", "k", h1 + "-x", at(-2 * time.Second), 8},
		{"key prefix is not a match", "k", "", at(-2 * time.Hour), 0},
		{"the longer key", "k2", "", at(-time.Hour), 7},
		{"the prefixed key", "k/", h1, time.Time{}, 9},
		{"since the beginning of time", "k", h3, time.Time{}, 11},
		{"long before", "k", h3, at(-366 * 24 * time.Hour), 10},
		{"unknown key", "nope", h1, time.Time{}, none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := s.FindPublished(t.Context(), tt.key, tt.handlerID, tt.since)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == none {
				if ok {
					t.Fatalf("found %+v, want none", got)
				}
				return
			}
			if !ok {
				t.Fatalf("found none, want event %d", tt.want)
			}
			checkPublished(t, "FindPublished", got, events[tt.want])
		})
	}
	for _, tt := range []struct{ name, key, handlerID string }{
		{"empty key", "", h1},
		{"NUL in key", "k\x00", ""},
		{"long key", strings.Repeat("k", persistence.MaxKeyLen+1), ""},
		{"NUL in handler id", "k", "h\x00"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := s.FindPublished(t.Context(), tt.key, tt.handlerID, T)
			wantErr(t, "FindPublished", err, persistence.ErrInvalid)
		})
	}
}

func testPublishedAfter(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	now := baseTime()
	var all []persistence.Published
	for i := range 20 {
		// At does not follow the publishing order: the log does.
		p := persistence.Published{ID: newEventID(t), Key: fmt.Sprint("k", i%3), At: now.Add(time.Duration(-i) * time.Minute), Data: []byte{byte(i)}}
		if i%2 == 0 {
			p.HandlerID = "h"
		}
		all = append(all, publish(t, s, p))
	}
	for i := 1; i < len(all); i++ {
		if all[i].Seq <= all[i-1].Seq {
			t.Fatalf("Seq %d after %d", all[i].Seq, all[i-1].Seq)
		}
	}
	tests := []struct {
		name     string
		afterSeq uint64
		limit    int
		want     []persistence.Published
	}{
		{"all", 0, 0, all},
		{"negative limit means default", 0, -1, all},
		{"first three", 0, 3, all[:3]},
		{"after an entry", all[4].Seq, 2, all[5:7]},
		{"limit beyond the end", all[17].Seq, 10, all[18:]},
		{"after the last", all[19].Seq, 0, nil},
		{"after the largest seq", ^uint64(0), 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.PublishedAfter(t.Context(), tt.afterSeq, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d entries, want %d", len(got), len(tt.want))
			}
			for i := range got {
				checkPublished(t, fmt.Sprint("entry ", i), got[i], tt.want[i])
			}
		})
	}
}
