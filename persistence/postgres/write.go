package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// Write applies changes in one transaction, acknowledged when PostgreSQL
// has committed it (with synchronous_commit on, when its WAL is flushed).
//
// The server's journal already gathers many handlers' changes into one
// Write, so a Write is one commit however many changes it holds, and it
// costs two round trips however many rows it touches: the first begins
// the transaction and locks the stored rows the changes name (handlers,
// then tasks, each in id order, so concurrent Writes cannot deadlock);
// the preconditions (Fence, Create, IfOwner, record sequence numbers,
// task ownership) are then checked here, in order, against what was read plus
// the earlier changes, exactly as bolt applies changes one after the
// other; the second round trip sends the net result, one multi-row
// statement per kind of row (handlers, snapshots, records, timers, wait
// keys, tasks) built from arrays, then COMMIT, as one pipeline. A failed
// precondition rolls back and fails the whole Write: nothing is applied.
func (s *Store) Write(ctx context.Context, changes ...persistence.Change) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := persistence.ValidateChanges(changes); err != nil {
		return fmt.Errorf("postgres: write: %w", err)
	}
	if len(changes) == 0 {
		return nil
	}
	cctx, cancel := s.commitContext(ctx)
	defer cancel()
	if err := s.write(cctx, changes); err != nil {
		return fmt.Errorf("postgres: write: %w", s.classify(ctx, err))
	}
	return nil
}

func (s *Store) write(ctx context.Context, changes []persistence.Change) error {
	return s.inTx(ctx, func(conn *pgxpool.Conn) error { return s.writeOn(ctx, conn, changes) })
}

// writeOn runs a Write's transaction on conn.
func (s *Store) writeOn(ctx context.Context, conn *pgxpool.Conn, changes []persistence.Change) error {
	w := newWriteSet(changes)
	if err := w.lock(ctx, conn); err != nil {
		return err
	}
	for i := range changes {
		if err := w.apply(&changes[i]); err != nil {
			return fmt.Errorf("change %d: %w", i, err)
		}
	}
	b, err := w.statements()
	if err != nil {
		return err
	}
	if s.shared() {
		queueNotices(b, s.channel, changes, w) // the commit feed (feednotify.go)
	}
	if err := commitBatch(ctx, conn, b); err != nil {
		if isStatementError(err) {
			return w.mapStatementError(err)
		}
		// The pipeline, COMMIT included, went out and its answer was
		// lost: the transaction may have committed.
		return s.commitOutcome(w.txid, w.serverStart, err)
	}
	return nil
}

// commitBatch sends b, which ends in COMMIT, and reads every result.
func commitBatch(ctx context.Context, conn *pgxpool.Conn, b *pgx.Batch) error {
	n := b.Len()
	br := conn.SendBatch(ctx, b)
	for i := 0; i < n-1; i++ {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return err
		}
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if tag.String() != "COMMIT" {
		return &pgconn.PgError{Code: "25P02", Message: fmt.Sprintf("transaction ended with %q, not COMMIT", tag.String())}
	}
	return nil
}

// handlerState is one handler of a Write: as stored (and locked) when the
// Write began, and as the changes so far leave it.
type handlerState struct {
	stored     bool
	storedMeta []byte
	old        persistence.Handler
	oldErr     error // why the stored metadata cannot be decoded

	exists  bool
	lastSeq uint64
	// revision is the handler's, as stored or, once a change of this
	// Write touched it, this Write's (IfRevision of a later change).
	revision uint64
	// wiped: the stored handler is deleted by some change of the Write
	// (its rows go before the handler is written again, if it is).
	wiped bool
	final *persistence.Handler // the metadata to store; nil: none
	// create: a Create change made final, so it is inserted without
	// ON CONFLICT: a concurrent creator's row fails it with ErrExists.
	create  bool
	snap    []byte
	records []persistence.Record
}

// current is the handler as the earlier changes of the Write leave it
// (or as stored), for the next change's preconditions; err says why the
// stored metadata cannot be decoded when no change replaced it.
func (h *handlerState) current() (*persistence.Handler, error) {
	switch {
	case h.final != nil:
		return h.final, nil
	case h.oldErr != nil:
		return nil, h.oldErr
	default:
		return &h.old, nil
	}
}

// taskState is one task a change upserts, or a stored task of a handler a
// change deletes.
type taskState struct {
	stored        bool
	storedHandler string
	storedMeta    []byte

	exists  bool
	handler string
	final   *persistence.Task // the task to store; nil: none
}

type writeSet struct {
	txid int64 // the transaction's id, to learn its outcome if COMMIT's answer is lost
	// serverStart is when the database server started (commitOutcome).
	serverStart time.Time
	handlers    map[string]*handlerState
	tasks       map[string]*taskState
	ids         []string            // handler ids, sorted
	taskIDs     []string            // ids of upserted tasks, sorted
	deleteIDs   []string            // ids of handlers some change deletes, sorted
	fencedIDs   []string            // ids of handlers some change fences, sorted
	freeIDs     []string            // ids of handlers whose lease a change frees, sorted
	leases      map[string]leaseRow // the stored leases of fencedIDs
}

func newWriteSet(changes []persistence.Change) *writeSet {
	w := &writeSet{handlers: map[string]*handlerState{}, tasks: map[string]*taskState{}}
	for i := range changes {
		c := &changes[i]
		if _, ok := w.handlers[c.Handler.ID]; !ok {
			w.handlers[c.Handler.ID] = &handlerState{}
			w.ids = append(w.ids, c.Handler.ID)
		}
		if c.Delete {
			w.deleteIDs = append(w.deleteIDs, c.Handler.ID)
		}
		if c.FreeLease {
			w.freeIDs = append(w.freeIDs, c.Handler.ID)
		}
		if !c.Fence.IsZero() {
			w.fencedIDs = append(w.fencedIDs, c.Handler.ID)
		}
		for j := range c.Tasks {
			if _, ok := w.tasks[c.Tasks[j].ID]; !ok {
				w.tasks[c.Tasks[j].ID] = &taskState{}
				w.taskIDs = append(w.taskIDs, c.Tasks[j].ID)
			}
		}
	}
	slices.Sort(w.ids)
	slices.Sort(w.taskIDs)
	slices.Sort(w.deleteIDs)
	w.deleteIDs = slices.Compact(w.deleteIDs)
	slices.Sort(w.fencedIDs)
	w.fencedIDs = slices.Compact(w.fencedIDs)
	slices.Sort(w.freeIDs)
	w.freeIDs = slices.Compact(w.freeIDs)
	return w
}

// Statements of the first round trip.
const (
	// The transaction's id, and when the database server started: after
	// a restart, ids a crash left without WAL are handed out again, so an
	// id's status says nothing of a transaction that began before it
	// (commitOutcome).
	sqlTxID         = `SELECT txid_current(), pg_postmaster_start_time()`
	sqlLockHandlers = `SELECT id, meta, last_seq FROM wfd_handlers WHERE id = ANY($1) ORDER BY id FOR UPDATE`
	sqlLockTasks    = `SELECT id, handler_id, meta FROM wfd_tasks WHERE id = ANY($1) OR handler_id = ANY($2) ORDER BY id FOR UPDATE`
)

// lock begins the transaction and reads (locking) the stored handlers and
// tasks the changes name, the tasks of the handlers they delete, and the
// leases of the handlers they fence (lease.go).
func (w *writeSet) lock(ctx context.Context, conn *pgxpool.Conn) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(sqlTxID)
	b.Queue(sqlLockHandlers, w.ids)
	lockTasks := len(w.taskIDs) > 0 || len(w.deleteIDs) > 0
	if lockTasks {
		b.Queue(sqlLockTasks, w.taskIDs, w.deleteIDs)
	}
	if len(w.fencedIDs) > 0 {
		b.Queue(sqlLockLeases, w.fencedIDs)
	}
	br := conn.SendBatch(ctx, b)
	defer func() { _ = br.Close() }()
	if _, err := br.Exec(); err != nil {
		return err
	}
	if err := br.QueryRow().Scan(&w.txid, &w.serverStart); err != nil {
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	for rows.Next() {
		var (
			id   string
			meta []byte
			last int64
		)
		if err := rows.Scan(&id, &meta, &last); err != nil {
			return err
		}
		h := w.handlers[id]
		h.stored, h.exists, h.storedMeta, h.lastSeq = true, true, meta, seqFromDB(last)
		h.old, h.oldErr = codec.DecodeStoredHandler(id, meta)
		h.revision = h.old.Revision
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if lockTasks {
		if err := w.readTasks(br); err != nil {
			return err
		}
	}
	if len(w.fencedIDs) > 0 {
		if err := w.readLeases(br); err != nil {
			return err
		}
	}
	return br.Close()
}

// readTasks reads the result of sqlLockTasks.
func (w *writeSet) readTasks(br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	for rows.Next() {
		var (
			id, handler string
			meta        []byte
		)
		if err := rows.Scan(&id, &handler, &meta); err != nil {
			return err
		}
		t := w.tasks[id]
		if t == nil {
			t = &taskState{}
			w.tasks[id] = t
		}
		t.stored, t.exists, t.storedHandler, t.handler, t.storedMeta = true, true, handler, handler, meta
	}
	return rows.Err()
}

// readLeases reads the result of sqlLockLeases.
func (w *writeSet) readLeases(br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	w.leases = make(map[string]leaseRow, len(w.fencedIDs))
	for rows.Next() {
		var (
			id    string
			l     leaseRow
			token int64
		)
		if err := rows.Scan(&id, &l.owner, &token, &l.live); err != nil {
			return err
		}
		l.token = uint64(token)
		w.leases[id] = l
	}
	return rows.Err()
}

// apply checks one change against the state the earlier ones left and
// applies it to that state.
func (w *writeSet) apply(c *persistence.Change) error {
	id := c.Handler.ID
	h := w.handlers[id]
	if err := w.checkFence(id, c.Fence); err != nil {
		return err
	}
	cur, decodeErr := h.current()
	if err := c.CheckStored(h.exists, cur, h.revision, decodeErr); err != nil {
		return err
	}
	// Whatever the change does, a later change of this Write that read
	// the handler before it fails its IfRevision.
	h.revision = w.revision()
	if c.Delete {
		w.delete(h, id)
		return nil
	}
	if err := c.CheckRecords(h.lastSeq); err != nil {
		return err
	}
	if n := len(c.Records); n > 0 {
		h.records = append(h.records, c.Records...)
		h.lastSeq = c.Records[n-1].Seq
	}
	final := c.Handler
	final.LastSeq = h.lastSeq
	h.create = h.create || c.Create
	h.final, h.exists = &final, true
	if c.Snapshot != nil {
		h.snap = c.Snapshot
	}
	return w.upsertTasks(c.Tasks)
}

// delete applies a Delete of handler id, h: its rows go (if stored) with
// its tasks, and what earlier changes of the Write made of it.
func (w *writeSet) delete(h *handlerState, id string) {
	h.wiped = h.wiped || h.stored
	h.exists, h.lastSeq, h.final, h.snap, h.records, h.create = false, 0, nil, nil, nil, false
	for _, t := range w.tasks {
		if t.exists && t.handler == id {
			t.exists, t.final = false, nil
		}
	}
}

// upsertTasks applies a change's task upserts: a task stays with the
// handler it was stored (or upserted) under.
func (w *writeSet) upsertTasks(tasks []persistence.Task) error {
	for i := range tasks {
		t := &tasks[i]
		ts := w.tasks[t.ID]
		if ts.exists && ts.handler != t.HandlerID {
			return fmt.Errorf("task %q belongs to handler %q, not %q: %w", t.ID, ts.handler, t.HandlerID, persistence.ErrConflict)
		}
		ts.exists, ts.handler, ts.final = true, t.HandlerID, t
	}
	return nil
}

// revision is the Revision of what this Write changes: its transaction's
// id, which no other transaction of the database had or will have.
func (w *writeSet) revision() uint64 { return uint64(w.txid) }

// mapStatementError maps an error of the second round trip: a unique
// violation there means another process created a handler this Write
// creates, between the lock and the insert.
func (w *writeSet) mapStatementError(err error) error {
	if isUniqueViolation(err, "wfd_handlers_pkey") {
		return fmt.Errorf("%w: %w", persistence.ErrExists, err)
	}
	if isUniqueViolation(err, "") {
		return fmt.Errorf("%w: %w", persistence.ErrConflict, err)
	}
	return err
}
