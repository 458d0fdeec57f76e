package rpc

import (
	"context"
	"fmt"
	"strings"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/auth"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// myAssignees are the assignees whose tasks are the caller's: its subject
// and a "group:<role>" for each of its roles.
func myAssignees(id auth.Identity) []string {
	out := []string{id.Subject}
	for _, r := range id.Roles {
		if len(out) == persistence.MaxTaskQueryAssignees {
			break
		}
		out = append(out, auth.GroupPrefix+r)
	}
	return out
}

// assignedTo reports whether a task for assignee is the caller's to
// answer: unassigned, assigned to its subject, or to one of its groups.
func assignedTo(id auth.Identity, assignee string) bool {
	if assignee == "" || assignee == id.Subject {
		return true
	}
	g, ok := strings.CutPrefix(assignee, auth.GroupPrefix)
	return ok && id.HasRole(g)
}

// answerer decides who completes a task. Without authentication it is
// whoever the request names, as before. With it, it is the caller's
// subject, whatever the request says; and a task assigned to someone
// else (or a group the caller is not in) may be completed only by a
// caller allowed to override the assignment (auth.MayOverrideAssignee).
func answerer(ctx context.Context, claimed string, t *persistence.Task) (string, error) {
	id, ok := auth.FromContext(ctx)
	if !ok {
		return claimed, nil
	}
	if !assignedTo(id, t.Assignee) && !auth.MayOverrideAssignee(id) {
		return "", fmt.Errorf("%w: task %q is assigned to %q, not to %s", apierr.ErrPermissionDenied, t.ID, t.Assignee, id.Subject)
	}
	return id.Subject, nil
}
