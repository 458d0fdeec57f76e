package server_test

import (
	"slices"
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
)

// taskPeople are token-file entries for the task tests: ada and mallory
// answer tasks, bob is in the finance group.
const taskPeople = `  - {token: ada-token, subject: ada, roles: [tasks]}
  - {token: mallory-token, subject: mallory, roles: [tasks]}
  - {token: bob-token, subject: bob, roles: [tasks, finance]}
`

func reviewedBy(t *testing.T, c wfdv1connect.WorkflowServiceClient, handler string) string {
	t.Helper()
	recs := collect(t, c, handler, 0)
	return recs[len(recs)-1].GetHandlerFinished().GetResult().GetFields()["reviewed_by"].GetStringValue()
}

// TestForgedCompletedByIgnored: with authentication on, the task records
// the caller's subject, not the completed_by it claims, and so does the
// workflow (expense's reviewed_by); someone else cannot answer ada's task.
func TestForgedCompletedByIgnored(t *testing.T) {
	ts := startAuthServer(t, newJWTIssuer(t), taskPeople)
	admin := ts.client(bearer("admin-token"))
	h := run(t, admin, "expense", map[string]any{"amount": 120.0, "approver": "ada"})
	task := waitTask(t, admin, h.HandlerId)
	answer := st(t, map[string]any{"approved": true})

	mallory := ts.client(bearer("mallory-token"))
	_, err := mallory.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, Answer: answer, CompletedBy: "ada"})
	wantCode(t, err, connect.CodePermissionDenied, "assigned to \"ada\"")

	ada := ts.client(bearer("ada-token"), connect.WithGRPC())
	res, err := ada.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, Answer: answer, CompletedBy: "mallory"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Task.CompletedBy != "ada" {
		t.Fatalf("completed_by %q, want ada (the caller)", res.Task.CompletedBy)
	}
	if got := reviewedBy(t, admin, h.HandlerId); got != "ada" {
		t.Fatalf("the workflow recorded reviewed_by %q, want ada", got)
	}
}

// TestTaskAssigneeEnforced: a task for "group:finance" is answered by a
// member of the group, refused to others, and an admin may override an
// assignment (recorded under the admin's own subject).
func TestTaskAssigneeEnforced(t *testing.T) {
	ts := startAuthServer(t, newJWTIssuer(t), taskPeople)
	admin := ts.client(bearer("admin-token"))
	answer := st(t, map[string]any{"approved": false, "reason": "no"})
	for _, tc := range []struct {
		approver, refused, answers, want string
	}{
		{"group:finance", "ada-token", "bob-token", "bob"},
		{"bob", "mallory-token", "admin-token", "admin-user"},
	} {
		h := run(t, admin, "expense", map[string]any{"amount": 10.0, "approver": tc.approver})
		task := waitTask(t, admin, h.HandlerId)
		_, err := ts.client(bearer(tc.refused)).CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, Answer: answer})
		wantCode(t, err, connect.CodePermissionDenied, "assigned to")
		res, err := ts.client(bearer(tc.answers)).CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, Answer: answer})
		if err != nil {
			t.Fatalf("%s answering a task for %q: %v", tc.answers, task.Assignee, err)
		}
		if res.Task.CompletedBy != tc.want || reviewedBy(t, admin, h.HandlerId) != tc.want {
			t.Fatalf("task for %q completed by %q, want %q", task.Assignee, res.Task.CompletedBy, tc.want)
		}
	}
}

// TestMyTasks: "mine" lists the tasks assigned to the caller and to its
// groups, and nobody else's.
func TestMyTasks(t *testing.T) {
	ts := startAuthServer(t, newJWTIssuer(t), taskPeople)
	admin := ts.client(bearer("admin-token"))
	want := map[string][]string{"ada": nil, "bob": nil}
	for _, approver := range []string{"ada", "bob", "group:finance", "group:legal", "mallory"} {
		h := run(t, admin, "expense", map[string]any{"amount": 10.0, "approver": approver})
		task := waitTask(t, admin, h.HandlerId)
		switch approver {
		case "ada":
			want["ada"] = append(want["ada"], task.TaskId)
		case "bob", "group:finance":
			want["bob"] = append(want["bob"], task.TaskId)
		}
	}
	for who, ids := range want {
		res, err := ts.client(bearer(who+"-token")).ListTasks(ctxT(t), &wfdv1.ListTasksRequest{Mine: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, task := range res.Tasks {
			got = append(got, task.TaskId)
		}
		slices.Sort(got)
		slices.Sort(ids)
		if !slices.Equal(got, ids) {
			t.Errorf("%s's tasks: %v, want %v", who, got, ids)
		}
	}
	_, err := ts.client(bearer("ada-token")).ListTasks(ctxT(t), &wfdv1.ListTasksRequest{Mine: true, Assignee: "bob"})
	wantCode(t, err, connect.CodeInvalidArgument, "mine and assignee")

	open := startServer(t, serverConfig{})
	_, err = open.client().ListTasks(ctxT(t), &wfdv1.ListTasksRequest{Mine: true})
	wantCode(t, err, connect.CodeFailedPrecondition, "authenticated")
}
