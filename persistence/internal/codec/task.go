package codec

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	storagev1 "github.com/wfd-dev/wfd/internal/gen/wfd/storage/v1"
	"github.com/wfd-dev/wfd/persistence"
)

// TaskVersion is the TaskMeta encoding version this package writes.
const TaskVersion = 1

// EncodeTask returns the stored form of t. It does not validate t.
func EncodeTask(t *persistence.Task) ([]byte, error) {
	m := &storagev1.TaskMeta{
		Version:      TaskVersion,
		Id:           t.ID,
		HandlerId:    t.HandlerID,
		Workflow:     t.Workflow,
		Step:         t.Step,
		Title:        t.Title,
		Description:  t.Description,
		Schema:       t.Schema,
		Assignee:     t.Assignee,
		Status:       storagev1.TaskStatus(t.Status),
		CreatedAt:    timestamp(t.CreatedAt),
		Deadline:     timestamp(t.Deadline),
		CompletedAt:  timestamp(t.CompletedAt),
		CompletedBy:  t.CompletedBy,
		Answer:       t.Answer,
		Input:        t.Input,
		InputSchema:  t.InputSchema,
		CancelReason: t.CancelReason,
		ClaimedBy:    t.ClaimedBy,
		ClaimedAt:    timestamp(t.ClaimedAt),
		Due:          timestamp(t.Due),
		Escalated:    t.Escalated,
	}
	for _, c := range t.Comments {
		m.Comments = append(m.Comments, &storagev1.TaskComment{Id: c.ID, By: c.By, At: timestamp(c.At), Text: c.Text})
	}
	// Deterministic, so that an unchanged task encodes to the same bytes
	// and its rewrite can be skipped.
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode task %q: %w", t.ID, err)
	}
	return b, nil
}

// DecodeTask parses the stored form of a task. Like DecodeHandler, it fails
// with an error wrapping persistence.ErrCorrupt for anything that is not a
// valid TaskMeta of a known version describing a task Write would accept,
// and never panics.
func DecodeTask(b []byte) (persistence.Task, error) {
	var m storagev1.TaskMeta
	if err := proto.Unmarshal(b, &m); err != nil {
		return persistence.Task{}, fmt.Errorf("%w: task: %w", persistence.ErrCorrupt, err)
	}
	if m.Version != TaskVersion {
		return persistence.Task{}, fmt.Errorf("%w: task: unknown version %d", persistence.ErrCorrupt, m.Version)
	}
	t := persistence.Task{
		ID:           m.Id,
		HandlerID:    m.HandlerId,
		Workflow:     m.Workflow,
		Step:         m.Step,
		Title:        m.Title,
		Description:  m.Description,
		Schema:       m.Schema,
		Assignee:     m.Assignee,
		Status:       persistence.TaskStatus(m.Status),
		CompletedBy:  m.CompletedBy,
		Answer:       m.Answer,
		Input:        m.Input,
		InputSchema:  m.InputSchema,
		CancelReason: m.CancelReason,
		ClaimedBy:    m.ClaimedBy,
		Escalated:    m.Escalated,
	}
	var err error
	if t.Due, err = fromTimestamp(m.Due); err != nil {
		return persistence.Task{}, corruptTask(m.Id, "due", err)
	}
	if t.ClaimedAt, err = fromTimestamp(m.ClaimedAt); err != nil {
		return persistence.Task{}, corruptTask(m.Id, "claimed_at", err)
	}
	for i, c := range m.Comments {
		at, err := fromTimestamp(c.GetAt())
		if err != nil {
			return persistence.Task{}, corruptTask(m.Id, fmt.Sprintf("comments[%d].at", i), err)
		}
		t.Comments = append(t.Comments, persistence.TaskComment{ID: c.GetId(), By: c.GetBy(), At: at, Text: c.GetText()})
	}
	if t.CreatedAt, err = fromTimestamp(m.CreatedAt); err != nil {
		return persistence.Task{}, corruptTask(m.Id, "created_at", err)
	}
	if t.Deadline, err = fromTimestamp(m.Deadline); err != nil {
		return persistence.Task{}, corruptTask(m.Id, "deadline", err)
	}
	if t.CompletedAt, err = fromTimestamp(m.CompletedAt); err != nil {
		return persistence.Task{}, corruptTask(m.Id, "completed_at", err)
	}
	if err := t.Validate(); err != nil {
		return persistence.Task{}, fmt.Errorf("%w: task: %w", persistence.ErrCorrupt, err)
	}
	return t, nil
}

func corruptTask(id, field string, err error) error {
	return fmt.Errorf("%w: task %q: %s: %w", persistence.ErrCorrupt, id, field, err)
}
