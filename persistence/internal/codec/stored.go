package codec

import (
	"fmt"

	"github.com/wfd-dev/wfd/persistence"
)

// The Decode*Stored functions decode a value as a backend reads it: stored
// under a key (a handler's or task's id, a published entry's seq, a
// workflow's name and version) that the value must name too. A value that
// names another is corrupt, as one that does not decode is; the error
// says which key it was read under.

// DecodeStoredHandler decodes the metadata stored under id.
func DecodeStoredHandler(id string, raw []byte) (persistence.Handler, error) {
	h, err := DecodeHandler(raw)
	if err != nil {
		return persistence.Handler{}, fmt.Errorf("handler %q: %w", id, err)
	}
	if h.ID != id {
		return persistence.Handler{}, fmt.Errorf("handler %q: %w: metadata names handler %q", id, persistence.ErrCorrupt, h.ID)
	}
	return h, nil
}

// DecodeStoredTask decodes the task stored under id.
func DecodeStoredTask(id string, raw []byte) (persistence.Task, error) {
	t, err := DecodeTask(raw)
	if err != nil {
		return persistence.Task{}, fmt.Errorf("task %q: %w", id, err)
	}
	if t.ID != id {
		return persistence.Task{}, fmt.Errorf("task %q: %w: value names task %q", id, persistence.ErrCorrupt, t.ID)
	}
	return t, nil
}

// DecodeStoredPublished decodes the published-event log entry stored
// under seq.
func DecodeStoredPublished(seq uint64, raw []byte) (persistence.Published, error) {
	p, err := DecodePublished(raw)
	if err != nil {
		return persistence.Published{}, fmt.Errorf("published entry %d: %w", seq, err)
	}
	if p.Seq != seq {
		return persistence.Published{}, fmt.Errorf("published entry %d: %w: value has seq %d", seq, persistence.ErrCorrupt, p.Seq)
	}
	return p, nil
}

// DecodeStoredWorkflowDef decodes the definition stored under (name,
// version). A value without a version is corrupt here: the migrations
// gave every stored definition one.
func DecodeStoredWorkflowDef(name, version string, raw []byte) (persistence.WorkflowDef, error) {
	d, err := DecodeWorkflowDef(raw)
	if err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("workflow %q version %q: %w", name, version, err)
	}
	if d.Name != name || d.Version != version {
		return persistence.WorkflowDef{}, fmt.Errorf("workflow %q version %q: %w: value names workflow %q version %q",
			name, version, persistence.ErrCorrupt, d.Name, d.Version)
	}
	return d, nil
}
