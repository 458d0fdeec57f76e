package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/persistence"
)

// Worker-registered definitions are stored (persistence.WorkflowDef, the
// wfd.v1.WorkflowDefinition encoded deterministically, its hex SHA-256 as
// the hash) and registered again at start-up, before handlers are
// recovered, so handlers of remote workflows restore, release and answer
// GetHandler before any worker is back.

// encodeDefinition is d as stored, with its content hash.
func encodeDefinition(d *wfdv1.WorkflowDefinition) ([]byte, string, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(d)
	if err != nil {
		return nil, "", fmt.Errorf("encoding workflow %q: %w", d.GetName(), err)
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:]), nil
}

// loadStored registers every stored definition with the engine.
func (r *workerRegistry) loadStored(ctx context.Context) error {
	defs, err := r.s.store.ListWorkflowDefs(ctx)
	if err != nil {
		// Corrupt entries are named in err; the others still load.
		if !errors.Is(err, persistence.ErrCorrupt) {
			return fmt.Errorf("listing stored workflow definitions: %w", err)
		}
		r.s.log.Error("some stored workflow definitions cannot be read", "err", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sd := range defs {
		r.registerStored(sd)
	}
	return nil
}

// registerStored registers a stored definition with the engine; false if
// it cannot be (said in the log). Callers hold r.mu.
func (r *workerRegistry) registerStored(sd persistence.WorkflowDef) bool {
	d := &wfdv1.WorkflowDefinition{}
	if err := proto.Unmarshal(sd.Def, d); err != nil {
		r.s.log.Error("stored workflow definition cannot be decoded", "workflow", sd.Name, "err", err)
		return false
	}
	w, err := r.workflowFromDefinition(d, sd.Hash)
	if err == nil {
		err = r.s.engine.Register(w)
	}
	if err != nil {
		// A built-in workflow of that name now, or stricter validation:
		// say so, and serve the rest.
		r.s.log.Error("stored workflow definition not registered", "workflow", sd.Name, "err", err)
		return false
	}
	r.defs[d.GetName()] = d
	return true
}

// definition is the hash of workflow name's definition if workers define
// it (false: built in, or unknown). In replica mode a worker may have
// defined it on another replica since this one started: the stored
// definition is registered here then, so that its handlers restore here
// too (rather than failing as of an unknown workflow) and its calls can
// be routed.
func (r *workerRegistry) definition(ctx context.Context, name string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.defs[name]; ok {
		_, hash, _ := encodeDefinition(d)
		return hash, true
	}
	if _, ok := r.s.engine.Workflow(name); ok || r.routeDB() == nil {
		return "", false
	}
	sd, err := r.s.store.GetWorkflow(ctx, name)
	if err != nil {
		if !errors.Is(err, persistence.ErrNotFound) {
			r.s.log.Warn("reading a stored workflow definition", "workflow", name, "err", err)
		}
		return "", false
	}
	if !r.registerStored(sd) {
		return "", false
	}
	r.s.log.Info("workflow definition registered by a worker of another replica", "workflow", name, "hash", sd.Hash)
	return sd.Hash, true
}

// store stores a registered definition: a new one (replaces == "") only
// if none is stored under the name, a replacement only if the stored one
// is still the one of hash replaces. Another stored definition is
// refused, as a changed definition is.
func (r *workerRegistry) store(ctx context.Context, d *wfdv1.WorkflowDefinition, source, replaces string) error {
	b, hash, err := encodeDefinition(d)
	if err != nil {
		return err
	}
	now := r.s.opts.Now()
	ifHash := persistence.Absent
	if replaces != "" {
		ifHash = replaces
	}
	err = r.s.store.PutWorkflow(ctx, persistence.WorkflowDef{Name: d.GetName(), Hash: hash, Def: b, CreatedAt: now, UpdatedAt: now,
		Source: truncate(source, persistence.MaxSourceLen)}, ifHash)
	if errors.Is(err, persistence.ErrExists) || errors.Is(err, persistence.ErrConflict) {
		old, gerr := r.s.store.GetWorkflow(ctx, d.GetName())
		if gerr != nil {
			return fmt.Errorf("reading the stored definition of %q: %w", d.GetName(), gerr)
		}
		if old.Hash == hash {
			return nil
		}
		return fmt.Errorf("%w: workflow %q is stored with another definition; use a new name to serve both", errFailedPrecondition, d.GetName())
	}
	if err != nil {
		return fmt.Errorf("storing the definition of %q: %w", d.GetName(), err)
	}
	return nil
}

// truncate cuts s to at most n bytes (for names shown to operators).
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
