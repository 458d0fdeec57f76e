package postgres

// The commit feed: every Write of a shared store (Options.Shared, several
// processes on one database) notifies, in its transaction, the handlers
// whose records it commits (feednotify.go); FollowCommits listens on a
// connection of its own and reports them. Replicas use it to follow
// handlers live on other replicas (streams, waits, a child's end).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/persistence"
)

// Timing of the feed's connection.
const (
	// feedPing is how long the connection may stay silent before it is
	// pinged: a connection cut without a reset (a partition) would
	// otherwise wait for notifications forever.
	feedPing = 30 * time.Second
	// feedBackoff and feedMaxBackoff space reconnection attempts.
	feedBackoff    = 100 * time.Millisecond
	feedMaxBackoff = 5 * time.Second
)

// FollowCommits reports the commits of every shared store on this
// database, this one's included: commit is called, in commit order, for
// each handler whose records a Write committed, with replica the replica
// that fenced the change ("" unfenced) and parent set when the Write ended
// that child of parent. resync is called once the feed listens, and again
// after every reconnection: what committed while it was not listening was
// not reported, so whatever the caller follows may have new records.
// commit and resync are called from FollowCommits's goroutine and should
// not block. FollowCommits returns nil when ctx ends; it fails at once,
// with ErrInvalid, if the store is not shared (its Writes notify nothing).
func (s *Store) FollowCommits(ctx context.Context, commit func(replica, handler, parent string), resync func()) error {
	if !s.shared() {
		return fmt.Errorf("%w: postgres: the commit feed needs a shared store (Options.Shared)", persistence.ErrInvalid)
	}
	backoff := feedBackoff
	for {
		// Why the connection was lost does not matter: the caller hears
		// of the loss as the resync that follows the reconnection.
		_ = s.listen(ctx, commit, func() {
			backoff = feedBackoff
			resync()
		})
		if ctx.Err() != nil {
			return nil
		}
		if s.closed.Load() {
			return fmt.Errorf("%w: postgres: store is closed", persistence.ErrUnavailable)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil
		}
		backoff = min(2*backoff, feedMaxBackoff)
	}
}

// listen connects, listens, calls listening, and reports notifications
// until the connection fails or ctx ends.
func (s *Store) listen(ctx context.Context, commit func(replica, handler, parent string), listening func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+s.channel); err != nil {
		return err
	}
	listening()
	for {
		wctx, cancel := context.WithTimeout(ctx, feedPing)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			deliver(n.Payload, commit)
			continue
		case ctx.Err() != nil:
			return ctx.Err()
		case !errors.Is(err, context.DeadlineExceeded):
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, feedPing)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return err
		}
	}
}

// deliver reports one notification's handlers; a payload it cannot read
// (not a wfd one) is ignored.
func deliver(payload string, commit func(replica, handler, parent string)) {
	var n commitNotice
	if json.Unmarshal([]byte(payload), &n) != nil {
		return
	}
	for _, id := range n.H {
		commit(n.R, id, "")
	}
	for _, e := range n.E {
		commit(n.R, e[0], e[1])
	}
}
