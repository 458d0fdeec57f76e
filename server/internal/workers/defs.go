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

// encodeDefinition is d as stored, with its content hash. make_current is
// what a registration asks for, not part of the version: it is left out.
func encodeDefinition(d *wfdv1.WorkflowDefinition) ([]byte, string, error) {
	if d.GetMakeCurrent() {
		d = proto.CloneOf(d)
		d.MakeCurrent = false
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(d)
	if err != nil {
		return nil, "", fmt.Errorf("encoding workflow %q: %w", d.GetName(), err)
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:]), nil
}

// LoadStored registers every stored version with the engine, oldest
// first, each workflow's current one current.
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

// store stores a new version, create-only. Another definition stored
// under the same version meanwhile (another replica's worker) is refused
// as checkDef refuses it; the same one is fine. owner is the subject the
// workflow belongs to (the first registrant); a racing registration that
// stored it first is checked as owners checked the stored ones.
func (r *Registry) store(ctx context.Context, a addedDef, g registrant, owner string) error {
	b, hash, err := encodeDefinition(a.d)
	if err != nil {
		return err
	}
	name := a.d.GetName()
	now := r.opts.Now()
	err = r.db.PutWorkflow(ctx, persistence.WorkflowDef{Name: name, Version: a.version, Hash: hash, Def: b, CreatedAt: now, UpdatedAt: now,
		Source: truncate(g.source, persistence.MaxSourceLen), Owner: owner, Current: a.current}, persistence.Absent)
	if errors.Is(err, persistence.ErrExists) {
		old, gerr := r.db.GetWorkflow(ctx, name, a.version)
		if gerr != nil {
			return fmt.Errorf("reading the stored definition of %s@%s: %w", name, a.version, gerr)
		}
		if err := r.mayServe(g, name, old.Owner); err != nil {
			return err
		}
		if old.Hash == hash {
			return nil
		}
		return fmt.Errorf("%w: version %q of workflow %q is stored with another definition; a version never changes: "+
			"register the changed definition as a new version", apierr.ErrAlreadyExists, a.version, name)
	}
	if err != nil {
		return fmt.Errorf("storing the definition of %s@%s: %w", name, a.version, err)
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
