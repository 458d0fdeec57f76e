package codec_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	storagev1 "github.com/wfd-dev/wfd/internal/gen/wfd/storage/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// TestGoldenHandlerMeta decodes metadata stored by an older wfd
// (testdata/handlermeta-v1.golden: a released approval handler, see
// server/testdata/README.md): every HandlerMeta of version 1 must stay
// readable, field for field.
func TestGoldenHandlerMeta(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "handlermeta-v1.golden"))
	if err != nil {
		t.Fatal(err)
	}
	var m, known storagev1.HandlerMeta
	if err := proto.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if err := (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(raw, &known); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&m, &known) {
		t.Fatalf("the stored metadata has fields this version does not know:\n%v", &m)
	}

	got, err := codec.DecodeHandler(raw)
	if err != nil {
		t.Fatal(err)
	}
	at := func(nanos int64) time.Time { return time.Unix(1795464802, nanos).UTC() }
	want := persistence.Handler{
		ID: "golden-approval", Workflow: "approval",
		Status: persistence.StatusRunning, Residency: persistence.ResidencyReleased,
		CreatedAt: at(520104016), UpdatedAt: at(528786935), IdleSince: at(520350734),
		Waiters: []persistence.Waiter{{ID: "1/decide/0", Step: "decide", EventType: "approval",
			Match: []byte("\n\n1/decide/0\x12\x06decide\x1a\x08approval")}},
		LastSeq: 5,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded\n got %+v\nwant %+v", got, want)
	}
}

// TestGoldenHandlerMetaPseudoWaiters decodes version 1 metadata whose
// outside event type and run deadline were stored as the pseudo-waiters
// "~external/note" and "~timeout" (testdata/handlermeta-v1-notes.golden,
// the metadata of handler golden-notes in server/testdata/notes-released.db):
// they decode as External and Deadline, not as waiters.
func TestGoldenHandlerMetaPseudoWaiters(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "handlermeta-v1-notes.golden"))
	if err != nil {
		t.Fatal(err)
	}
	var m storagev1.HandlerMeta
	if err := proto.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.Version != 1 || len(m.Waiters) != 2 {
		t.Fatalf("the fixture is not version 1 with two pseudo-waiters: %v", &m)
	}
	got, err := codec.DecodeHandler(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Waiters) != 0 || !reflect.DeepEqual(got.External, []string{"note"}) ||
		!got.Deadline.Equal(m.Waiters[1].GetDeadline().AsTime()) || got.Deadline.Sub(got.CreatedAt) < 24*time.Hour {
		t.Fatalf("decoded waiters %v, external %v, deadline %v (created %v)", got.Waiters, got.External, got.Deadline, got.CreatedAt)
	}
	// Encoded again, it is version 2 and decodes the same.
	b, err := codec.EncodeHandler(&got)
	if err != nil {
		t.Fatal(err)
	}
	again, err := codec.DecodeHandler(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, got) {
		t.Fatalf("re-encoded\n got %+v\nwant %+v", again, got)
	}
}

// TestGoldenHandlerMetaV2 checks the current encoding, version 2, against
// testdata/handlermeta-v2.golden, byte for byte, and that the golden file
// decodes: a change to the encoding must add a version, not change this
// one. Run with -update to write the file when a version is added.
func TestGoldenHandlerMetaV2(t *testing.T) {
	at := time.Date(2026, 11, 23, 12, 0, 0, 5, time.UTC)
	h := persistence.Handler{
		ID: "golden-v2", Workflow: "notes", Status: persistence.StatusRunning, Residency: persistence.ResidencyReleased,
		CreatedAt: at, UpdatedAt: at.Add(time.Second), IdleSince: at.Add(time.Second),
		Waiters: []persistence.Waiter{{ID: "1/collect/0", Step: "collect", EventType: "answer",
			Match: []byte("match"), Deadline: at.Add(time.Hour), Key: "answer"}},
		External: []string{"note", "close"}, Deadline: at.Add(24 * time.Hour),
		Parent: "parent", Children: []string{"c1"}, LastSeq: 7,
	}
	b, err := codec.EncodeHandler(&h)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "handlermeta-v2.golden")
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("encoding changed:\n got %x\nwant %x", b, want)
	}
	got, err := codec.DecodeHandler(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, h) {
		t.Fatalf("decoded\n got %+v\nwant %+v", got, h)
	}
}

var update = flag.Bool("update", false, "write the golden files of the current encoding")
