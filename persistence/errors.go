package persistence

import (
	"errors"
	"fmt"
)

// Errors returned by every Store. Backends wrap them with context (the
// handler id, the cause), so compare with errors.Is, never with ==.
var (
	// ErrNotFound is returned when a handler, task, workflow definition
	// or schedule does not exist.
	ErrNotFound = errors.New("persistence: not found")

	// ErrExists is returned by a Change with Create set when the handler
	// already exists, by a create-only PutWorkflow (ifHash Absent)
	// when the definition does, and by CreateSchedule when the schedule
	// does.
	ErrExists = errors.New("persistence: already exists")

	// ErrConflict is returned when a write's precondition does not hold: the
	// stored Owner differs from Change.IfOwner or the Revision from
	// Change.IfRevision, the handler is finished (ErrFinished), an appended record's
	// sequence number is not greater than the handler's LastSeq, or a task
	// upsert names a task of another handler, or a stored workflow
	// definition's Hash differs from PutWorkflow's or DeleteWorkflow's
	// ifHash, or a stored schedule's Revision differs from
	// UpdateSchedule's expectRevision. It usually means another writer (or
	// replica) changed the handler, definition or schedule first.
	ErrConflict = errors.New("persistence: conflict")

	// ErrInvalid is returned for bad input: a Change, Query or page token
	// that breaks the rules documented on it. Retrying does not help.
	ErrInvalid = errors.New("persistence: invalid argument")

	// ErrUnindexed is returned by ListHandlers for a Query.Where that no
	// index answers (or an ordered listing of more than
	// MaxOrderedMatches): the store refuses rather than scan every
	// handler. The message says why. It wraps ErrInvalid.
	ErrUnindexed = fmt.Errorf("%w: the query needs an index", ErrInvalid)

	// ErrUnavailable is returned when the store cannot serve the request: it
	// is closed, or the underlying storage failed (I/O error, file lock). The
	// cause is wrapped. Retrying later, or on another replica, may succeed.
	ErrUnavailable = errors.New("persistence: unavailable")

	// ErrCorrupt is returned when a stored value cannot be decoded, which
	// concerns that value only: other handlers stay readable. A backend
	// also returns it when its file is damaged (persistence/bolt's
	// DamagedError): then it concerns what the damaged part holds, which
	// may be many handlers, and the file needs checking and restoring.
	ErrCorrupt = errors.New("persistence: corrupt data")

	// ErrFenced is returned when a Change's Fence no longer holds the
	// handler's lease: another replica took it over (or it was
	// released), so this replica must stop writing the handler. It wraps
	// ErrConflict.
	ErrFenced = fmt.Errorf("%w: fenced: the handler's lease is no longer this replica's", ErrConflict)

	// ErrFinished is returned when a Change other than Delete names a
	// handler whose stored status is terminal: a finished handler is
	// final in the store, whoever writes. It wraps ErrConflict.
	ErrFinished = fmt.Errorf("%w: the handler is finished", ErrConflict)
)

// UnindexedError is the ErrUnindexed of one query: Reason says why no
// index answers it, in words for the query's author.
type UnindexedError struct {
	Reason string
}

func (e *UnindexedError) Error() string { return "the query needs an index: " + e.Reason }

// Unwrap makes an UnindexedError an ErrUnindexed (and so an ErrInvalid).
func (e *UnindexedError) Unwrap() error { return ErrUnindexed }
