package codec

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	storagev1 "github.com/wfd-dev/wfd/internal/gen/wfd/storage/v1"
	"github.com/wfd-dev/wfd/persistence"
)

// PublishedVersion is the PublishedEvent encoding version this package
// writes.
const PublishedVersion = 1

// EncodePublished returns the stored form of p, Seq included. It does not
// validate p.
func EncodePublished(p *persistence.Published) ([]byte, error) {
	m := &storagev1.PublishedEvent{
		Version:   PublishedVersion,
		Seq:       p.Seq,
		Id:        p.ID,
		Key:       p.Key,
		HandlerId: p.HandlerID,
		Data:      p.Data,
		At:        timestamp(p.At),

		PublishedBy: p.PublishedBy,
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode published %q: %w", p.ID, err)
	}
	return b, nil
}

// DecodePublished parses the stored form of a published event. Anything
// that is not a valid PublishedEvent of a known version, with a Seq, that
// Publish would accept fails with an error wrapping persistence.ErrCorrupt.
// It never panics.
func DecodePublished(b []byte) (persistence.Published, error) {
	var m storagev1.PublishedEvent
	if err := proto.Unmarshal(b, &m); err != nil {
		return persistence.Published{}, fmt.Errorf("%w: published event: %w", persistence.ErrCorrupt, err)
	}
	if m.Version != PublishedVersion {
		return persistence.Published{}, fmt.Errorf("%w: published event: unknown version %d", persistence.ErrCorrupt, m.Version)
	}
	p := persistence.Published{Seq: m.Seq, ID: m.Id, Key: m.Key, HandlerID: m.HandlerId, Data: m.Data, PublishedBy: m.PublishedBy}
	var err error
	if p.At, err = fromTimestamp(m.At); err != nil {
		return persistence.Published{}, fmt.Errorf("%w: published event %q: at: %w", persistence.ErrCorrupt, m.Id, err)
	}
	if p.Seq == 0 {
		return persistence.Published{}, fmt.Errorf("%w: published event %q: no seq", persistence.ErrCorrupt, m.Id)
	}
	if err := p.Validate(); err != nil {
		return persistence.Published{}, fmt.Errorf("%w: published event: %w", persistence.ErrCorrupt, err)
	}
	return p, nil
}
