package engine

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// DefinitionHash names a workflow definition by what it declares: its
// name, its steps (what each accepts and emits, its concurrency, retries
// and timeout), the types it takes from outside, its schemas and its
// timeout. Descriptions and code do not count: a change to a step's code
// that keeps what it declares is the same version. Defaults count as
// their values (Workers 0 and 1 are the same).
func DefinitionHash(w *Workflow) string {
	type step struct {
		Name           string
		Accepts, Emits []string
		Workers        int
		Retry          RetryPolicy
		Timeout        time.Duration
	}
	type event struct {
		Type   string
		Schema json.RawMessage `json:",omitempty"`
	}
	d := struct {
		Name        string
		Steps       []step
		External    []string
		Events      []event
		InputSchema json.RawMessage `json:",omitempty"`
		Timeout     time.Duration
		// Omitted when empty, so that the hashes of definitions made
		// before search attributes are unchanged.
		Attributes map[string]string `json:",omitempty"`
	}{Name: w.Name, External: slices.Sorted(slices.Values(w.External)), InputSchema: compactJSON(w.InputSchema), Timeout: w.Timeout,
		Attributes: w.Attributes.Declarations()}
	for _, s := range w.Steps {
		retry := s.Retry
		retry.MaxAttempts = max(retry.MaxAttempts, 1)
		d.Steps = append(d.Steps, step{Name: s.Name, Accepts: s.Accepts, Emits: s.Emits, Workers: max(s.Workers, 1), Retry: retry, Timeout: s.Timeout})
	}
	for _, e := range w.Events {
		d.Events = append(d.Events, event{Type: e.Type, Schema: compactJSON(e.Schema)})
	}
	slices.SortFunc(d.Events, func(a, b event) int { return cmp.Compare(a.Type, b.Type) })
	b, err := json.Marshal(d)
	if err != nil {
		panic(fmt.Sprintf("engine: encoding a definition to hash it: %v", err)) // plain data: cannot fail
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// compactJSON is raw JSON without insignificant space, so that a schema
// reformatted is the same version (nil for none or for what is not JSON,
// which Validate refuses anyway).
func compactJSON(raw []byte) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// versions are the registered versions of one workflow: each compiled
// once, in the order registered; current is the one new handlers start on.
type versions struct {
	byID    map[string]*compiled
	order   []string
	current string
}

// VersionMissingError says that a handler needs a version of its workflow
// that is not registered (it is ErrUnknownVersion).
type VersionMissingError struct {
	HandlerID, Workflow, Version string
}

func (e *VersionMissingError) Error() string {
	return fmt.Sprintf("handler %s runs %s@%s, which is not registered here", e.HandlerID, e.Workflow, e.Version)
}

// Unwrap makes it ErrUnknownVersion.
func (e *VersionMissingError) Unwrap() error { return ErrUnknownVersion }

// RegisterVersion is Register that makes the version current only if
// current is set or it is the workflow's first: a worker may add a version
// that new handlers start on only once an operator promotes it.
func (e *Engine) RegisterVersion(w Workflow, current bool) error {
	c, err := compile(w)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	vs, ok := e.workflows[w.Name]
	if !ok {
		vs = &versions{byID: map[string]*compiled{}}
		e.workflows[w.Name] = vs
	}
	id := c.def.Version
	if _, ok := vs.byID[id]; ok {
		return fmt.Errorf("%w: %q version %q", ErrWorkflowExists, w.Name, id)
	}
	vs.byID[id] = c
	vs.order = append(vs.order, id)
	if current || vs.current == "" {
		vs.current = id
	}
	return nil
}

// Unregister drops a version of a workflow (the whole workflow with its
// last version): handlers of it are not restored again
// (VersionMissingError) unless it is registered again. The current version
// is dropped only with the workflow's last. The caller makes sure that no
// handler of it is in memory or waiting to be restored.
func (e *Engine) Unregister(workflow, version string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	vs, ok := e.workflows[workflow]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownWorkflow, workflow)
	}
	if _, ok := vs.byID[version]; !ok {
		return fmt.Errorf("%w: %s@%s", ErrUnknownVersion, workflow, version)
	}
	if len(vs.order) == 1 {
		delete(e.workflows, workflow)
		return nil
	}
	if vs.current == version {
		return fmt.Errorf("%w: %s@%s is the current version", ErrWorkflowExists, workflow, version)
	}
	delete(vs.byID, version)
	vs.order = slices.DeleteFunc(vs.order, func(id string) bool { return id == version })
	return nil
}

// SetCurrent makes version the one new handlers of workflow start on.
func (e *Engine) SetCurrent(workflow, version string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	vs, ok := e.workflows[workflow]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownWorkflow, workflow)
	}
	if _, ok := vs.byID[version]; !ok {
		return fmt.Errorf("%w: %s@%s", ErrUnknownVersion, workflow, version)
	}
	vs.current = version
	return nil
}

// Versions returns the registered versions of the workflow of that name,
// in the order registered (none for an unknown workflow), and which is
// current.
func (e *Engine) Versions(name string) (defs []Workflow, current string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	vs, ok := e.workflows[name]
	if !ok {
		return nil, ""
	}
	for _, id := range vs.order {
		defs = append(defs, vs.byID[id].def)
	}
	return defs, vs.current
}

// lookup returns version of the workflow of that name ("": the current
// one).
func (e *Engine) lookup(name, version string) (*compiled, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	vs, ok := e.workflows[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownWorkflow, name)
	}
	if version == "" {
		version = vs.current
	}
	c, ok := vs.byID[version]
	if !ok {
		return nil, fmt.Errorf("%w: %s@%s", ErrUnknownVersion, name, version)
	}
	return c, nil
}

// lookupRestore returns the version a stored handler runs: the one it
// started on, or for a checkpoint from before versions (version ""), the
// version registered first, which is the one such handlers started on as
// long as versions are registered oldest first.
func (e *Engine) lookupRestore(name, version string) (*compiled, error) {
	return e.lookup(name, e.PinnedVersion(name, version))
}

// PinnedVersion is the version a stored handler that records version runs:
// version, or for one from before versions (""), the workflow's version
// registered first ("" if none is registered).
func (e *Engine) PinnedVersion(name, version string) string {
	if version != "" {
		return version
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if vs, ok := e.workflows[name]; ok && len(vs.order) > 0 {
		return vs.order[0]
	}
	return ""
}
