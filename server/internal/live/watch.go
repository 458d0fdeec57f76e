package live

// The journal keeps what it committed for the callers that asked, so that
// RunWorkflow and SendEvent answer with the handler as the store committed
// their change, without reading it back and without the engine carrying
// the server's metadata for them.

import "github.com/wfd-dev/wfd/persistence"

// watched is what the journal keeps for the callers watching one handler.
type watched struct {
	n int // callers watching
	// meta is the handler as the latest change committed since the
	// first of them began watching stored it; ok once there is one.
	meta persistence.Handler
	ok   bool
}

// Watch lets a caller answer with a handler's metadata as the store
// committed it, without reading it back: it begins before the engine call
// that changes the handler, and once that call has returned (its change is
// committed) Watch.committed has the latest change of the handler
// committed since. Call Watch.done when finished: the journal keeps
// nothing for a handler nobody watches.
func (j *Journal) Watch(id string) Watch {
	j.watchMu.Lock()
	defer j.watchMu.Unlock()
	w := j.watched[id]
	if w == nil {
		w = &watched{}
		j.watched[id] = w
	}
	w.n++
	return Watch{j: j, id: id, w: w}
}

// Watch is one caller's interest in a handler's commits (journal.Watch).
type Watch struct {
	j  *Journal
	id string
	w  *watched
}

// Committed returns the handler's metadata as the latest change Committed
// since the watch began stored it; false if none was Committed, or if the
// changes carried no records (the store keeps LastSeq; the journal knows it
// only from records).
func (w Watch) Committed() (persistence.Handler, bool) {
	w.j.watchMu.Lock()
	defer w.j.watchMu.Unlock()
	return w.w.meta, w.w.ok && w.w.meta.LastSeq > 0
}

// Done ends the watch.
func (w Watch) Done() {
	w.j.watchMu.Lock()
	defer w.j.watchMu.Unlock()
	if w.w.n--; w.w.n == 0 {
		delete(w.j.watched, w.id)
	}
}

// keepWatched keeps the committed metadata of watched handlers, before
// their changes are acknowledged; err is the commit's error. With nobody
// watching it costs one lock per commit and no look-up.
func (j *Journal) keepWatched(batch []*pending, err error) {
	if err != nil {
		return
	}
	j.watchMu.Lock()
	defer j.watchMu.Unlock()
	if len(j.watched) == 0 {
		return
	}
	for _, p := range batch {
		w := j.watched[p.ec.HandlerID]
		if w == nil || p.err != nil {
			continue
		}
		seq := w.meta.LastSeq
		w.meta, w.ok = p.change.Handler, true
		// A change without records leaves the stream where it was: keep
		// the position an earlier watched change gave (changes of one
		// handler commit in order).
		w.meta.LastSeq = max(w.meta.LastSeq, seq)
	}
}

// Watched returns how many handlers the journal keeps committed metadata
// for, for callers waiting to answer with it (Watch).
func (j *Journal) Watched() int {
	j.watchMu.Lock()
	defer j.watchMu.Unlock()
	return len(j.watched)
}
