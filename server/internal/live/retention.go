package live

import (
	"context"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// Defaults of retention (Options.Retention).
const (
	// DefaultRetentionBatch is how many finished handlers one commit of
	// a retention pass deletes at most.
	DefaultRetentionBatch = 256
	// maxRetentionInterval bounds the default interval between retention passes.
	maxRetentionInterval = time.Minute
)

// retention deletes finished handlers whose CompletedAt is older than
// Options.Retention: on a ticker, in batches of Options.RetentionBatch
// that each share one commit, until nothing due is left. It runs on the
// server's background context, so it stops at shutdown (a batch in
// progress is committed or not at all).
type retention struct {
	s        *Runtime
	keep     time.Duration
	interval time.Duration
	batch    int
}

func newRetention(s *Runtime, o *Options) *retention {
	r := &retention{s: s, keep: o.Retention, interval: o.RetentionInterval, batch: o.RetentionBatch}
	if r.interval <= 0 {
		// Often enough that a handler outlives its retention by a tenth
		// of it at most, and at most once a minute.
		r.interval = min(max(r.keep/10, time.Second), maxRetentionInterval)
	}
	if r.batch <= 0 {
		r.batch = DefaultRetentionBatch
	}
	return r
}

func (r *retention) run(ctx context.Context) {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		r.deleteDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// deleteDue deletes every finished handler due now. Handlers that may not go
// yet (a child of a running parent) are stepped over, and tried again by
// the next pass.
func (r *retention) deleteDue(ctx context.Context) {
	cutoff := r.s.opts.Now().Add(-r.keep)
	var after *persistence.Finished
	total := 0
	for ctx.Err() == nil {
		due, err := r.s.store.FinishedBefore(ctx, cutoff, after, r.batch)
		if err != nil {
			r.s.log.Warn("retention: listing finished handlers", "err", err)
			return
		}
		if len(due) == 0 {
			break
		}
		after = &due[len(due)-1]
		ids := make([]string, len(due))
		for i := range due {
			ids[i] = due[i].HandlerID
		}
		n, err := r.s.deleteFinished(ctx, ids)
		if err != nil {
			if ctx.Err() == nil {
				r.s.log.Warn("retention: deleting finished handlers", "err", err)
			}
			return
		}
		total += n
		if len(due) < r.batch {
			break
		}
	}
	if total > 0 {
		r.s.log.Info("retention: deleted finished handlers", "count", total, "completed_before", cutoff)
	}
}
