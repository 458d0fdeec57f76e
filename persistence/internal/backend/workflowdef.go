package backend

import (
	"fmt"

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

// CheckDeleteWorkflow checks a DeleteWorkflow call.
func CheckDeleteWorkflow(name, ifHash string) error {
	if err := persistence.ValidateWorkflowName(name); err != nil {
		return fmt.Errorf("delete workflow: %w", err)
	}
	if err := persistence.ValidateIfHash(ifHash, false); err != nil {
		return fmt.Errorf("delete workflow %q: %w", name, err)
	}
	return nil
}

// CheckIfHash checks ifHash, the condition of a PutWorkflow or (del) a
// DeleteWorkflow, against the definition stored under name: exists says
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
