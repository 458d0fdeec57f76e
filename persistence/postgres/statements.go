package postgres

import (
	"bytes"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// Statements of a Write's second round trip. Each takes its rows as
// arrays (unnest), so one statement writes any number of rows.
const (
	sqlWipeTasks     = `DELETE FROM wfd_tasks WHERE handler_id = ANY($1)`
	sqlWipeRecords   = `DELETE FROM wfd_records WHERE handler_id = ANY($1)`
	sqlWipeSnapshots = `DELETE FROM wfd_snapshots WHERE handler_id = ANY($1)`
	sqlWipeTimers    = `DELETE FROM wfd_timers WHERE handler_id = ANY($1)`
	sqlWipeWaitKeys  = `DELETE FROM wfd_wait_keys WHERE handler_id = ANY($1)`
	sqlWipeHandlers  = `DELETE FROM wfd_handlers WHERE id = ANY($1)`
	sqlWipeAttrs     = `DELETE FROM wfd_handler_attrs WHERE handler_id = ANY($1)`

	sqlInsertHandlers = `INSERT INTO wfd_handlers (id, workflow, status, residency, owner, created_at, created_ns,
		idle_since, idle_ns, completed_at, completed_ns, last_seq, meta, workflow_version)
	SELECT * FROM unnest($1::text[], $2::text[], $3::int2[], $4::int2[], $5::text[], $6::timestamptz[], $7::int2[],
		$8::timestamptz[], $9::int2[], $10::timestamptz[], $11::int2[], $12::int8[], $13::bytea[], $14::text[])`
	sqlPutHandlers = sqlInsertHandlers + `
	ON CONFLICT (id) DO UPDATE SET workflow = excluded.workflow, status = excluded.status,
		residency = excluded.residency, owner = excluded.owner, created_at = excluded.created_at,
		created_ns = excluded.created_ns, idle_since = excluded.idle_since, idle_ns = excluded.idle_ns,
		completed_at = excluded.completed_at, completed_ns = excluded.completed_ns,
		last_seq = excluded.last_seq, meta = excluded.meta, workflow_version = excluded.workflow_version`
	sqlPutAttrs = `INSERT INTO wfd_handler_attrs (handler_id, workflow, name, typ, str, num, ts, created_at, created_ns)
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int2[], $5::text[], $6::float8[], $7::timestamptz[],
		$8::timestamptz[], $9::int2[])`
	sqlPutSnapshots = `INSERT INTO wfd_snapshots (handler_id, data) SELECT * FROM unnest($1::text[], $2::bytea[])
	ON CONFLICT (handler_id) DO UPDATE SET data = excluded.data`
	sqlPutRecords = `INSERT INTO wfd_records (handler_id, seq, data) SELECT * FROM unnest($1::text[], $2::int8[], $3::bytea[])`

	sqlClearTimers = `DELETE FROM wfd_timers t USING unnest($1::text[], $2::text[]) AS d(h, w)
	WHERE t.handler_id = d.h AND t.waiter_id = d.w`
	sqlPutTimers = `INSERT INTO wfd_timers (handler_id, waiter_id, due_at, due_ns)
	SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int2[])
	ON CONFLICT (handler_id, waiter_id) DO UPDATE SET due_at = excluded.due_at, due_ns = excluded.due_ns`
	sqlClearWaitKeys = `DELETE FROM wfd_wait_keys k USING unnest($1::text[], $2::text[]) AS d(h, w)
	WHERE k.handler_id = d.h AND k.waiter_id = d.w`
	sqlPutWaitKeys = `INSERT INTO wfd_wait_keys (handler_id, waiter_id, key)
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
	ON CONFLICT (handler_id, waiter_id) DO UPDATE SET key = excluded.key`

	sqlPutTasks = `INSERT INTO wfd_tasks (id, handler_id, workflow, status, assignee, created_at, created_ns, meta)
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int2[], $5::text[], $6::timestamptz[], $7::int2[], $8::bytea[])
	ON CONFLICT (id) DO UPDATE SET handler_id = excluded.handler_id, workflow = excluded.workflow,
		status = excluded.status, assignee = excluded.assignee, created_at = excluded.created_at,
		created_ns = excluded.created_ns, meta = excluded.meta`
)

// statements returns the second round trip: the net effect of the
// changes, one statement per kind of row, then COMMIT.
func (w *writeSet) statements() (*pgx.Batch, error) {
	b := &pgx.Batch{}
	w.queueWipes(b)
	var hb handlerBatch
	for _, id := range w.ids {
		if h := w.handlers[id]; h.final != nil {
			if err := hb.add(w, id, h); err != nil {
				return nil, err
			}
		}
	}
	hb.queue(b)
	ts, err := w.taskRows()
	if err != nil {
		return nil, err
	}
	if len(ts.ids) > 0 {
		b.Queue(sqlPutTasks, ts.ids, ts.handlers, ts.workflows, ts.statuses, ts.assignees, ts.created, ts.createdNs, ts.metas)
	}
	b.Queue("COMMIT")
	return b, nil
}

// queueWipes queues the deletes that come first: every row of the
// handlers a change deletes (before any is written again), and the leases
// that go or are freed with them.
func (w *writeSet) queueWipes(b *pgx.Batch) {
	var wiped []string
	for _, id := range w.ids {
		if w.handlers[id].wiped {
			wiped = append(wiped, id)
		}
	}
	if len(wiped) > 0 {
		for _, sql := range []string{sqlWipeTasks, sqlWipeRecords, sqlWipeSnapshots, sqlWipeTimers, sqlWipeWaitKeys, sqlWipeAttrs, sqlWipeHandlers} {
			b.Queue(sql, wiped)
		}
	}
	if gone := w.goneIDs(); len(gone) > 0 {
		b.Queue(sqlDeleteLeases, gone) // lease.go
	}
	if len(w.freeIDs) > 0 {
		b.Queue(sqlFreeLeases, w.freeIDs) // lease.go
	}
}

// handlerBatch is the rows a Write stores for its handlers, gathered by
// kind, each kind one statement.
type handlerBatch struct {
	upserted handlerRows
	created  handlerRows // inserted
	snapIDs  []string
	snaps    [][]byte
	recs     recordRows
	timers   timerRows
	keys     waitKeyRows
	attrs    attrRows
}

// add adds the rows of handler id, h, whose final metadata is set.
func (hb *handlerBatch) add(w *writeSet, id string, h *handlerState) error {
	// A previous version of the handler whose rows are still there.
	prev := h.stored && !h.wiped
	changed := !prev || h.oldErr != nil || h.snap != nil || len(h.records) > 0
	enc, changed, err := backend.EncodeRevised(h.final, h.storedMeta, h.old.Revision, w.revision(), changed)
	if err != nil {
		return err
	}
	switch {
	case h.create && !prev:
		hb.created.add(h.final, enc)
	case changed:
		hb.upserted.add(h.final, enc)
	}
	if h.snap != nil {
		hb.snapIDs, hb.snaps = append(hb.snapIDs, id), append(hb.snaps, h.snap)
	}
	for _, r := range h.records {
		hb.recs.add(id, r)
	}
	var old *persistence.Handler
	switch {
	case prev && h.oldErr != nil:
		// Its entries are unknown: clear every waiter it may have had.
		hb.timers.clearAll = append(hb.timers.clearAll, id)
	case prev:
		old = &h.old
	}
	hb.timers.diff(old, h.final)
	hb.keys.diff(old, h.final)
	if !prev || h.oldErr != nil || !sameIndexedAttrs(&h.old, h.final) {
		// A handler this Write inserts (Create) has no rows: a concurrent
		// creator's would fail the insert. Any other may have some,
		// even one not stored when the Write began (a concurrent upsert).
		if prev || !h.create {
			hb.attrs.clear = append(hb.attrs.clear, id)
		}
		hb.attrs.add(h.final)
	}
	return nil
}

// queue queues the statements of the rows gathered.
func (hb *handlerBatch) queue(b *pgx.Batch) {
	if len(hb.timers.clearAll) > 0 {
		b.Queue(sqlWipeTimers, hb.timers.clearAll)
		b.Queue(sqlWipeWaitKeys, hb.timers.clearAll)
	}
	if len(hb.created.ids) > 0 {
		b.Queue(sqlInsertHandlers, hb.created.args()...)
	}
	if len(hb.upserted.ids) > 0 {
		b.Queue(sqlPutHandlers, hb.upserted.args()...)
	}
	if len(hb.snapIDs) > 0 {
		b.Queue(sqlPutSnapshots, hb.snapIDs, hb.snaps)
	}
	if len(hb.recs.ids) > 0 {
		b.Queue(sqlPutRecords, hb.recs.ids, hb.recs.seqs, hb.recs.data)
	}
	if t := &hb.timers; len(t.delH) > 0 {
		b.Queue(sqlClearTimers, t.delH, t.delW)
	}
	if t := &hb.timers; len(t.putH) > 0 {
		b.Queue(sqlPutTimers, t.putH, t.putW, t.due, t.dueNs)
	}
	if len(hb.keys.delH) > 0 {
		b.Queue(sqlClearWaitKeys, hb.keys.delH, hb.keys.delW)
	}
	if len(hb.keys.putH) > 0 {
		b.Queue(sqlPutWaitKeys, hb.keys.putH, hb.keys.putW, hb.keys.keys)
	}
	if len(hb.attrs.clear) > 0 {
		b.Queue(sqlWipeAttrs, hb.attrs.clear)
	}
	if len(hb.attrs.ids) > 0 {
		b.Queue(sqlPutAttrs, hb.attrs.args()...)
	}
}

// taskRows returns the rows of the tasks the Write upserts whose stored
// row changes.
func (w *writeSet) taskRows() (taskRows, error) {
	var ts taskRows
	for _, id := range w.taskIDs {
		t := w.tasks[id]
		if t.final == nil {
			continue
		}
		enc, err := codec.EncodeTask(t.final)
		if err != nil {
			return taskRows{}, err
		}
		// A task stays stored unless its (stored) handler was wiped.
		kept := t.stored && !w.wipedHandler(t.storedHandler)
		if !kept || !bytes.Equal(enc, t.storedMeta) {
			ts.add(t.final, enc)
		}
	}
	return ts, nil
}

func (w *writeSet) wipedHandler(id string) bool {
	h := w.handlers[id]
	return h != nil && h.wiped
}

type handlerRows struct {
	ids, workflows, owners []string
	versions               []string // workflow_version: WorkflowVersion
	statuses, residencies  []int16
	created                []time.Time
	createdNs              []int16
	idle, completed        []*time.Time
	idleNs, completedNs    []*int16
	lastSeqs               []int64
	metas                  [][]byte
}

func (r *handlerRows) args() []any {
	return []any{r.ids, r.workflows, r.statuses, r.residencies, r.owners, r.created, r.createdNs,
		r.idle, r.idleNs, r.completed, r.completedNs, r.lastSeqs, r.metas, r.versions}
}

func (r *handlerRows) add(h *persistence.Handler, meta []byte) {
	r.ids = append(r.ids, h.ID)
	r.workflows = append(r.workflows, h.Workflow)
	r.versions = append(r.versions, h.WorkflowVersion)
	r.owners = append(r.owners, h.Owner)
	r.statuses = append(r.statuses, int16(h.Status))
	r.residencies = append(r.residencies, int16(h.Residency))
	r.created = append(r.created, h.CreatedAt)
	r.createdNs = append(r.createdNs, nsOf(h.CreatedAt))
	idle, idleNs := optTime(h.IdleSince)
	r.idle, r.idleNs = append(r.idle, idle), append(r.idleNs, idleNs)
	var completed time.Time
	if h.Status.Terminal() {
		completed = h.CompletedAt // the finished index: see FinishedBefore
	}
	c, cNs := optTime(completed)
	r.completed, r.completedNs = append(r.completed, c), append(r.completedNs, cNs)
	r.lastSeqs = append(r.lastSeqs, seqToDB(h.LastSeq))
	r.metas = append(r.metas, meta)
}

type recordRows struct {
	ids  []string
	seqs []int64
	data [][]byte
}

func (r *recordRows) add(id string, rec persistence.Record) {
	data := rec.Data
	if data == nil {
		data = []byte{} // NULL is not an empty record
	}
	r.ids, r.seqs, r.data = append(r.ids, id), append(r.seqs, seqToDB(rec.Seq)), append(r.data, data)
}

// timer is one row of wfd_timers: a waiter's deadline, or the handler's
// own Deadline under waiter id "".
type timer struct {
	waiter string
	due    time.Time
}

func timersOf(h *persistence.Handler) []timer {
	var ts []timer
	if h == nil {
		return nil
	}
	if !h.Deadline.IsZero() {
		ts = append(ts, timer{"", h.Deadline})
	}
	for i := range h.Waiters {
		if w := &h.Waiters[i]; !w.Deadline.IsZero() {
			ts = append(ts, timer{w.ID, w.Deadline})
		}
	}
	return ts
}

type timerRows struct {
	clearAll   []string // handlers whose timers and wait keys all go
	delH, delW []string
	putH, putW []string
	due        []time.Time
	dueNs      []int16
}

// diff adds the timer rows that change from old to next (old nil: none
// stored).
func (r *timerRows) diff(old, next *persistence.Handler) {
	before, after := timersOf(old), timersOf(next)
	for _, o := range before {
		if !containsWaiter(after, o.waiter) {
			r.delH, r.delW = append(r.delH, next.ID), append(r.delW, o.waiter)
		}
	}
	for _, n := range after {
		if i := indexWaiter(before, n.waiter); i >= 0 && before[i].due.Equal(n.due) {
			continue
		}
		r.putH, r.putW = append(r.putH, next.ID), append(r.putW, n.waiter)
		r.due, r.dueNs = append(r.due, n.due), append(r.dueNs, nsOf(n.due))
	}
}

func indexWaiter(ts []timer, waiter string) int {
	for i := range ts {
		if ts[i].waiter == waiter {
			return i
		}
	}
	return -1
}

func containsWaiter(ts []timer, waiter string) bool { return indexWaiter(ts, waiter) >= 0 }

type waitKeyRows struct {
	delH, delW       []string
	putH, putW, keys []string
}

func waitKeysOf(h *persistence.Handler) map[string]string {
	if h == nil {
		return nil
	}
	m := map[string]string{}
	for i := range h.Waiters {
		if w := &h.Waiters[i]; w.Key != "" {
			m[w.ID] = w.Key
		}
	}
	return m
}

// diff adds the wait-key rows that change from old to next.
func (r *waitKeyRows) diff(old, next *persistence.Handler) {
	before, after := waitKeysOf(old), waitKeysOf(next)
	for w := range before {
		if _, ok := after[w]; !ok {
			r.delH, r.delW = append(r.delH, next.ID), append(r.delW, w)
		}
	}
	for w, k := range after {
		if before[w] == k {
			if _, ok := before[w]; ok {
				continue
			}
		}
		r.putH, r.putW, r.keys = append(r.putH, next.ID), append(r.putW, w), append(r.keys, k)
	}
}

type taskRows struct {
	ids, handlers, workflows, assignees []string
	statuses                            []int16
	created                             []time.Time
	createdNs                           []int16
	metas                               [][]byte
}

func (r *taskRows) add(t *persistence.Task, meta []byte) {
	r.ids = append(r.ids, t.ID)
	r.handlers = append(r.handlers, t.HandlerID)
	r.workflows = append(r.workflows, t.Workflow)
	r.assignees = append(r.assignees, t.Assignee)
	r.statuses = append(r.statuses, int16(t.Status))
	r.created = append(r.created, t.CreatedAt)
	r.createdNs = append(r.createdNs, nsOf(t.CreatedAt))
	r.metas = append(r.metas, meta)
}
