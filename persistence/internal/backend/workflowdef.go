package backend

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// PrepareWorkflowDef checks a PutWorkflow call and returns def's stored
// form, encoded once, before any transaction: the caller may reuse
// def.Def once PutWorkflow returns, and a transaction may run again. The
// times are stored in UTC.
func PrepareWorkflowDef(def persistence.WorkflowDef, ifHash string) ([]byte, error) {
	if err := def.Validate(); err != nil {
		return nil, fmt.Errorf("put workflow: %w", err)
	}
	if err := persistence.ValidateIfHash(ifHash, true); err != nil {
		return nil, fmt.Errorf("put workflow %q: %w", def.Name, err)
	}
	def.CreatedAt, def.UpdatedAt = def.CreatedAt.UTC(), def.UpdatedAt.UTC()
	enc, err := codec.EncodeWorkflowDef(&def)
	if err != nil {
		return nil, fmt.Errorf("put workflow %q: %w", def.Name, err)
	}
	return enc, nil
}

// CheckDeleteWorkflow checks a DeleteWorkflow call. A condition needs a
// version: the versions of a name have hashes of their own.
func CheckDeleteWorkflow(name, version, ifHash string) error {
	if err := persistence.ValidateWorkflowVersion(name, version, true); err != nil {
		return fmt.Errorf("delete workflow: %w", err)
	}
	if err := persistence.ValidateIfHash(ifHash, false); err != nil {
		return fmt.Errorf("delete workflow %q: %w", name, err)
	}
	if version == "" && ifHash != "" {
		return fmt.Errorf("delete workflow %q: %w: a condition on the hash needs a version", name, persistence.ErrInvalid)
	}
	return nil
}

// CheckIfHash checks ifHash, the condition of a PutWorkflow or (del) a
// DeleteWorkflow, against the definition stored under name (and the
// version the call names; name is what errors say): exists says
// whether one is stored, and hash returns its Hash. hash is called only
// when the condition needs it, and its error (a stored value that cannot
// be decoded) fails a conditional call; an unconditional one goes
// through, which is how an operator's tool replaces or removes such a
// value. A delete needs a stored definition whatever ifHash says.
func CheckIfHash(name, ifHash string, del, exists bool, hash func() (string, error)) error {
	switch {
	case !exists && (del || (ifHash != "" && ifHash != persistence.Absent)):
		return fmt.Errorf("workflow %q: %w", name, persistence.ErrNotFound)
	case exists && ifHash == persistence.Absent:
		return fmt.Errorf("workflow %q: %w", name, persistence.ErrExists)
	case !exists || ifHash == "":
		return nil
	}
	stored, err := hash()
	if err != nil {
		return err
	}
	if stored != ifHash {
		return HashConflict(name, stored, ifHash)
	}
	return nil
}

// HashConflict is the error of a condition ifHash that a stored
// definition of name, whose Hash is stored, does not meet.
func HashConflict(name, stored, ifHash string) error {
	return fmt.Errorf("%w: workflow %q has hash %q, not %q", persistence.ErrConflict, name, stored, ifHash)
}

// SortWorkflowDefs puts defs in ListWorkflowDefs' order: by Name (bytes),
// then CreatedAt, then Version, so that a name's versions list oldest
// first whatever their names, which callers choose.
func SortWorkflowDefs(defs []persistence.WorkflowDef) {
	slices.SortStableFunc(defs, func(a, b persistence.WorkflowDef) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Version, b.Version)
	})
}
