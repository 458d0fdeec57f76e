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
	}{Name: w.Name, External: slices.Sorted(slices.Values(w.External)), InputSchema: compactJSON(w.InputSchema), Timeout: w.Timeout}
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
