// Package codec encodes persistence.Handler, persistence.Task,
// persistence.Published and persistence.WorkflowDef as the protobuf
// messages wfd.storage.v1.HandlerMeta, TaskMeta, PublishedEvent and
// WorkflowDef. Backends share it so that every backend
// stores them in the same, versioned, forward-compatible format.
package codec

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wfd-dev/wfd/attrs"
	storagev1 "github.com/wfd-dev/wfd/internal/gen/wfd/storage/v1"
	"github.com/wfd-dev/wfd/persistence"
)

// Version is the HandlerMeta encoding version this package writes.
// Version 2 keeps a handler's outside event types and run deadline in
// fields of their own; version 1 kept them as pseudo-waiters (see
// upgradeV1), and is still read.
const Version = 2

// EncodeHandler returns the stored form of h. It does not validate h.
func EncodeHandler(h *persistence.Handler) ([]byte, error) {
	m := &storagev1.HandlerMeta{
		Version:         Version,
		Id:              h.ID,
		Workflow:        h.Workflow,
		WorkflowVersion: h.WorkflowVersion,
		Status:          storagev1.Status(h.Status),
		Residency:       storagev1.Residency(h.Residency),
		CreatedAt:       timestamp(h.CreatedAt),
		UpdatedAt:       timestamp(h.UpdatedAt),
		CompletedAt:     timestamp(h.CompletedAt),
		IdleSince:       timestamp(h.IdleSince),
		Error:           h.Error,
		Result:          h.Result,
		Parent:          h.Parent,
		Children:        h.Children,
		Owner:           h.Owner,
		LastSeq:         h.LastSeq,
		External:        h.External,
		Deadline:        timestamp(h.Deadline),
		Revision:        h.Revision,
	}
	if h.Slot != nil {
		m.Slot = &storagev1.HandlerSlot{Key: h.Slot.Key, Queued: h.Slot.Queued}
	}
	if len(h.Attributes) > 0 {
		a, err := attrs.Encode(h.Attributes)
		if err != nil {
			return nil, fmt.Errorf("encode handler %q: %w", h.ID, err)
		}
		m.Attributes = a
	}
	if len(h.Waiters) > 0 {
		m.Waiters = make([]*storagev1.Waiter, len(h.Waiters))
		for i := range h.Waiters {
			w := &h.Waiters[i]
			m.Waiters[i] = &storagev1.Waiter{
				Id:        w.ID,
				Step:      w.Step,
				EventType: w.EventType,
				Match:     w.Match,
				Deadline:  timestamp(w.Deadline),
				Key:       w.Key,
			}
		}
	}
	// Deterministic so that equal metadata encodes to equal bytes.
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode handler %q: %w", h.ID, err)
	}
	return b, nil
}

// DecodeHandler parses the stored form of a handler. Any value that is not
// a valid HandlerMeta of a known version, or that describes a handler Write
// would have refused, fails with an error wrapping persistence.ErrCorrupt:
// index keys are derived from the decoded metadata, so accepting such a
// value would corrupt the indexes too. It never panics.
func DecodeHandler(b []byte) (persistence.Handler, error) {
	var m storagev1.HandlerMeta
	if err := proto.Unmarshal(b, &m); err != nil {
		return persistence.Handler{}, fmt.Errorf("%w: handler metadata: %w", persistence.ErrCorrupt, err)
	}
	if m.Version != 1 && m.Version != Version {
		return persistence.Handler{}, fmt.Errorf("%w: handler metadata: unknown version %d", persistence.ErrCorrupt, m.Version)
	}
	h := persistence.Handler{
		ID:              m.Id,
		Workflow:        m.Workflow,
		WorkflowVersion: m.GetWorkflowVersion(),
		Status:          persistence.Status(m.Status),
		Residency:       persistence.Residency(m.Residency),
		Error:           m.Error,
		Result:          m.Result,
		Parent:          m.Parent,
		Children:        m.Children,
		Owner:           m.Owner,
		LastSeq:         m.LastSeq,
		External:        m.External,
		Revision:        m.Revision,
	}
	var err error
	if h.CreatedAt, err = fromTimestamp(m.CreatedAt); err != nil {
		return persistence.Handler{}, corrupt(m.Id, "created_at", err)
	}
	if h.UpdatedAt, err = fromTimestamp(m.UpdatedAt); err != nil {
		return persistence.Handler{}, corrupt(m.Id, "updated_at", err)
	}
	if h.CompletedAt, err = fromTimestamp(m.CompletedAt); err != nil {
		return persistence.Handler{}, corrupt(m.Id, "completed_at", err)
	}
	if h.IdleSince, err = fromTimestamp(m.IdleSince); err != nil {
		return persistence.Handler{}, corrupt(m.Id, "idle_since", err)
	}
	if h.Deadline, err = fromTimestamp(m.Deadline); err != nil {
		return persistence.Handler{}, corrupt(m.Id, "deadline", err)
	}
	if sl := m.GetSlot(); sl != nil {
		h.Slot = &persistence.HandlerSlot{Key: sl.GetKey(), Queued: sl.GetQueued()}
	}
	if len(m.Attributes) > 0 {
		if h.Attributes, err = attrs.Decode(m.Attributes); err != nil {
			return persistence.Handler{}, corrupt(m.Id, "attributes", err)
		}
	}
	if len(m.Waiters) > 0 {
		h.Waiters = make([]persistence.Waiter, len(m.Waiters))
		for i, w := range m.Waiters {
			h.Waiters[i] = persistence.Waiter{
				ID:        w.GetId(),
				Step:      w.GetStep(),
				EventType: w.GetEventType(),
				Match:     w.GetMatch(),
				Key:       w.GetKey(),
			}
			if h.Waiters[i].Deadline, err = fromTimestamp(w.GetDeadline()); err != nil {
				return persistence.Handler{}, corrupt(m.Id, "waiter deadline", err)
			}
		}
	}
	if m.Version == 1 {
		upgradeV1(&h)
	}
	if err := h.Validate(); err != nil {
		return persistence.Handler{}, fmt.Errorf("%w: handler metadata: %w", persistence.ErrCorrupt, err)
	}
	return h, nil
}

// The pseudo-waiters of version 1: wfd's server kept an idle handler's
// outside event types as waiters "~external/<type>" and its run deadline
// as a waiter "~timeout" with that deadline (engine waiter ids, which
// start with a number, never clash with them).
const (
	v1ExternalPrefix = "~external/"
	v1TimeoutWaiter  = "~timeout"
)

// upgradeV1 moves version 1's pseudo-waiters into External and Deadline.
func upgradeV1(h *persistence.Handler) {
	ws := h.Waiters[:0]
	for _, w := range h.Waiters {
		switch {
		case strings.HasPrefix(w.ID, v1ExternalPrefix):
			h.External = append(h.External, w.EventType)
		case w.ID == v1TimeoutWaiter:
			h.Deadline = w.Deadline
		default:
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		ws = nil
	}
	h.Waiters = ws
}

// IsV1TimeoutWaiter reports whether a version 1 store indexed a timer of
// waiter id as the run deadline it now indexes with no waiter (the bolt
// migration to schema 4 moves those index entries).
func IsV1TimeoutWaiter(id string) bool { return id == v1TimeoutWaiter }

func corrupt(id, field string, err error) error {
	return fmt.Errorf("%w: handler %q metadata: %s: %w", persistence.ErrCorrupt, id, field, err)
}

// timestamp maps the zero time to an unset field, so that "not set" (not
// idle, no deadline) survives a round trip.
func timestamp(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func fromTimestamp(ts *timestamppb.Timestamp) (time.Time, error) {
	if ts == nil {
		return time.Time{}, nil
	}
	if err := ts.CheckValid(); err != nil {
		return time.Time{}, err
	}
	return ts.AsTime(), nil
}
