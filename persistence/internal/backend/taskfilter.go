package backend

import (
	"context"
	"slices"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// FilterTasks answers a task listing whose query has Claim or Overdue
// (filters no index answers) with list, a backend's listing by the other
// filters: it asks list for as many tasks as the page still lacks,
// keeps those q.Keeps, and goes on from list's token, so no task is
// skipped or listed twice, until the page is full, the listing ends, or
// it has read persistence.MaxTaskFilterScan tasks (then the page is
// short, with a token to go on). An Overdue listing reads pending tasks
// only.
func FilterTasks(ctx context.Context, q persistence.TaskQuery,
	list func(context.Context, persistence.TaskQuery) ([]persistence.Task, string, error),
) ([]persistence.Task, string, error) {
	inner := q
	if q.Overdue && len(q.Statuses) == 0 {
		inner.Statuses = []persistence.TaskStatus{persistence.TaskPending}
	}
	if q.Overdue && q.Now.IsZero() {
		q.Now = time.Now() // one instant for every page read
	}
	var out []persistence.Task
	token, scanned, want := q.PageToken, 0, q.Limit()
	for {
		inner.PageToken = token
		inner.PageSize = want - len(out)
		ts, next, err := list(ctx, inner)
		for i := range ts {
			if q.Keeps(&ts[i]) {
				out = append(out, ts[i])
			}
		}
		scanned += len(ts)
		token = next
		if err != nil {
			return out, token, err
		}
		if next == "" || len(out) == want || scanned >= persistence.MaxTaskFilterScan || ctx.Err() != nil {
			return slices.Clip(out), token, ctx.Err()
		}
	}
}
