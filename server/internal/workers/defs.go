package workers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"

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

// LoadStored registers every stored definition with the engine.
func (r *Registry) LoadStored(ctx context.Context) error {
	defs, err := r.db.ListWorkflowDefs(ctx)
	if err != nil {
		// Corrupt entries are named in err; the others still load.
		if !errors.Is(err, persistence.ErrCorrupt) {
			return fmt.Errorf("listing stored workflow definitions: %w", err)
		}
		r.log.Error("some stored workflow definitions cannot be read", "err", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sd := range defs {
		r.registerStored(sd)
	}
	return nil
}

// store stores a registered definition: a new one (replaces == "") only
// if none is stored under the name, a replacement only if the stored one
// is still the one of hash replaces. Another stored definition is
// refused, as a changed definition is.
// owner is the subject the workflow belongs to (the first registrant); a racing
// registration that stored it first is checked as owners checked the
// stored ones.
func (r *Registry) store(ctx context.Context, d *wfdv1.WorkflowDefinition, g registrant, owner, replaces string) error {
	b, hash, err := encodeDefinition(d)
	if err != nil {
		return err
	}
	now := r.opts.Now()
	ifHash := persistence.Absent
	if replaces != "" {
		ifHash = replaces
	}
	err = r.db.PutWorkflow(ctx, persistence.WorkflowDef{Name: d.GetName(), Version: hash[:16], Current: true, Hash: hash, Def: b, CreatedAt: now, UpdatedAt: now,
		Source: truncate(g.source, persistence.MaxSourceLen), Owner: owner}, ifHash)
	if errors.Is(err, persistence.ErrExists) || errors.Is(err, persistence.ErrConflict) {
		old, gerr := r.db.GetWorkflow(ctx, d.GetName(), "")
		if gerr != nil {
			return fmt.Errorf("reading the stored definition of %q: %w", d.GetName(), gerr)
		}
		if err := r.mayServe(g, d.GetName(), old.Owner); err != nil {
			return err
		}
		if old.Hash == hash {
			return nil
		}
		return fmt.Errorf("%w: workflow %q is stored with another definition; use a new name to serve both", apierr.ErrFailedPrecondition, d.GetName())
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
