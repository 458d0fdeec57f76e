package bolt

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// committer is a group commit: Writes that arrive while a commit is running
// queue up, and the next commit takes all of them in one transaction, one
// fsync. Unlike bbolt's DB.Batch it has no timer: a commit starts as soon
// as the previous one ends, so a lone writer never waits and a few
// concurrent writers are not held back for MaxBatchDelay (see
// BenchmarkWrite for the difference).
//
// It keeps DB.Batch's contract: a function may run more than once, so it
// must be idempotent; a function that fails is taken out, the others commit
// without it, and it is then run again alone, so its error is decided on
// committed state, never on the effects of a batch that failed to commit.
//
// There is no goroutine of its own: the first caller to find it idle leads
// one commit, then hands the lead to the oldest waiting caller, so no caller
// leads (and waits) for longer than one commit beyond its own.
type committer struct {
	update   func(func(*bolt.Tx) error) error // one write transaction
	maxBatch int
	path     string // the store file, for DamagedError

	mu   sync.Mutex
	busy bool          // a leader is committing
	q    []*commitCall // waiting for the next commit
}

type commitCall struct {
	fn   func(*bolt.Tx) error
	done chan error // the result, or errLead
}

// errLead tells a waiting caller that it leads the next commit.
var errLead = errors.New("bolt: lead the next commit")

func newCommitter(update func(func(*bolt.Tx) error) error, maxBatch int, path string) *committer {
	return &committer{update: update, maxBatch: maxBatch, path: path}
}

// do runs fn in a shared write transaction and returns when that
// transaction has committed (or failed).
func (c *committer) do(fn func(*bolt.Tx) error) error {
	call := &commitCall{fn: fn, done: make(chan error, 1)}
	c.mu.Lock()
	c.q = append(c.q, call)
	if c.busy {
		c.mu.Unlock()
		if err := <-call.done; err != errLead {
			return err
		}
		c.mu.Lock()
	}
	c.busy = true
	n := min(len(c.q), c.maxBatch)
	batch := c.q[:n:n]
	c.q = c.q[n:]
	c.mu.Unlock()

	c.commit(batch)

	c.mu.Lock()
	if len(c.q) > 0 {
		c.q[0].done <- errLead
	} else {
		c.busy = false
		c.q = nil // let the old backing array go
	}
	c.mu.Unlock()
	return <-call.done
}

// commit runs calls in one transaction, retrying without the failing ones,
// which then run alone.
func (c *committer) commit(calls []*commitCall) {
	var failed []*commitCall
	for len(calls) > 0 {
		failedAt := -1
		err := c.update(func(tx *bolt.Tx) error {
			for i, call := range calls {
				if err := safeCall(c.path, call.fn, tx); err != nil {
					failedAt = i
					return err
				}
			}
			return nil
		})
		if failedAt >= 0 && len(calls) > 1 {
			failed = append(failed, calls[failedAt])
			calls = append(calls[:failedAt:failedAt], calls[failedAt+1:]...)
			continue
		}
		for _, call := range calls {
			call.done <- err
		}
		break
	}
	for _, call := range failed {
		call.done <- c.update(func(tx *bolt.Tx) error { return safeCall(c.path, call.fn, tx) })
	}
}

// safeCall turns a panic in fn into an error, so that one bad call cannot
// take down the leader and leave the other callers waiting forever. A
// fault (see guard), and an assertion of bbolt's about what a page holds,
// are a damaged page of the file at path (ErrCorrupt: what the change
// needed is damaged, the store is not unavailable); another panic is
// reported as such.
func safeCall(path string, fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if damagedPage(p) {
				err = &DamagedError{Path: path, Problem: panicProblem(p)}
				return
			}
			err = fmt.Errorf("bolt: write panicked: %v", p)
		}
	}()
	return fn(tx)
}

// damagedPage reports whether a panic while bbolt walked the file says
// that a page is not what points to it says: a fault reading it, or one
// of bbolt's assertions on a page's id, type or free state (bbolt trusts
// the file and panics with a string when it finds otherwise).
func damagedPage(p any) bool {
	if _, fault := p.(interface{ Addr() uintptr }); fault {
		return true
	}
	msg, ok := p.(string)
	if !ok {
		if e, isErr := p.(error); isErr {
			msg, ok = e.Error(), true
		}
	}
	return ok && (strings.Contains(msg, "assertion failed") || strings.Contains(msg, "already freed") ||
		strings.Contains(msg, "invalid page type") || strings.Contains(msg, "unexpected page"))
}
