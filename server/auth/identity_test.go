package auth_test

import (
	"slices"
	"testing"

	"github.com/wfd-dev/wfd/server/auth"
)

func TestIdentityIn(t *testing.T) {
	id := auth.Identity{Subject: "ada", Roles: []string{"reader", "acme/tasks", "acme/reader", "beta/admin", "acme/", "/x"}}
	for _, tc := range []struct {
		ns   string
		want []string
	}{
		{"default", []string{"reader"}},
		{"acme", []string{"reader", "tasks"}},
		{"beta", []string{"reader", "admin"}},
		{"gamma", []string{"reader"}},
	} {
		got := id.In(tc.ns)
		if got.Subject != "ada" || !slices.Equal(got.Roles, tc.want) {
			t.Errorf("In(%q) = %v, want roles %v", tc.ns, got, tc.want)
		}
	}
	if auth.Allowed(id.In("gamma"), "/wfd.v1.WorkflowService/DeleteHandler") || !auth.Allowed(id.In("beta"), "/wfd.v1.WorkflowService/DeleteHandler") {
		t.Error("admin in beta only: DeleteHandler allowed in beta, refused in gamma")
	}
}
