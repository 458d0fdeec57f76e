package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// outcomeTimeout bounds how long a commit whose answer was lost is looked
// up, and outcomePoll how often.
const (
	outcomeTimeout = 30 * time.Second
	outcomePoll    = 100 * time.Millisecond
)

// commitOutcome learns whether transaction txid, whose COMMIT was sent but
// whose answer was lost with the connection (the database restarted, the
// network broke, the commit outlived Options.WriteTimeout), committed. It
// asks txid_status on a new connection until the database answers
// "committed" (nil: the write happened, as a bbolt commit that returned
// would have), "aborted" (cause, as ErrUnavailable: nothing happened, a
// retry is safe) or outcomeTimeout passes (cause: unknown, as before).
// Without it, a Write that did commit would be reported failed, and a
// retry of it would fail on its own records (ErrConflict).
//
// pgx, closing the broken connection, sends the server a cancel request
// for it, which aborts a COMMIT still running if it gets through: the
// answer is then "aborted", and true.
//
// "committed" is believed only from the server the transaction began on
// (started, pg_postmaster_start_time). A crash loses the WAL not yet
// flushed, and with it every trace of a transaction id whose records were
// only there: the restarted server hands that id out again, and once the
// new owner commits, txid_status says "committed" of a transaction that
// left nothing (TestLostCommitAnswerAcrossCrash). After a restart the
// outcome is unknown unless the id is "aborted"; an unknown outcome is
// ErrUnavailable, which callers retry under the same idempotency key.
func (s *Store) commitOutcome(txid int64, started time.Time, cause error) error {
	ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
	defer cancel()
	// The connection broke: the others most likely did too.
	s.pool.Reset()
	for !s.closed.Load() {
		var status *string
		var now time.Time
		err := s.pool.QueryRow(ctx, `SELECT txid_status($1), pg_postmaster_start_time()`, txid).Scan(&status, &now)
		switch {
		case err == nil && status != nil && *status == "committed" && !now.Equal(started):
			return fmt.Errorf("%w (its outcome is unknown: the database restarted since transaction %d began, and may have given its id to another)", cause, txid)
		case err == nil && status != nil && *status == "committed":
			return nil
		case err == nil && status != nil && *status == "aborted":
			return cause
		case err == nil && status == nil:
			// Too old to tell (it cannot be, seconds later), or another
			// database cluster answered.
			return fmt.Errorf("%w (its outcome is unknown: txid_status of %d is NULL)", cause, txid)
		}
		// "in progress" (the server has not yet seen the connection
		// go), or no answer yet.
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (its outcome is unknown: transaction %d was not resolved within %v)", cause, txid, outcomeTimeout)
		case <-time.After(outcomePoll):
		}
	}
	return fmt.Errorf("%w (its outcome is unknown: the store was closed)", cause)
}

// isStatementError reports whether err is an error PostgreSQL returned
// for a statement of a pipeline: then the transaction did not commit
// (the statements after it, COMMIT included, were skipped or rolled
// back). Any other error (the connection broke, a timeout) leaves the
// outcome unknown.
func isStatementError(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && !brokenConnection(err)
}
