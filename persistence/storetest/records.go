package storetest

import (
	"testing"

	"github.com/wfd-dev/wfd/persistence"
)

func testRecords(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ids := newIDs(t, 2)
	h := newHandler(ids[0], "wf")
	other := newHandler(ids[1], "wf")

	_, err := s.ReadRecords(t.Context(), h.ID, 0, 0)
	wantErr(t, "ReadRecords(unknown)", err, persistence.ErrNotFound)

	write(t, s, persistence.Change{Handler: h, Create: true})
	recs, err := s.ReadRecords(t.Context(), h.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, "no records yet", recs, nil)

	// Appends across writes, with gaps in the numbering, interleaved with
	// another handler's records (which must not leak into this stream).
	write(t, s, persistence.Change{Handler: h, Records: records(1, 2, 3)},
		persistence.Change{Handler: other, Records: records(1, 2, 3, 4, 5)})
	write(t, s, persistence.Change{Handler: h}) // no records: LastSeq kept
	write(t, s, persistence.Change{Handler: h, Records: records(5, 8)})
	if got := getHandler(t, s, h.ID).LastSeq; got != 8 {
		t.Fatalf("LastSeq = %d, want 8", got)
	}
	recs, err = s.ReadRecords(t.Context(), h.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, "all records", recs, records(1, 2, 3, 5, 8))

	// A record not after LastSeq conflicts, and the whole change fails.
	for _, seqs := range [][]uint64{{8}, {7, 9}, {1}} {
		err := s.Write(t.Context(), persistence.Change{Handler: h, Records: records(seqs...)})
		wantErr(t, "append before LastSeq", err, persistence.ErrConflict)
	}
	if got := getHandler(t, s, h.ID).LastSeq; got != 8 {
		t.Fatalf("LastSeq after conflicts = %d, want 8", got)
	}

	// Seqs may be large (the full uint64 range sorts correctly).
	write(t, s, persistence.Change{Handler: h, Records: records(1<<40, 1<<63, ^uint64(0))})
	recs, err = s.ReadRecords(t.Context(), h.ID, 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, "large seqs", recs, records(1<<40, 1<<63, ^uint64(0)))
	recs, err = s.ReadRecords(t.Context(), h.ID, ^uint64(0), 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, "after the largest seq", recs, nil)

	// Records are returned as copies.
	recs, _ = s.ReadRecords(t.Context(), h.ID, 0, 1)
	recs[0].Data[0] = 'X'
	recs, _ = s.ReadRecords(t.Context(), h.ID, 0, 1)
	checkRecords(t, "after changing a returned record", recs, records(1))
}

func testReadRecordsLimits(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	h := newHandler(newIDs(t, 1)[0], "wf")
	var seqs []uint64
	for i := uint64(1); i <= 20; i++ {
		seqs = append(seqs, i*10)
	}
	write(t, s, persistence.Change{Handler: h, Records: records(seqs...)})

	tests := []struct {
		name     string
		afterSeq uint64
		limit    int
		want     []uint64
	}{
		{"all", 0, 0, seqs},
		{"negative limit means default", 0, -1, seqs},
		{"first three", 0, 3, seqs[:3]},
		{"after an existing seq", 50, 2, []uint64{60, 70}},
		{"after a missing seq", 55, 2, []uint64{60, 70}},
		{"limit beyond the end", 180, 10, []uint64{190, 200}},
		{"after the last", 200, 10, nil},
		{"far after the last", 1 << 50, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.ReadRecords(t.Context(), h.ID, tt.afterSeq, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			checkRecords(t, "ReadRecords", got, records(tt.want...))
		})
	}
}
