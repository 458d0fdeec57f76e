package backend

import (
	"bytes"
	"fmt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// EncodeRevised encodes h, the metadata a Write stores for a handler, and
// sets its Revision, which the store maintains. A handler that is new
// (stored is nil), whose stored metadata could not be decoded, or whose
// snapshot or records change (changed) gets revision, the Write's.
// Otherwise it keeps storedRevision if its metadata is unchanged (a change
// that only upserts tasks, say: it need not be rewritten) and gets
// revision if not. It reports whether the metadata must be written.
func EncodeRevised(h *persistence.Handler, stored []byte, storedRevision, revision uint64, changed bool) ([]byte, bool, error) {
	h.Revision = revision
	if changed {
		enc, err := codec.EncodeHandler(h)
		return enc, true, err
	}
	h.Revision = storedRevision
	enc, err := codec.EncodeHandler(h)
	if err != nil || bytes.Equal(enc, stored) {
		return enc, false, err
	}
	h.Revision = revision
	enc, err = codec.EncodeHandler(h)
	return enc, true, err
}

// PreparePublished checks a Publish call and returns what is published:
// p with its time in UTC and its own copy of Data (the caller may reuse
// p.Data once Publish returns, and a transaction may run again).
func PreparePublished(p persistence.Published) (persistence.Published, error) {
	if err := p.Validate(); err != nil {
		return persistence.Published{}, fmt.Errorf("publish: %w", err)
	}
	p.At = p.At.UTC()
	p.Data = bytes.Clone(p.Data)
	return p, nil
}
