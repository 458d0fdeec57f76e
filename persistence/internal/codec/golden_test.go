package codec_test

import (
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
