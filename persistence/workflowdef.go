package persistence

import (
	"fmt"
	"time"
)

// WorkflowDef is a stored workflow definition: one version of what a
// worker registered for a workflow it serves, kept so that handlers of
// that workflow (each on the version it started on) can be restored (and
// released, and answered) while no worker is connected.
// The store treats Def as opaque bytes and compares definitions by Hash
// only.
//
// Times are stored with nanosecond precision and returned in UTC. The
// caller sets them (an update keeps CreatedAt by passing the stored one
// on); the store stores them as given.
type WorkflowDef struct {
	// Name is the workflow's name, the first part of the key definitions
	// are stored under; the rules of Handler.Workflow apply.
	Name string
	// Version is the second part of the key: one name has several
	// versions, each immutable in what it runs. The rules of names apply
	// (not empty, no NUL), up to MaxVersionLen bytes. Definitions stored
	// before versions existed were given the first 16 characters of their
	// Hash by the migrations.
	Version string
	// Current marks the version new handlers of Name start on. At most one
	// version of a name is current: PutWorkflow with Current set and
	// SetCurrentWorkflow take the mark from the others.
	Current bool
	// Hash identifies Def's content (the server uses the hex SHA-256 of
	// Def), computed by the caller. PutWorkflow and DeleteWorkflow compare
	// it for their optimistic concurrency; the store never computes it.
	Hash string
	// Def is the encoded definition, opaque to the store (the server
	// stores a wfd.v1 message). It must not be empty.
	Def []byte
	// CreatedAt is when the name was first registered, UpdatedAt when
	// this definition replaced the previous one.
	CreatedAt time.Time
	UpdatedAt time.Time
	// Source says who registered the definition, e.g. the worker's name;
	// "" if unknown.
	Source string
	// Owner is the authenticated subject the workflow belongs to (the
	// first that registered it with authentication on): other subjects
	// serve it only with a grant. "" when registered without
	// authentication. A replacement keeps it.
	Owner string
}

// Limits of a WorkflowDef.
const (
	MaxHashLen    = 128     // WorkflowDef.Hash, room for any common digest in hex
	MaxVersionLen = 128     // WorkflowDef.Version, as long as a hash: callers may use one
	MaxDefLen     = 1 << 20 // WorkflowDef.Def: 1 MiB, far above any definition with its schemas
	MaxSourceLen  = 256     // WorkflowDef.Source
)

// Absent, passed as PutWorkflow's ifHash, makes the put create-only: it
// fails with ErrExists if that version of the name is stored. It cannot
// be a stored Hash (hashes have no NUL byte).
const Absent = "\x00absent"

// Validate reports whether d may be stored. The error wraps ErrInvalid.
func (d *WorkflowDef) Validate() error {
	if err := checkName("workflow", d.Name, MaxWorkflowLen, true); err != nil {
		return err
	}
	if err := checkName("version", d.Version, MaxVersionLen, true); err != nil {
		return fmt.Errorf("workflow %q: %w", d.Name, err)
	}
	if err := checkName("definition hash", d.Hash, MaxHashLen, true); err != nil {
		return fmt.Errorf("workflow %q: %w", d.Name, err)
	}
	switch {
	case len(d.Def) == 0:
		return fmt.Errorf("%w: workflow %q: definition is empty", ErrInvalid, d.Name)
	case len(d.Def) > MaxDefLen:
		return fmt.Errorf("%w: workflow %q: definition has %d bytes, more than %d", ErrInvalid, d.Name, len(d.Def), MaxDefLen)
	case len(d.Source) > MaxSourceLen:
		return fmt.Errorf("%w: workflow %q: source is longer than %d bytes", ErrInvalid, d.Name, MaxSourceLen)
	case len(d.Owner) > MaxOwnerLen:
		return fmt.Errorf("%w: workflow %q: owner is longer than %d bytes", ErrInvalid, d.Name, MaxOwnerLen)
	}
	if err := checkTime("CreatedAt", d.CreatedAt); err != nil {
		return fmt.Errorf("workflow %q: %w", d.Name, err)
	}
	if err := checkTime("UpdatedAt", d.UpdatedAt); err != nil {
		return fmt.Errorf("workflow %q: %w", d.Name, err)
	}
	return nil
}

// ValidateIfHash reports whether ifHash may be passed to
// Store.PutWorkflow (allowAbsent) or Store.DeleteWorkflow: "", a hash that
// Validate accepts, or Absent where allowed. The error wraps ErrInvalid.
func ValidateIfHash(ifHash string, allowAbsent bool) error {
	if ifHash == "" || (ifHash == Absent && allowAbsent) {
		return nil
	}
	if ifHash == Absent {
		return fmt.Errorf("%w: Absent is not a condition for a delete", ErrInvalid)
	}
	return checkName("if-hash", ifHash, MaxHashLen, false)
}

// ValidateWorkflowName reports whether name may be passed to
// Store.GetWorkflow, Store.DeleteWorkflow and Store.CountVersions: the
// rules of WorkflowDef.Name. The error wraps ErrInvalid.
func ValidateWorkflowName(name string) error {
	return checkName("workflow", name, MaxWorkflowLen, true)
}

// ValidateWorkflowVersion reports whether name and version may be passed
// to Store.GetWorkflow, Store.DeleteWorkflow (optional: version "" means
// the current one, or every one) or Store.SetCurrentWorkflow (required):
// the rules of WorkflowDef.Name and WorkflowDef.Version. The error wraps
// ErrInvalid.
func ValidateWorkflowVersion(name, version string, optional bool) error {
	if err := ValidateWorkflowName(name); err != nil {
		return err
	}
	if version == "" && optional {
		return nil
	}
	if err := checkName("version", version, MaxVersionLen, true); err != nil {
		return fmt.Errorf("workflow %q: %w", name, err)
	}
	return nil
}
