package backend_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence/internal/backend"
)

// FuzzDecodeSlotHeader: no bytes make DecodeSlotHeader panic, and what it
// decodes encodes back to bytes that decode to the same header.
func FuzzDecodeSlotHeader(f *testing.F) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 5, time.UTC)
	for _, h := range []backend.SlotHeader{
		{},
		{Holding: 2, Queued: 7, NextSeq: 9, NextDue: t0, Window: []time.Time{t0, t0.Add(time.Second)}},
	} {
		f.Add(backend.EncodeSlotHeader(&h))
	}
	f.Add([]byte{1, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := backend.DecodeSlotHeader(b)
		if err != nil {
			return
		}
		again, err := backend.DecodeSlotHeader(backend.EncodeSlotHeader(&h))
		if err != nil || !reflect.DeepEqual(h, again) {
			t.Fatalf("%+v encodes to a header decoded as %+v, %v", h, again, err)
		}
	})
}
