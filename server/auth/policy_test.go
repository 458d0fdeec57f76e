package auth_test

import (
	"testing"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/server/auth"
)

func TestPolicy(t *testing.T) {
	for _, tc := range []struct {
		role, procedure string
		want            bool
	}{
		{"reader", wfdv1connect.WorkflowServiceGetHandlerProcedure, true},
		{"reader", wfdv1connect.WorkflowServiceRunWorkflowProcedure, false},
		{"admin", wfdv1connect.WorkerServiceConnectProcedure, true},
		{"admin", "/wfd.v1.WorkflowService/NotYetWritten", true},
		{"operator", "/wfd.v1.WorkflowService/NotYetWritten", false},
		{"tasks", wfdv1connect.WorkflowServiceListTasksProcedure, true},
		{"tasks", wfdv1connect.WorkflowServiceCancelHandlerProcedure, false},
		{"operator", wfdv1connect.WorkflowServiceUpgradeHandlersProcedure, true},
		{"operator", wfdv1connect.WorkflowServiceDeleteWorkflowVersionProcedure, true},
		{"starter", wfdv1connect.WorkflowServiceSetCurrentVersionProcedure, false},
		{"reader", wfdv1connect.WorkflowServiceUpgradeHandlersProcedure, false},
	} {
		if got := auth.Allowed(auth.Identity{Subject: "x", Roles: []string{tc.role}}, tc.procedure); got != tc.want {
			t.Errorf("Allowed(%s, %s) = %v, want %v", tc.role, tc.procedure, got, tc.want)
		}
	}
	if auth.Allowed(auth.Identity{Subject: "x"}, wfdv1connect.WorkflowServiceListWorkflowsProcedure) {
		t.Error("an identity with no roles was allowed")
	}
}
