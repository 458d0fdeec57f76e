package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// listAllPublished follows ListPublished's pages to the end and returns the
// entries' Seqs and the number of pages.
func listAllPublished(t *testing.T, s persistence.Store, q persistence.PublishedQuery) (seqs []uint64, pages int) {
	t.Helper()
	all, pages := pageAll(t, fmt.Sprintf("ListPublished(%+v)", q), q.Limit(), q.PageToken, func(token string) ([]persistence.Published, string, error) {
		q.PageToken = token
		return s.ListPublished(t.Context(), q)
	})
	for _, p := range all {
		seqs = append(seqs, p.Seq)
	}
	return seqs, pages
}

// testListPublished checks the log's listing: latest first by At (ties by
// Seq), each filter alone and combined, paging, and who published.
func testListPublished(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	T := baseTime()
	ids := newIDs(t, 2)
	h1, h2 := ids[0], ids[1]
	at := func(d time.Duration) time.Time { return T.Add(d) }
	events := []persistence.Published{
		{Key: "k", At: at(time.Second)},                           // 0
		{Key: "k", HandlerID: h1, At: at(2 * time.Second)},        // 1
		{Key: "k2", HandlerID: h1, At: at(0)},                     // 2: published after 1, older
		{Key: "k", HandlerID: h2, At: at(5 * time.Second)},        // 3: tie with 4, smaller seq
		{Key: "k", At: at(5 * time.Second), PublishedBy: "ann"},   // 4
		{Key: "k/", At: at(9 * time.Second)},                      // 5: key with "k" as prefix
		{Key: "k", HandlerID: h1 + "-x", At: at(7 * time.Second)}, // 6: handler id with h1 as prefix
	}
	for i := range events {
		events[i].ID = newEventID(t)
		events[i].Data = fmt.Appendf(nil, "event %d", i)
		events[i] = publish(t, s, events[i])
	}
	seqs := func(idx ...int) []uint64 {
		out := make([]uint64, len(idx))
		for i, j := range idx {
			out[i] = events[j].Seq
		}
		return out
	}
	tests := []struct {
		name string
		q    persistence.PublishedQuery
		want []uint64
	}{
		{"everything", persistence.PublishedQuery{}, seqs(5, 6, 4, 3, 1, 0, 2)},
		{"one key", persistence.PublishedQuery{Key: "k"}, seqs(6, 4, 3, 1, 0)},
		{"the prefixed key", persistence.PublishedQuery{Key: "k/"}, seqs(5)},
		{"one handler", persistence.PublishedQuery{HandlerID: h1}, seqs(1, 2)},
		{"key and handler", persistence.PublishedQuery{Key: "k", HandlerID: h1}, seqs(1)},
		{"since is inclusive", persistence.PublishedQuery{Since: at(2 * time.Second)}, seqs(5, 6, 4, 3, 1)},
		{"key since", persistence.PublishedQuery{Key: "k", Since: at(5 * time.Second)}, seqs(6, 4, 3)},
		{"handler since", persistence.PublishedQuery{HandlerID: h1, Since: at(1)}, seqs(1)},
		{"key, handler, since", persistence.PublishedQuery{Key: "k", HandlerID: h1, Since: at(3 * time.Second)}, nil},
		{"unknown key", persistence.PublishedQuery{Key: "nope"}, nil},
		{"unknown handler", persistence.PublishedQuery{HandlerID: "nobody"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := listAllPublished(t, s, tt.q)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("seqs = %v, want %v", got, tt.want)
			}
			for _, size := range []int{1, 2, 3} {
				q := tt.q
				q.PageSize = size
				paged, pages := listAllPublished(t, s, q)
				if !slices.Equal(paged, tt.want) {
					t.Fatalf("page size %d: seqs = %v, want %v", size, paged, tt.want)
				}
				if min := (len(tt.want) + size - 1) / size; pages < min || pages > min+1 {
					t.Fatalf("page size %d: %d pages for %d entries", size, pages, len(tt.want))
				}
			}
		})
	}

	// Entries come back whole, PublishedBy included.
	got, _, err := s.ListPublished(t.Context(), persistence.PublishedQuery{Key: "k", Since: at(5 * time.Second), PageSize: 3})
	if err != nil || len(got) != 3 {
		t.Fatalf("ListPublished = %d entries, %v; want 3", len(got), err)
	}
	checkPublished(t, "listed entry", got[1], events[4])
	checkPublished(t, "listed entry", got[2], events[3])

	// A page continues after the previous one: entries published
	// meanwhile (latest) do not appear in it.
	first, next, err := s.ListPublished(t.Context(), persistence.PublishedQuery{Key: "k", PageSize: 2})
	if err != nil || len(first) != 2 || next == "" {
		t.Fatalf("first page = %d entries, %q, %v", len(first), next, err)
	}
	publish(t, s, persistence.Published{ID: newEventID(t), Key: "k", At: at(time.Hour)})
	rest, _ := listAllPublished(t, s, persistence.PublishedQuery{Key: "k", PageSize: 2, PageToken: next})
	if want := seqs(3, 1, 0); !slices.Equal(rest, want) {
		t.Fatalf("pages after a publish = %v, want %v", rest, want)
	}
}

// testListPublishedErrors checks bad queries and page tokens, and the
// page sizes.
func testListPublishedErrors(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	T := baseTime()
	for i := range persistence.MaxPageSize + 2 {
		publish(t, s, persistence.Published{ID: newEventID(t), Key: "k", At: T.Add(time.Duration(i) * time.Millisecond)})
	}
	for _, tt := range []struct {
		size, want int
	}{{0, persistence.DefaultPageSize}, {7, 7}, {persistence.MaxPageSize + 1, persistence.MaxPageSize}} {
		got, next, err := s.ListPublished(t.Context(), persistence.PublishedQuery{PageSize: tt.size})
		if err != nil || len(got) != tt.want || next == "" {
			t.Fatalf("PageSize %d: %d entries, next %q, %v; want %d and a next page", tt.size, len(got), next, err, tt.want)
		}
	}
	_, next, err := s.ListPublished(t.Context(), persistence.PublishedQuery{Key: "k", PageSize: 1})
	if err != nil || next == "" {
		t.Fatalf("ListPublished: next %q, %v", next, err)
	}
	for _, tt := range []struct {
		name string
		q    persistence.PublishedQuery
	}{
		{"negative page size", persistence.PublishedQuery{PageSize: -1}},
		{"NUL in key", persistence.PublishedQuery{Key: "k\x00"}},
		{"long key", persistence.PublishedQuery{Key: strings.Repeat("k", persistence.MaxKeyLen+1)}},
		{"NUL in handler id", persistence.PublishedQuery{HandlerID: "h\x00"}},
		{"malformed token", persistence.PublishedQuery{Key: "k", PageToken: "not a token!"}},
		{"token for other filters", persistence.PublishedQuery{Key: "k2", PageToken: next}},
		{"token for another since", persistence.PublishedQuery{Key: "k", Since: T, PageToken: next}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := s.ListPublished(t.Context(), tt.q)
			wantErr(t, "ListPublished", err, persistence.ErrInvalid)
		})
	}
	// A handler listing's token is not a log listing's.
	for _, id := range newIDs(t, 2) {
		write(t, s, persistence.Change{Handler: newHandler(id, "wf")})
	}
	_, hnext, err := s.ListHandlers(t.Context(), persistence.Query{PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.ListPublished(t.Context(), persistence.PublishedQuery{PageToken: hnext})
	wantErr(t, "ListPublished with a ListHandlers token", err, persistence.ErrInvalid)
}

// testDeleteKeepsPublished checks that deleting a handler leaves the
// events published for it in the log: the log is immutable.
func testDeleteKeepsPublished(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	id := newIDs(t, 1)[0]
	h := newHandler(id, "wf")
	h.Status = persistence.StatusCompleted
	h.CompletedAt = baseTime()
	write(t, s, persistence.Change{Handler: h, Records: records(1)})
	p := publish(t, s, persistence.Published{ID: newEventID(t), Key: "k", HandlerID: id, At: baseTime()})
	write(t, s, persistence.Change{Handler: persistence.Handler{ID: id}, Delete: true})
	got, _, err := s.ListPublished(t.Context(), persistence.PublishedQuery{HandlerID: id})
	if err != nil || len(got) != 1 {
		t.Fatalf("ListPublished after Delete = %d entries, %v; want 1", len(got), err)
	}
	checkPublished(t, "entry of a deleted handler", got[0], p)
}
