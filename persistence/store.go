package persistence

import (
	"context"
	"time"
)

// Store keeps handlers, their human tasks, the published-event log,
// workflow definitions and workflow schedules durable: the five kinds of
// thing its users need, each an interface of its own (Handlers with
// HandlerVersions, Tasks, PublishedLog, WorkflowDefs, Schedules), so that
// code that needs one kind can ask for that one.
// Implementations are safe for concurrent use.
//
// Every method checks ctx before it starts; a Write that has been handed to
// the storage engine completes (or fails) regardless of ctx, because the
// caller could not tell a cancelled write from a committed one otherwise.
//
// Errors wrap the sentinels of this package: ErrNotFound, ErrExists,
// ErrConflict, ErrInvalid, ErrUnavailable (closed store, I/O failure) and
// ErrCorrupt (a stored value that cannot be decoded), or ctx's error.
//
// A store of several replicas may implement Leaser (with Claimer) and
// WorkerRoutes too; users find them by type assertion.
type Store interface {
	Handlers
	HandlerVersions
	Tasks
	PublishedLog
	WorkflowDefs
	Schedules
	Slots

	// Count returns how many handlers there are, by status and residency,
	// and how many tasks, by status.
	Count(ctx context.Context) (Counts, error)

	// Close releases the store. Calls after Close fail with
	// ErrUnavailable; closing twice is a no-op.
	Close() error
}

// Handlers keeps handlers: each one's metadata, latest snapshot and
// stream of records, the indexes derived from its metadata, and, written
// with it, its human tasks (read through Tasks).
type Handlers interface {
	// Write applies all changes in one atomic commit, durable when Write
	// returns nil. If any change fails (a precondition, invalid input),
	// none is applied. Concurrent Writes share commits, and one caller's
	// failing precondition does not fail the others.
	Write(ctx context.Context, changes ...Change) error

	// GetHandler returns a handler's metadata.
	GetHandler(ctx context.Context, id string) (Handler, error)

	// LoadHandler returns a handler's metadata and its latest snapshot as
	// one consistent read: what waking a released handler needs. The
	// snapshot is nil if none was ever written; a handler that does not
	// exist is ErrNotFound.
	LoadHandler(ctx context.Context, id string) (Handler, []byte, error)

	// LoadSnapshot returns a handler's latest snapshot. It returns
	// ErrNotFound if the handler does not exist, and nil with no error if
	// the handler exists but no snapshot was ever written.
	LoadSnapshot(ctx context.Context, id string) ([]byte, error)

	// ListHandlers returns handlers matching q, newest first, and a token
	// for the next page ("" when there is none). Filters are answered from
	// indexes. If some listed handlers cannot be decoded, it returns the
	// others, the next page token, and an error wrapping ErrCorrupt that
	// names them.
	ListHandlers(ctx context.Context, q Query) (handlers []Handler, nextPageToken string, err error)

	// ReadRecords returns up to limit records of a handler's stream with
	// Seq > afterSeq, in order. limit <= 0 means DefaultRecordLimit.
	ReadRecords(ctx context.Context, id string, afterSeq uint64, limit int) ([]Record, error)

	// DueTimers returns up to limit timers (waiter deadlines and handler
	// Deadlines) due at or before before, earliest first (ties by handler
	// id, then waiter id).
	// limit <= 0 means DefaultScanLimit.
	DueTimers(ctx context.Context, before time.Time, limit int) ([]Timer, error)

	// WaitingFor returns up to limit ids of handlers with a waiter whose
	// Key is key, in id order, each once. limit <= 0 means
	// DefaultScanLimit.
	WaitingFor(ctx context.Context, key string, limit int) ([]string, error)

	// LongestIdle returns up to limit idle handlers whose IdleSince is at
	// or before before, longest idle first: the candidates for release
	// after an idle timeout. limit <= 0 means DefaultScanLimit.
	LongestIdle(ctx context.Context, before time.Time, limit int) ([]Idle, error)

	// FinishedBefore returns up to limit finished handlers (completed,
	// failed or cancelled) whose CompletedAt is at or before before,
	// oldest first (ties by id), starting after the position after (nil:
	// from the oldest): the candidates for deletion after a retention
	// period. It is answered from an index. limit <= 0 means
	// DefaultScanLimit.
	FinishedBefore(ctx context.Context, before time.Time, after *Finished, limit int) ([]Finished, error)
}

// Tasks reads the human tasks of the inbox. Tasks are written with the
// handler that owns them (Change.Tasks, Handlers.Write) and deleted with
// it.
type Tasks interface {
	// GetTask returns a task (ErrNotFound if there is none with that id).
	GetTask(ctx context.Context, id string) (Task, error)

	// ListTasks returns tasks matching q, newest first (by CreatedAt, ties
	// by ID, both descending), and a token for the next page ("" when there
	// is none). Filters are answered from indexes. A token used with other
	// filters than the ones it was issued for fails with ErrInvalid. If
	// some listed tasks cannot be decoded, it returns the others, the next
	// page token, and an error wrapping ErrCorrupt that names them.
	ListTasks(ctx context.Context, q TaskQuery) (tasks []Task, nextPageToken string, err error)
}

// PublishedLog is the published-event log: immutable entries (Published),
// global or addressed to one handler, appended and never rewritten, which
// a handler that starts waiting for a key later can still find.
type PublishedLog interface {
	// Publish appends p to the published-event log and returns it with Seq
	// set, durable when Publish returns nil. Publish commits on its own
	// (it may share a commit with concurrent Writes and Publishes). If an
	// entry with p.ID exists, Publish changes nothing and returns that
	// entry as stored, whatever the rest of p says.
	Publish(ctx context.Context, p Published) (Published, error)

	// FindPublished returns the oldest entry (smallest At, ties by Seq)
	// with the given key, published at or after since, that is global or
	// addressed to handlerID (only global entries if handlerID is ""). ok
	// is false if there is none.
	FindPublished(ctx context.Context, key, handlerID string, since time.Time) (p Published, ok bool, err error)

	// PublishedAfter returns up to limit entries with Seq > afterSeq, in
	// Seq order. limit <= 0 means DefaultScanLimit. Entries that cannot be
	// decoded are left out and named by an error wrapping ErrCorrupt,
	// returned with the others.
	PublishedAfter(ctx context.Context, afterSeq uint64, limit int) ([]Published, error)

	// ListPublished returns entries of the published-event log matching
	// q, latest first (by At, ties by Seq, both descending), and a token
	// for the next page ("" when there is none). Filters are answered from
	// indexes. A token used with other filters than the ones it was issued
	// for fails with ErrInvalid. Entries that cannot be decoded are left
	// out and named by an error wrapping ErrCorrupt, returned with the
	// others and the next page token.
	ListPublished(ctx context.Context, q PublishedQuery) (entries []Published, nextPageToken string, err error)
}

// WorkflowDefs keeps workflow definitions (WorkflowDef) by name and
// version: each version is immutable in what it runs (a handler that
// started on a version keeps running it), and one version per name is
// current, the one new handlers start on. Each put, delete or change of
// the current version is a commit of its own, conditional on the Hash of
// the stored version where it says so.
type WorkflowDefs interface {
	// PutWorkflow stores def under (def.Name, def.Version) in a commit of
	// its own (it may share one with concurrent writes). ifHash makes it
	// conditional on that version's stored record: "" puts whatever is
	// stored; Absent requires that no such version is stored (else
	// ErrExists); any other value requires a stored version whose Hash is
	// ifHash (ErrNotFound if none is stored, ErrConflict if its Hash
	// differs). Of concurrent puts with the same condition, one wins.
	//
	// If def.Current, every other version of def.Name stops being current
	// in the same commit, so a name never has two current versions. If
	// not, def is stored as given, even when no version of the name is
	// current: the caller decides which version is.
	PutWorkflow(ctx context.Context, def WorkflowDef, ifHash string) error

	// GetWorkflow returns version of name; version "" returns the current
	// one. It is ErrNotFound if that version is not stored, or (version "")
	// if no version of name is stored or none is current.
	GetWorkflow(ctx context.Context, name, version string) (WorkflowDef, error)

	// ListWorkflowDefs returns every stored version of every workflow, by
	// Name, then CreatedAt, then Version. There is no paging: a server has
	// few definitions (a few versions per remote workflow). If some cannot
	// be decoded, it returns the others and an error wrapping ErrCorrupt
	// that names them.
	ListWorkflowDefs(ctx context.Context) ([]WorkflowDef, error)

	// SetCurrentWorkflow makes version the current version of name, and no
	// other, in one commit: a rollback to an older version, or a switch to
	// a version stored with Current false. It is ErrNotFound if that
	// version is not stored.
	SetCurrentWorkflow(ctx context.Context, name, version string) error

	// DeleteWorkflow removes version of name, or with version "" every
	// version of name (ErrNotFound if nothing is stored). If ifHash is not
	// "", the stored version's Hash must be ifHash, else ErrConflict; a
	// condition needs a version (ErrInvalid with version ""), since the
	// versions of a name have different hashes. Deleting the current
	// version leaves the name without one. Handlers of the workflow are
	// not touched.
	DeleteWorkflow(ctx context.Context, name, version, ifHash string) error
}

// Schedules keeps workflow schedules (Schedule) by id, with an index of
// the schedules that are due. Each create, update and delete is a commit
// of its own; an update is conditional on the revision its writer read,
// so that of several replicas planning the same tick exactly one records
// it.
type Schedules interface {
	// CreateSchedule stores s, which must not exist (else ErrExists), and
	// returns it as stored, with its Revision.
	CreateSchedule(ctx context.Context, s Schedule) (Schedule, error)

	// GetSchedule returns the schedule id (ErrNotFound if there is none).
	GetSchedule(ctx context.Context, id string) (Schedule, error)

	// ListSchedules returns up to pageSize schedules (SchedulePageSize)
	// in id order (bytes), after the position pageToken carries ("": from
	// the first), and the token of the next page ("" when there is none).
	// A token of another listing fails with ErrInvalid. If some listed
	// schedules cannot be decoded, it returns the others, the next page
	// token, and an error wrapping ErrCorrupt that names them.
	ListSchedules(ctx context.Context, pageSize int, pageToken string) (schedules []Schedule, nextPageToken string, err error)

	// UpdateSchedule replaces the stored schedule s.ID by s if its
	// Revision is expectRevision, and returns s as stored, with its new
	// Revision. It fails with ErrNotFound if there is no such schedule
	// and with ErrConflict if its Revision differs: another writer
	// changed it (or deleted and created it again) since expectRevision
	// was read. Of concurrent updates with the same expectRevision,
	// exactly one succeeds. The index of due schedules moves with
	// NextTick and Paused in the same commit.
	UpdateSchedule(ctx context.Context, s Schedule, expectRevision uint64) (Schedule, error)

	// DeleteSchedule removes the schedule id and its index entry
	// (ErrNotFound if there is none). Handlers it started are not
	// touched.
	DeleteSchedule(ctx context.Context, id string) error

	// DueSchedules returns up to limit schedules that are not Paused and
	// whose NextTick is not zero and at or before before, earliest
	// NextTick first (ties by id), answered from an index. limit <= 0
	// means DefaultScanLimit. Schedules that cannot be decoded are left
	// out and named by an error wrapping ErrCorrupt, returned with the
	// others.
	DueSchedules(ctx context.Context, before time.Time, limit int) ([]Schedule, error)
}

// HandlerVersions answers, from the indexes, which versions of a workflow
// the stored handlers run: what an operator checks before deleting a
// version, without reading every handler's metadata.
type HandlerVersions interface {
	// CountVersions counts the handlers of workflow by WorkflowVersion,
	// Status and Residency, sorted by those three; combinations with no
	// handler are left out. Handlers stored before versions count under
	// version "". It reads index keys only, so a handler whose metadata
	// cannot be decoded is still counted as last written.
	CountVersions(ctx context.Context, workflow string) ([]VersionCount, error)
	// RunningVersions lists the versions of workflow that running
	// handlers run, sorted ("": handlers stored before versions). Unlike
	// CountVersions its cost does not grow with the handlers: it reads a
	// few index keys per version, which is what start-up can afford with
	// a million released handlers in the store.
	RunningVersions(ctx context.Context, workflow string) ([]string, error)
}

// Default limits for Store methods that take a limit.
const (
	DefaultRecordLimit = 1000
	DefaultScanLimit   = 1000
)
