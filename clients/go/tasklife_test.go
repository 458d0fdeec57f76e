package client_test

import (
	"testing"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

// TestTaskLife: claim, comment, reassign and let go through the Go
// client; the inbox filters by claim and by group; ListNamespaces of a
// server without others lists the default one.
func TestTaskLife(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	h, err := c.Run(ctxT(t), "expense", map[string]any{"amount": 9.0, "approver": "ada"})
	if err != nil {
		t.Fatal(err)
	}
	task := waitTask(t, c, h.GetHandlerId())
	got, err := c.ClaimTask(ctxT(t), task.GetTaskId(), "ada")
	if err != nil || got.GetClaimedBy() != "ada" {
		t.Fatalf("ClaimTask = %v, %v", got, err)
	}
	if _, err := c.ClaimTask(ctxT(t), task.GetTaskId(), "bob"); err == nil {
		t.Fatal("bob claimed ada's task")
	}
	claimed, _, err := c.Tasks(ctxT(t), client.TaskOptions{HandlerID: h.GetHandlerId(), Claim: wfdv1.TaskClaim_TASK_CLAIM_CLAIMED})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("Tasks claimed = %v, %v", claimed, err)
	}
	if got, err = c.CommentTask(ctxT(t), task.GetTaskId(), "on it", "ada"); err != nil || len(got.GetComments()) != 1 {
		t.Fatalf("CommentTask = %v, %v", got, err)
	}
	if got, err = c.ReassignTask(ctxT(t), task.GetTaskId(), "group:finance", "ada"); err != nil || got.GetAssignee() != "group:finance" || got.GetClaimedBy() != "" {
		t.Fatalf("ReassignTask = %v, %v", got, err)
	}
	group, _, err := c.Tasks(ctxT(t), client.TaskOptions{Assignee: "group:finance", Claim: wfdv1.TaskClaim_TASK_CLAIM_UNCLAIMED})
	if err != nil || len(group) != 1 || group[0].GetTaskId() != task.GetTaskId() {
		t.Fatalf("Tasks for group:finance, unclaimed = %v, %v", group, err)
	}
	if got, err = c.UnclaimTask(ctxT(t), task.GetTaskId(), "ada"); err != nil || got.GetClaimedBy() != "" {
		t.Fatalf("UnclaimTask = %v, %v", got, err)
	}
	ns, err := c.ListNamespaces(ctxT(t))
	if err != nil || len(ns) != 1 || ns[0].GetName() != "default" {
		t.Fatalf("ListNamespaces = %v, %v", ns, err)
	}
}
