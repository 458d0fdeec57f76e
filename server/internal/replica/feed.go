package replica

// The commit feed (replica mode): the store tells every replica which
// handlers' records each commit holds, whichever replica made it. The
// journal publishes this replica's own commits to the hub as they are
// acknowledged; for another replica's, the hub pokes the handler's
// subscribers, which read the store after the last record they have
// (streams) or read the handler again (waits). A stream or wait opened on
// any replica thus follows a handler wherever it is live, across moves,
// exactly: the records' sequence numbers leave no gap and no duplicate.
// A child's end committed elsewhere reaches its parent if the parent is
// live here (or live nowhere: then some replica loads it).

import "context"

// commitFeed is a store that reports the commits of every process on it
// (persistence/postgres opened Shared). FollowCommits calls commit for
// each handler whose records a commit holds, in commit order: replica is
// the replica whose lease fenced it ("" unfenced), parent is set when the
// commit ended that child of parent. It calls resync once it listens and
// after every reconnection (commits in between were not reported). Both
// must not block. It returns when ctx ends.
type commitFeed interface {
	FollowCommits(ctx context.Context, commit func(replica, handler, parent string), resync func()) error
}

// followCommits starts following the commits of the other replicas, with
// a store that reports them.
func (r *Replica) followCommits() {
	f, ok := r.store.(commitFeed)
	if !ok {
		return
	}
	r.rt.Go(func() {
		if err := f.FollowCommits(r.rt.Background(), r.committedElsewhere, r.feedResync); err != nil {
			r.log.Error("following other replicas' commits: streams and waits here will not follow handlers live elsewhere", "err", err)
		}
	})
}

// committedElsewhere is told by the feed that a commit holds records of
// handler id.
func (r *Replica) committedElsewhere(replica, id, parent string) {
	if replica == r.cfg.ID {
		return // the journal published it here
	}
	r.rt.Hub().Poke(id)
	if parent != "" {
		go r.childEndedElsewhere(parent, id)
	}
}

// feedResync is told that the feed may have missed commits: every
// subscriber reads again, and every parent live here that waits on
// children checks them again.
func (r *Replica) feedResync() {
	r.rt.Hub().PokeAll()
	go func() {
		err := r.rt.RecheckParents(r.rt.Background(), func(id string) bool {
			_, ok := r.rt.Engine().Handler(id)
			return ok
		})
		if err != nil && r.rt.Background().Err() == nil {
			r.log.Warn("checking the children of waiting parents after the commit feed reconnected", "err", err)
		}
	}()
}

// childEndedElsewhere tells parent that child ended on another replica,
// which could not tell it if parent is live here (childEnded there is
// refused with an apierr.Owned). A parent live nowhere is told too: the
// other replica's childEnded may have been refused while the parent was
// still live here, on its way out; the lease picks one replica to load it
// (one lease read per child's end per replica). A parent being loaded
// here is told once loaded. A parent live on another replica is that
// replica's to tell.
func (r *Replica) childEndedElsewhere(parent, child string) {
	if _, ok := r.rt.Engine().Handler(parent); ok {
		if c, ended := r.rt.EndedChild(parent, child); ended {
			r.rt.ChildEnded(c)
		}
		return
	}
	if _, elsewhere, err := r.holder(r.rt.Background(), parent); err != nil || elsewhere {
		return
	}
	// Not if its checkpoint has the end already: loading it would change
	// nothing.
	r.rt.RecheckChildren(parent, []string{child})
}
