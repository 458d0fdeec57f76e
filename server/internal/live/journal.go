package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/server/internal/observe"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
)

// maxCommit caps how many handler changes one commit takes.
const maxCommit = 1024

// Journal is the engine.Journal that makes handler changes durable. Append
// encodes a change on the handler's goroutine (so encoding runs in
// parallel across handlers) and queues it; one committer goroutine writes
// whatever has queued in one store commit, then updates the server's
// bookkeeping, publishes the records to live streams and acknowledges the
// changes, in that order. While one commit
// fsyncs the next batch gathers, so commits are shared by as many handlers
// as are busy and no change waits for more than one commit ahead of it.
type Journal struct {
	store persistence.Store
	hub   *Hub
	log   *slog.Logger
	stats *observe.Stats
	// onCommit is told about every committed change (residency tracking).
	onCommit func(*engine.Change)
	// onFail is told about every change that failed, once its handler
	// is lost (engine.ErrLost): why, and which handler.
	onFail func(*engine.Change, error)
	// onStore is told whether each commit reached the store: nil, or the
	// storage failure (persistence.ErrUnavailable) that stopped it; and
	// how many bytes of snapshots and records the changes held.
	onStore func(err error, size int)
	// Tracing makes a span per commit (set before the first Append).
	Tracing *observe.Tracing
	// Fence is the lease claim a handler's changes carry (replica mode,
	// Ownership.Fence); ok false: this replica holds no lease of the handler and
	// must not commit its change. Set before the first Append.
	Fence func(id string) (f persistence.Fence, ok bool)
	// OnPublished is told of each publication an escalation made, once
	// the change that records it is committed (it wakes the handlers
	// waiting for its key). Set before the first Append.
	OnPublished func(*persistence.Published)
	// failures throttles the "checkpoint failed" lines.
	failures *observe.LogThrottle

	mu      sync.Mutex
	queue   []*pending
	wake    chan struct{}
	closing bool
	done    chan struct{}
	// inflight counts each handler's changes not yet committed; drained
	// is closed when a handler's count drops to zero.
	inflight map[string]*inflight

	// watchMu guards watched: the handlers whose committed metadata a
	// caller waits to answer with (watch). Empty when nobody waits.
	watchMu sync.Mutex
	watched map[string]*watched
}

type inflight struct {
	n       int
	drained chan struct{}
}

type pending struct {
	ec      *engine.Change
	change  persistence.Change
	records []*wfdv1.Record
	// notices are published before the change commits (notify.go).
	notices []persistence.Published
	err     error // encoding failed
}

var _ engine.Journal = (*Journal)(nil)

func NewJournal(store persistence.Store, h *Hub, log *slog.Logger, st *observe.Stats, onCommit func(*engine.Change), onFail func(*engine.Change, error),
	onStore func(error, int),
) *Journal {
	j := &Journal{store: store, hub: h, log: log, stats: st, onCommit: onCommit, onFail: onFail, onStore: onStore, wake: make(chan struct{}, 1), done: make(chan struct{}),
		inflight: map[string]*inflight{}, watched: map[string]*watched{}, failures: observe.NewLogThrottle(observe.FailureLogEvery, time.Now)}
	go j.commitLoop()
	return j
}

// Append implements engine.Journal.
func (j *Journal) Append(c *engine.Change) {
	p := &pending{ec: c}
	p.err = j.encode(c, p)
	j.mu.Lock()
	if j.closing {
		j.mu.Unlock()
		c.Done(fmt.Errorf("%w: server is shutting down", persistence.ErrUnavailable))
		return
	}
	j.queue = append(j.queue, p)
	f := j.inflight[c.HandlerID]
	if f == nil {
		f = &inflight{drained: make(chan struct{})}
		j.inflight[c.HandlerID] = f
	}
	f.n++
	j.mu.Unlock()
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

func (j *Journal) encode(c *engine.Change, p *pending) error {
	residency := persistence.ResidencyActive
	if c.Released {
		residency = persistence.ResidencyReleased
	}
	meta, err := MetaFromChange(c, residency)
	if err != nil {
		return err
	}
	p.change.Handler = meta
	// A handler's first change creates it: the store refuses it if the id
	// was taken meanwhile (ErrExists) rather than overwrite that handler.
	p.change.Create = c.Created
	if j.Fence != nil {
		f, ok := j.Fence(c.HandlerID)
		if !ok {
			return fmt.Errorf("handler %s: this replica holds no lease of it: %w", c.HandlerID, persistence.ErrFenced)
		}
		p.change.Fence = f
		// The handler leaves this replica's memory with this change: its
		// lease is freed in the same commit (leases.left forgets it).
		p.change.FreeLease = !f.IsZero() && (c.Released || c.Status.Terminal())
	}
	if p.change.Tasks, err = TasksFromChange(c); err != nil {
		return err
	}
	if p.notices, err = escalationNotices(c); err != nil {
		return err
	}
	snap, err := proto.Marshal(c.Snapshot())
	if err != nil {
		return err
	}
	p.change.Snapshot = snap
	p.records = make([]*wfdv1.Record, len(c.Records))
	if n := len(c.Records); n > 0 {
		// The store keeps LastSeq itself; set it here too, for the copy
		// watchers get (watch).
		p.change.Handler.LastSeq = c.Records[n-1].Seq
	}
	p.change.Records = make([]persistence.Record, len(c.Records))
	for i := range c.Records {
		r := RecordToProto(&c.Records[i])
		b, err := proto.Marshal(r)
		if err != nil {
			return err
		}
		p.records[i] = r
		p.change.Records[i] = persistence.Record{Seq: r.Seq, Data: b}
	}
	return nil
}

func (j *Journal) commitLoop() {
	defer close(j.done)
	for {
		j.mu.Lock()
		for len(j.queue) == 0 {
			if j.closing {
				j.mu.Unlock()
				return
			}
			j.mu.Unlock()
			<-j.wake
			j.mu.Lock()
		}
		n := min(len(j.queue), maxCommit)
		batch := j.queue[:n:n]
		j.queue = j.queue[n:]
		j.mu.Unlock()
		j.commit(batch)
	}
}

func (j *Journal) commit(batch []*pending) {
	dropLost(batch)
	changes := j.changesOf(batch)
	var err error
	if len(changes) > 0 {
		// The handlers' ids only when tracing wants them: a commit is
		// the hot path.
		var ids []string
		if j.Tracing.On {
			ids = batchIDs(batch)
		}
		span := j.Tracing.Commit(ids)
		start := time.Now()
		err = j.store.Write(context.Background(), changes...)
		j.stats.Committed(len(changes), time.Since(start), err)
		observe.End(span, err)
	}
	if err != nil && !errors.Is(err, persistence.ErrUnavailable) && len(changes) > 1 {
		j.writeAlone(batch)
		err = nil
	}
	j.report(batch, err)
	j.keepWatched(batch, err)
	for _, p := range batch {
		e := p.err
		if e == nil {
			e = err
		}
		if e != nil {
			// Done makes the handler lost before its callers hear of it.
			p.ec.Done(e)
			if j.onFail != nil {
				j.onFail(p.ec, e)
			}
			continue
		}
		// Bookkeeping and streams first, so a caller that gets the
		// acknowledgement finds them up to date.
		if j.onCommit != nil {
			j.onCommit(p.ec)
		}
		j.published(p)
		j.hub.Publish(p.ec.HandlerID, p.records, int64(recordsSize(&p.change)))
		p.ec.Done(nil)
	}
	j.mu.Lock()
	for _, p := range batch {
		if f := j.inflight[p.ec.HandlerID]; f != nil {
			if f.n--; f.n == 0 {
				delete(j.inflight, p.ec.HandlerID)
				close(f.drained)
			}
		}
	}
	j.mu.Unlock()
}

// A handler's changes build on each other: once one fails, the handler is
// lost (engine.ErrLost) and none of its later changes may be committed,
// or the store would hold a stream with a gap and a checkpoint that
// includes what the failed change's callers were told did not happen.
// The committer acknowledges a commit's changes before it takes the next
// batch, so a change of a later batch knows (engine.Change.Lost); within
// a batch dropLost and writeAlone keep track.

// dropLost fails, before a commit, the changes that build on a failed
// one: those of a handler lost in an earlier commit, and those that follow
// a change of their handler that could not be encoded. The common batch,
// with no failure, costs an atomic load per change and no allocation.
func dropLost(batch []*pending) {
	var failed map[string]bool
	for _, p := range batch {
		id := p.ec.HandlerID
		if p.err == nil && (p.ec.Lost() || failed != nil && failed[id]) {
			p.err = errLost(id)
		}
		if p.err != nil {
			if failed == nil {
				failed = map[string]bool{}
			}
			failed[id] = true
		}
	}
}

// writeAlone writes a batch the store refused change by change, so that
// one bad change does not fail the others; a handler's changes after one
// of its own that fails are not written.
func (j *Journal) writeAlone(batch []*pending) {
	var failed map[string]bool
	for _, p := range batch {
		id := p.ec.HandlerID
		if p.err == nil && failed != nil && failed[id] {
			p.err = errLost(id)
		}
		if p.err == nil {
			p.err = j.store.Write(context.Background(), p.change)
		}
		if p.err != nil {
			if failed == nil {
				failed = map[string]bool{}
			}
			failed[id] = true
		}
	}
}

// errLost is the error of a change not committed because an earlier change
// of its handler failed: its callers load the handler again and retry
// (engine.ErrLost is an engine.ErrReleased).
func errLost(id string) error {
	return fmt.Errorf("%w: handler %s: an earlier change of it failed", engine.ErrLost, id)
}

// report logs a commit's failed checkpoints, throttled (a full disk fails
// every one of them, thousands a second), and tells onStore whether the
// store committed. err is the shared commit's error, p.err a change's own.
func (j *Journal) report(batch []*pending, err error) {
	var storage error    // why the store could not commit, if it could not
	failed, done := 0, 0 // bytes of the changes the store failed, committed
	committed := false
	for _, p := range batch {
		e := p.err
		if e == nil {
			e = err
		}
		if e == nil {
			committed = true
			done += changeSize(&p.change)
			continue
		}
		if errors.Is(e, engine.ErrLost) {
			continue // it follows a failure, logged as such
		}
		if errors.Is(e, persistence.ErrUnavailable) {
			if storage == nil {
				storage = e
			}
			failed += changeSize(&p.change)
		}
		if ok, suppressed := j.failures.Allow(); ok {
			j.log.Error("checkpoint failed", "handler", p.ec.HandlerID, "err", e, "suppressed", suppressed)
		}
	}
	if committed && storage == nil {
		// Failures have stopped: report the ones the throttle held back.
		if ok, suppressed := j.failures.Flush(); ok {
			j.log.Info("checkpoints commit again", "suppressed", suppressed)
		}
	}
	switch {
	case j.onStore == nil:
	case storage != nil:
		j.onStore(storage, failed)
	case committed:
		j.onStore(nil, done)
	}
}

// recordsSize is the bytes of a change's encoded records.
func recordsSize(c *persistence.Change) int {
	n := 0
	for _, r := range c.Records {
		n += len(r.Data)
	}
	return n
}

// changeSize is the bytes of a change's snapshot and records: what a
// commit of it must find room for, roughly.
func changeSize(c *persistence.Change) int {
	return len(c.Snapshot) + recordsSize(c)
}

// Settled waits until every change of the handler handed to the journal so
// far is committed (or failed), so that what the store holds is its latest.
func (j *Journal) Settled(ctx context.Context, id string) error {
	j.mu.Lock()
	f := j.inflight[id]
	j.mu.Unlock()
	if f == nil {
		return nil
	}
	select {
	case <-f.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops taking changes once the queue is empty and waits for the
// last commit.
func (j *Journal) Close(ctx context.Context) error {
	j.mu.Lock()
	j.closing = true
	j.mu.Unlock()
	select {
	case j.wake <- struct{}{}:
	default:
	}
	select {
	case <-j.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// batchIDs are the handlers of the changes in batch that are committed
// (not refused before the commit).
func batchIDs(batch []*pending) []string {
	ids := make([]string, 0, len(batch))
	for _, p := range batch {
		if p.err == nil {
			ids = append(ids, p.ec.HandlerID)
		}
	}
	return ids
}
