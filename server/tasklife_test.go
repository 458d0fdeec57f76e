package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestTaskLifecycle: a pending task is claimed (only its holder may
// answer it; another's claim is FAILED_PRECONDITION naming the holder),
// commented on, let go, reassigned (which ends a claim) and answered; it
// keeps its comments, each change is a record of its handler's stream,
// and a released handler takes the changes too. Without authentication
// anyone may let go of or hand on a task someone holds.
func TestTaskLifecycle(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	for _, released := range []bool{false, true} {
		h := run(t, c, "expense", map[string]any{"amount": 12.0, "approver": "ada"})
		task := waitTask(t, c, h.HandlerId)
		release := func() {
			t.Helper()
			if !released {
				return
			}
			waitIdle(t, c, h.HandlerId)
			if _, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: h.HandlerId}); err != nil {
				t.Fatal(err)
			}
		}
		release()
		cl, err := c.ClaimTask(ctxT(t), &wfdv1.ClaimTaskRequest{TaskId: task.TaskId, By: "ada"})
		if err != nil || cl.GetTask().GetClaimedBy() != "ada" || cl.GetTask().GetClaimedAt() == nil {
			t.Fatalf("ClaimTask by ada = %v, %v", cl.GetTask(), err)
		}
		// Claiming again changes nothing; bob may not take it, nor answer it.
		if _, err := c.ClaimTask(ctxT(t), &wfdv1.ClaimTaskRequest{TaskId: task.TaskId, By: "ada"}); err != nil {
			t.Fatal(err)
		}
		_, err = c.ClaimTask(ctxT(t), &wfdv1.ClaimTaskRequest{TaskId: task.TaskId, By: "bob"})
		wantCode(t, err, connect.CodeFailedPrecondition, "claimed by ada")
		_, err = c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, CompletedBy: "bob", Answer: st(t, map[string]any{"approved": true})})
		wantCode(t, err, connect.CodeFailedPrecondition, "claimed by ada")
		release()
		// A retry (same comment id) adds the comment once.
		var cm *wfdv1.CommentTaskResponse
		for range 2 {
			cm, err = c.CommentTask(ctxT(t), &wfdv1.CommentTaskRequest{TaskId: task.TaskId, By: "bob", Text: "the receipt is missing", CommentId: "c-1"})
			if err != nil || len(cm.GetTask().GetComments()) != 1 || cm.GetTask().GetComments()[0].GetText() != "the receipt is missing" ||
				cm.GetTask().GetComments()[0].GetCommentId() != "c-1" {
				t.Fatalf("CommentTask = %v, %v", cm.GetTask(), err)
			}
		}
		// bob lets go of ada's claim (no authentication: anyone may), then
		// hands the task to the finance group.
		un, err := c.UnclaimTask(ctxT(t), &wfdv1.UnclaimTaskRequest{TaskId: task.TaskId, By: "bob"})
		if err != nil || un.GetTask().GetClaimedBy() != "" {
			t.Fatalf("UnclaimTask = %v, %v", un.GetTask(), err)
		}
		if _, err := c.ClaimTask(ctxT(t), &wfdv1.ClaimTaskRequest{TaskId: task.TaskId, By: "cy"}); err != nil {
			t.Fatal(err)
		}
		re, err := c.ReassignTask(ctxT(t), &wfdv1.ReassignTaskRequest{TaskId: task.TaskId, By: "bob", Assignee: "group:finance"})
		if err != nil || re.GetTask().GetAssignee() != "group:finance" || re.GetTask().GetClaimedBy() != "" {
			t.Fatalf("ReassignTask = %v, %v", re.GetTask(), err)
		}
		list, err := c.ListTasks(ctxT(t), &wfdv1.ListTasksRequest{Assignee: "group:finance", Statuses: []wfdv1.TaskStatus{wfdv1.TaskStatus_TASK_STATUS_PENDING}})
		if err != nil || !slices.ContainsFunc(list.GetTasks(), func(x *wfdv1.Task) bool { return x.GetTaskId() == task.TaskId }) {
			t.Fatalf("ListTasks for group:finance = %v, %v", list.GetTasks(), err)
		}
		if l, _ := c.ListTasks(ctxT(t), &wfdv1.ListTasksRequest{Assignee: "ada", HandlerId: h.HandlerId}); len(l.GetTasks()) != 0 {
			t.Fatalf("ListTasks for ada after the reassignment = %v", l.GetTasks())
		}
		release()
		done, err := c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, CompletedBy: "dee", Answer: st(t, map[string]any{"approved": true})})
		if err != nil || done.GetTask().GetStatus() != wfdv1.TaskStatus_TASK_STATUS_COMPLETED || len(done.GetTask().GetComments()) != 1 {
			t.Fatalf("CompleteTask = %v, %v; want completed, keeping its comment", done.GetTask(), err)
		}
		waitStatus(t, c, h.HandlerId, wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED)
		var changes []string
		for _, r := range collect(t, c, h.HandlerId, 0) {
			if tc := r.GetTaskChanged(); tc != nil {
				changes = append(changes, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", strings.TrimPrefix(tc.GetChange().String(), "TASK_CHANGE_"), tc.GetBy(), tc.GetTo(), tc.GetText())))
			}
		}
		want := []string{"ASKED", "CLAIMED ada", "COMMENTED bob  the receipt is missing", "UNCLAIMED bob", "CLAIMED cy", "REASSIGNED bob group:finance", "ANSWERED dee"}
		if !slices.Equal(changes, want) {
			t.Fatalf("task records (released %v):\n%q\nwant\n%q", released, changes, want)
		}
		// A task that is not pending takes no change.
		_, err = c.CommentTask(ctxT(t), &wfdv1.CommentTaskRequest{TaskId: task.TaskId, By: "ada", Text: "late"})
		wantCode(t, err, connect.CodeFailedPrecondition, "completed")
	}
	h := run(t, c, "expense", map[string]any{"amount": 1.0})
	task := waitTask(t, c, h.HandlerId)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{func() error { _, err := c.ClaimTask(ctxT(t), &wfdv1.ClaimTaskRequest{TaskId: task.TaskId}); return err }(), "by is required"},
		{func() error {
			_, err := c.CommentTask(ctxT(t), &wfdv1.CommentTaskRequest{TaskId: task.TaskId, By: "x", Text: strings.Repeat("x", 4097)})
			return err
		}(), "text"},
		{func() error {
			_, err := c.ReassignTask(ctxT(t), &wfdv1.ReassignTaskRequest{TaskId: task.TaskId, By: "x"})
			return err
		}(), "assignee"},
	} {
		wantCode(t, tc.err, connect.CodeInvalidArgument, tc.want)
	}
	_, err := c.ClaimTask(ctxT(t), &wfdv1.ClaimTaskRequest{TaskId: "nope:1", By: "x"})
	wantCode(t, err, connect.CodeNotFound, "")
}

// TestTaskClaimsWithRoles: with authentication, who acts is the caller;
// one may claim only a task one may answer; an operator may take over a
// task someone holds (claim it, answer it).
func TestTaskClaimsWithRoles(t *testing.T) {
	is := newJWTIssuer(t)
	ts := startAuthServer(t, is, "  - {token: ada-token, subject: ada, roles: [tasks]}\n  - {token: bob-token, subject: bob, roles: [tasks]}\n"+
		"  - {token: lead-token, subject: lead, roles: [tasks, operator]}\n")
	admin := ts.client(bearer("admin-token"))
	h := run(t, admin, "expense", map[string]any{"amount": 5.0, "approver": "ada"})
	task := waitTask(t, admin, h.HandlerId)
	ada, bob, op := ts.client(bearer("ada-token")), ts.client(bearer("bob-token")), ts.client(bearer("lead-token"))
	_, err := bob.ClaimTask(ctxT(t), &wfdv1.ClaimTaskRequest{TaskId: task.TaskId})
	wantCode(t, err, connect.CodePermissionDenied, "assigned to")
	cl, err := ada.ClaimTask(ctxT(t), &wfdv1.ClaimTaskRequest{TaskId: task.TaskId, By: "someone-else"})
	if err != nil || cl.GetTask().GetClaimedBy() != "ada" {
		t.Fatalf("ClaimTask by ada = %v, %v; want claimed by the caller", cl.GetTask(), err)
	}
	if _, err := op.ClaimTask(ctxT(t), &wfdv1.ClaimTaskRequest{TaskId: task.TaskId}); err != nil {
		t.Fatalf("an operator takes over ada's claim: %v", err)
	}
	_, err = ada.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, Answer: st(t, map[string]any{"approved": true})})
	wantCode(t, err, connect.CodeFailedPrecondition, "claimed by lead")
	done, err := op.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, Answer: st(t, map[string]any{"approved": true})})
	if err != nil || done.GetTask().GetCompletedBy() != "lead" {
		t.Fatalf("CompleteTask by the operator = %v, %v", done.GetTask(), err)
	}
}

// TestTaskEscalation: an expense review nobody answers in time escalates:
// the task goes to group:managers (ada's claim ends), is overdue
// (ListTasks overdue), an event is published under expenses:escalated
// naming it, and the stream records it; a released handler is loaded for
// it. The task stays pending and is answered afterwards.
func TestTaskEscalation(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	for _, released := range []bool{false, true} {
		h := run(t, c, "expense", map[string]any{"amount": 3.0, "approver": "ada", "escalate_s": 0.3})
		task := waitTask(t, c, h.HandlerId)
		if task.GetDue() == nil || task.GetEscalated() {
			t.Fatalf("task before its escalation: due %v, escalated %v", task.GetDue(), task.GetEscalated())
		}
		if _, err := c.ClaimTask(ctxT(t), &wfdv1.ClaimTaskRequest{TaskId: task.TaskId, By: "ada"}); err != nil {
			t.Fatal(err)
		}
		if released {
			waitIdle(t, c, h.HandlerId)
			if _, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: h.HandlerId}); err != nil {
				t.Fatal(err)
			}
		}
		var got *wfdv1.Task
		testwait.For(t, "the task escalated", func() bool {
			res, err := c.GetTask(ctxT(t), &wfdv1.GetTaskRequest{TaskId: task.TaskId})
			if err != nil {
				t.Fatal(err)
			}
			got = res.GetTask()
			return got.GetEscalated()
		})
		if got.GetAssignee() != "group:managers" || got.GetClaimedBy() != "" || got.GetStatus() != wfdv1.TaskStatus_TASK_STATUS_PENDING {
			t.Fatalf("escalated task (released %v) = %v", released, got)
		}
		over, err := c.ListTasks(ctxT(t), &wfdv1.ListTasksRequest{Overdue: true, HandlerId: h.HandlerId})
		if err != nil || len(over.GetTasks()) != 1 {
			t.Fatalf("ListTasks overdue = %v, %v", over.GetTasks(), err)
		}
		pub, err := c.ListPublishedEvents(ctxT(t), &wfdv1.ListPublishedEventsRequest{Key: "expenses:escalated"})
		if err != nil || !slices.ContainsFunc(pub.GetEvents(), func(e *wfdv1.PublishedEvent) bool {
			return e.GetData().GetFields()["task_id"].GetStringValue() == task.TaskId &&
				e.GetData().GetFields()["reassigned"].GetStringValue() == "group:managers"
		}) {
			t.Fatalf("published under expenses:escalated: %v, %v", pub.GetEvents(), err)
		}
		if _, err := c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, CompletedBy: "max",
			Answer: st(t, map[string]any{"approved": true})}); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, c, h.HandlerId, wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED)
		var escalated []string
		for _, r := range collect(t, c, h.HandlerId, 0) {
			if tc := r.GetTaskChanged(); tc.GetChange() == wfdv1.TaskChange_TASK_CHANGE_ESCALATED {
				escalated = append(escalated, tc.GetAssignee()+" "+tc.GetTo()+" "+tc.GetText())
			}
		}
		if want := []string{"ada group:managers expenses:escalated"}; !slices.Equal(escalated, want) {
			t.Fatalf("escalation records %q, want %q", escalated, want)
		}
	}
	_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "expense", Input: st(t, map[string]any{"escalate_s": 5.0, "deadline_s": 2.0})})
	wantCode(t, err, connect.CodeInvalidArgument, "escalate_s")
}
