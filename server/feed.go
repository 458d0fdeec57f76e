package server

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

// followCommits starts following the commits of the other replicas, in
// replica mode with a store that reports them.
func (s *Server) followCommits() {
	f, ok := s.store.(commitFeed)
	if s.leases == nil || !ok {
		return
	}
	s.rt.Go(func() {
		if err := f.FollowCommits(s.rt.Background(), s.committedElsewhere, s.feedResync); err != nil {
			s.log.Error("following other replicas' commits: streams and waits here will not follow handlers live elsewhere", "err", err)
		}
	})
}

// committedElsewhere is told by the feed that a commit holds records of
// handler id.
func (s *Server) committedElsewhere(replica, id, parent string) {
	if replica == s.leases.id() {
		return // the journal published it here
	}
	s.hub.Poke(id)
	if parent != "" {
		go s.childEndedElsewhere(parent, id)
	}
}

// feedResync is told that the feed may have missed commits: every
// subscriber reads again, and every parent live here that waits on
// children checks them again.
func (s *Server) feedResync() {
	s.hub.PokeAll()
	go func() {
		err := s.rt.RecheckParents(s.rt.Background(), func(id string) bool {
			_, ok := s.engine.Handler(id)
			return ok
		})
		if err != nil && s.rt.Background().Err() == nil {
			s.log.Warn("checking the children of waiting parents after the commit feed reconnected", "err", err)
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
func (s *Server) childEndedElsewhere(parent, child string) {
	if _, ok := s.engine.Handler(parent); ok {
		if c, ended := s.rt.EndedChild(parent, child); ended {
			s.rt.ChildEnded(c)
		}
		return
	}
	if _, elsewhere, err := s.leases.holder(s.rt.Background(), parent); err != nil || elsewhere {
		return
	}
	// Not if its checkpoint has the end already: loading it would change
	// nothing.
	s.rt.RecheckChildren(parent, []string{child})
}
