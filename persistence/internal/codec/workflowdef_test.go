package codec_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	storagev1 "github.com/wfd-dev/wfd/internal/gen/wfd/storage/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

func encodeDef(t testing.TB, d persistence.WorkflowDef) []byte {
	t.Helper()
	b, err := codec.EncodeWorkflowDef(&d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWorkflowDefRoundTrip(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, d := range []persistence.WorkflowDef{
		{Name: "w", Hash: "h", Def: []byte{1}},
		{Name: "approval-py", Hash: strings.Repeat("ab", 32), Def: []byte("\n\x0bapproval-py"),
			CreatedAt: at, UpdatedAt: at.Add(time.Hour), Source: "worker-1"},
		// With a version, current: the fields added after version 1, which
		// a record written before them decodes without (above).
		{Name: "w", Version: "abababababababab", Current: true, Hash: "h", Def: []byte{1}},
	} {
		got, err := codec.DecodeWorkflowDef(encodeDef(t, d))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, d) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, d)
		}
	}
}

// TestDecodeWorkflowDefRefuses: a definition PutWorkflow would refuse, an
// unknown version and bytes that are no message are all ErrCorrupt.
func TestDecodeWorkflowDefRefuses(t *testing.T) {
	valid := persistence.WorkflowDef{Name: "w", Hash: "h", Def: []byte("d")}
	future, err := proto.Marshal(&storagev1.WorkflowDef{Version: codec.WorkflowDefVersion + 1, Name: "w", Hash: "h", Def: []byte("d")})
	if err != nil {
		t.Fatal(err)
	}
	unversioned, err := proto.Marshal(&storagev1.WorkflowDef{Name: "w", Hash: "h", Def: []byte("d")})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"no name":            encodeDef(t, persistence.WorkflowDef{Hash: "h", Def: []byte("d")}),
		"no hash":            encodeDef(t, persistence.WorkflowDef{Name: "w", Def: []byte("d")}),
		"no definition":      encodeDef(t, persistence.WorkflowDef{Name: "w", Hash: "h"}),
		"NUL in the name":    encodeDef(t, persistence.WorkflowDef{Name: "w\x00", Hash: "h", Def: []byte("d")}),
		"NUL in the version": encodeDef(t, persistence.WorkflowDef{Name: "w", Version: "v\x00", Hash: "h", Def: []byte("d")}),
		"newer version":      future,
		"no version":         unversioned,
		"not a message":      []byte("\xff\xff\xff"),
		"truncated":          encodeDef(t, valid)[:5],
	} {
		if _, err := codec.DecodeWorkflowDef(b); !errors.Is(err, persistence.ErrCorrupt) {
			t.Errorf("%s: DecodeWorkflowDef = %v, want ErrCorrupt", name, err)
		}
	}
}

// TestGoldenWorkflowDefV1 checks the current encoding, version 1, against
// testdata/workflowdef-v1.golden, byte for byte, and that the golden file
// decodes: a change to the encoding must add a version, not change this
// one. Run with -update to write the file when a version is added.
func TestGoldenWorkflowDefV1(t *testing.T) {
	at := time.Date(2026, 11, 23, 12, 0, 0, 5, time.UTC)
	d := persistence.WorkflowDef{
		Name: "approval-py", Hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Def: []byte("\n\x0bapproval-py"), CreatedAt: at, UpdatedAt: at.Add(time.Minute), Source: "worker-1",
	}
	b := encodeDef(t, d)
	path := filepath.Join("testdata", "workflowdef-v1.golden")
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
	got, err := codec.DecodeWorkflowDef(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Fatalf("decoded\n got %+v\nwant %+v", got, d)
	}
}
