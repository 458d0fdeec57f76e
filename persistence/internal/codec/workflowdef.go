package codec

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	storagev1 "github.com/wfd-dev/wfd/internal/gen/wfd/storage/v1"
	"github.com/wfd-dev/wfd/persistence"
)

// WorkflowDefVersion is the WorkflowDef encoding version this package
// writes. Versions of workflows (workflow_version, current) were added
// as new fields, not a new encoding version: a record written before
// them decodes with Version "" and Current false.
const WorkflowDefVersion = 1

// EncodeWorkflowDef returns the stored form of d. It does not validate d.
func EncodeWorkflowDef(d *persistence.WorkflowDef) ([]byte, error) {
	m := &storagev1.WorkflowDef{
		Version:   WorkflowDefVersion,
		Name:      d.Name,
		Hash:      d.Hash,
		Def:       d.Def,
		CreatedAt: timestamp(d.CreatedAt),
		UpdatedAt: timestamp(d.UpdatedAt),
		Source:    d.Source,
		Owner:     d.Owner,

		WorkflowVersion: d.Version,
		Current:         d.Current,
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode workflow %q: %w", d.Name, err)
	}
	return b, nil
}

// DecodeWorkflowDef parses the stored form of a workflow definition.
// Anything that is not a valid WorkflowDef of a known version that
// PutWorkflow would accept fails with an error wrapping
// persistence.ErrCorrupt, except that Version may be "": a record written
// before versions existed, which the backends' migrations read to
// rewrite. It never panics.
func DecodeWorkflowDef(b []byte) (persistence.WorkflowDef, error) {
	var m storagev1.WorkflowDef
	if err := proto.Unmarshal(b, &m); err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("%w: workflow definition: %w", persistence.ErrCorrupt, err)
	}
	if m.Version != WorkflowDefVersion {
		return persistence.WorkflowDef{}, fmt.Errorf("%w: workflow definition: unknown version %d", persistence.ErrCorrupt, m.Version)
	}
	d := persistence.WorkflowDef{Name: m.Name, Version: m.WorkflowVersion, Current: m.Current,
		Hash: m.Hash, Def: m.Def, Source: m.Source, Owner: m.Owner}
	var err error
	if d.CreatedAt, err = fromTimestamp(m.CreatedAt); err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("%w: workflow definition %q: created_at: %w", persistence.ErrCorrupt, m.Name, err)
	}
	if d.UpdatedAt, err = fromTimestamp(m.UpdatedAt); err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("%w: workflow definition %q: updated_at: %w", persistence.ErrCorrupt, m.Name, err)
	}
	check := d
	if check.Version == "" {
		check.Version = "unversioned" // a record older than versions
	}
	if err := check.Validate(); err != nil {
		return persistence.WorkflowDef{}, fmt.Errorf("%w: workflow definition: %w", persistence.ErrCorrupt, err)
	}
	return d, nil
}
