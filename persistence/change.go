package persistence

import "fmt"

// Change is one handler's part of a Store.Write: new metadata plus,
// optionally, a new snapshot, records to append and tasks to upsert. All
// changes of one Write are applied together or not at all.
//
// The store does not keep the slices a Change refers to after Write returns.
type Change struct {
	// Handler is the new metadata, replacing the stored one (it is created
	// if absent, unless Create or IfOwner says otherwise). Index entries of
	// the previous metadata are replaced by those of the new one.
	Handler Handler
	// Snapshot replaces the stored snapshot; nil keeps the previous one.
	// An empty non-nil slice stores an empty snapshot.
	Snapshot []byte
	// Records are appended to the handler's stream. Their sequence numbers
	// must increase and the first must be greater than the stored LastSeq
	// (else ErrConflict). Handler.LastSeq becomes the last one's.
	Records []Record
	// IfOwner, if not nil, makes the change conditional: the stored
	// handler's Owner must equal *IfOwner, else the Write fails with
	// ErrConflict (or ErrNotFound if there is no stored handler).
	IfOwner *string
	// IfRevision, if not nil, makes the change conditional on the state
	// its writer read: the stored handler's Revision must equal
	// *IfRevision, else the Write fails with ErrConflict (ErrNotFound if
	// there is no stored handler). A change derived from a read (start-up
	// recovery marking a handler released, a retention delete) sets it,
	// so that whatever another writer or replica committed since fails
	// the write instead of being overwritten. Within one Write, a change
	// after another of the same handler sees that change's new revision,
	// which its writer cannot know: it fails.
	IfRevision *uint64
	// Create requires that the handler does not exist yet, else the Write
	// fails with ErrExists.
	Create bool
	// Tasks are upserted: each is inserted, or replaces the stored task
	// with its ID as a whole (its index entries move with its status,
	// assignee and other indexed fields). Every task's HandlerID must be
	// Handler.ID, and a Change carries its handler's metadata even when
	// only tasks change (re-sending unchanged metadata is cheap: nothing
	// indexed changes). A task stored under another handler is not taken
	// over: the Write fails with ErrConflict.
	Tasks []Task
	// Fence, if not zero, makes the change conditional on the handler's
	// lease (Leaser): it must still be held by Fence.Replica with
	// Fence.Token and not have expired (by the database's clock), else
	// the whole Write fails with ErrFenced and nothing is applied: a
	// replica that was paused or cut off past its lease commits nothing
	// it did meanwhile, taken over or not. Stores without leases (bbolt)
	// refuse a fenced change with ErrInvalid.
	Fence Fence
	// FreeLease, with Fence, frees the lease in the same transaction
	// (Leaser.Release without a second commit): the change is the last
	// its replica makes of the handler, which leaves its memory
	// (released or finished), and the next Acquire by any replica
	// succeeds at once.
	FreeLease bool
	// Delete removes the handler: metadata, snapshot, records, tasks and
	// index entries. Only Handler.ID (and IfOwner, IfRevision) are used.
	// Deleting a handler that does not exist fails with ErrNotFound.
	//
	// A stored handler whose Status is terminal is final: Delete is the
	// only change it takes; any other fails the Write with ErrFinished,
	// so no record can follow its terminal one, whoever writes.
	Delete bool
}

// Validate reports whether c is well formed, without looking at stored
// state. The error wraps ErrInvalid.
func (c *Change) Validate() error {
	if c.FreeLease && c.Fence.IsZero() {
		return fmt.Errorf("%w: handler %q: FreeLease needs a Fence", ErrInvalid, c.Handler.ID)
	}
	if !c.Fence.IsZero() {
		if err := c.Fence.validate(c.Handler.ID); err != nil {
			return err
		}
	}
	if c.Delete {
		if c.Create || c.Snapshot != nil || len(c.Records) > 0 || len(c.Tasks) > 0 {
			return fmt.Errorf("%w: handler %q: Delete cannot be combined with Create, Snapshot, Records or Tasks", ErrInvalid, c.Handler.ID)
		}
		return checkName("handler id", c.Handler.ID, MaxIDLen, true)
	}
	if err := c.Handler.Validate(); err != nil {
		return err
	}
	if c.Create && (c.IfOwner != nil || c.IfRevision != nil) {
		// A handler that must not exist has no owner or revision to
		// compare with.
		return fmt.Errorf("%w: handler %q: Create cannot be combined with IfOwner or IfRevision", ErrInvalid, c.Handler.ID)
	}
	var prev uint64
	for i, r := range c.Records {
		if r.Seq <= prev {
			return fmt.Errorf("%w: handler %q: record %d has seq %d, not greater than %d", ErrInvalid, c.Handler.ID, i, r.Seq, prev)
		}
		prev = r.Seq
	}
	seen := make(map[string]struct{}, len(c.Tasks))
	for i := range c.Tasks {
		t := &c.Tasks[i]
		if err := t.Validate(); err != nil {
			return fmt.Errorf("handler %q: task %d: %w", c.Handler.ID, i, err)
		}
		if t.HandlerID != c.Handler.ID {
			return fmt.Errorf("%w: handler %q: task %q names handler %q", ErrInvalid, c.Handler.ID, t.ID, t.HandlerID)
		}
		if _, dup := seen[t.ID]; dup {
			return fmt.Errorf("%w: handler %q: task %q appears twice", ErrInvalid, c.Handler.ID, t.ID)
		}
		seen[t.ID] = struct{}{}
	}
	return nil
}

// CheckStored checks c's preconditions on the handler it changes, as the
// earlier changes of the same Write leave it: exists says whether there
// is one; if there is, it is stored at revision, or, when its metadata
// cannot be decoded, decodeErr says why (stored is then ignored). It
// checks that a Create finds no handler (ErrExists) and that a Delete or
// a conditional change finds one (ErrNotFound), IfOwner and IfRevision,
// and that a finished handler takes no change but Delete (ErrFinished).
// Metadata that cannot be decoded fails a conditional change and lets
// another through (which overwrites or deletes it, repairing the
// handler). Every backend applies it, so the rules are one.
func (c *Change) CheckStored(exists bool, stored *Handler, revision uint64, decodeErr error) error {
	id := c.Handler.ID
	switch {
	case c.Create && exists:
		return fmt.Errorf("handler %q: %w", id, ErrExists)
	case !exists && (c.Delete || c.IfOwner != nil || c.IfRevision != nil):
		return fmt.Errorf("handler %q: %w", id, ErrNotFound)
	case !exists:
		return nil
	}
	if decodeErr != nil {
		if c.IfOwner != nil || c.IfRevision != nil {
			return decodeErr
		}
		return nil
	}
	switch {
	case c.IfOwner != nil && stored.Owner != *c.IfOwner:
		return fmt.Errorf("handler %q is owned by %q, not %q: %w", id, stored.Owner, *c.IfOwner, ErrConflict)
	case c.IfRevision != nil && revision != *c.IfRevision:
		return fmt.Errorf("handler %q is at revision %d, not %d: it changed since it was read: %w", id, revision, *c.IfRevision, ErrConflict)
	case !c.Delete && stored.Status.Terminal():
		return fmt.Errorf("handler %q is %s: %w", id, stored.Status, ErrFinished)
	}
	return nil
}

// CheckRecords checks that c's records follow lastSeq, the sequence
// number of the handler's last record as the earlier changes of the same
// Write leave it (ErrConflict if the first does not).
func (c *Change) CheckRecords(lastSeq uint64) error {
	if len(c.Records) > 0 {
		if first := c.Records[0].Seq; first <= lastSeq {
			return fmt.Errorf("handler %q: record seq %d is not after last seq %d: %w", c.Handler.ID, first, lastSeq, ErrConflict)
		}
	}
	return nil
}

// ValidateChanges validates every change of a Write (Change.Validate).
// The error names the first invalid change and wraps ErrInvalid.
func ValidateChanges(changes []Change) error {
	for i := range changes {
		if err := changes[i].Validate(); err != nil {
			return fmt.Errorf("change %d: %w", i, err)
		}
	}
	return nil
}
