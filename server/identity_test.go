package server_test

import (
	"slices"
	"testing"
	"time"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// TestGetIdentity: without authentication the caller has no identity;
// with it, the caller's subject and roles, from a token or a JWT, whatever
// its roles; a caller without valid credentials is Unauthenticated.
func TestGetIdentity(t *testing.T) {
	res, err := startServer(t, serverConfig{}).client().GetIdentity(ctxT(t), &wfdv1.GetIdentityRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetAuthentication() || res.GetSubject() != "" || len(res.GetRoles()) != 0 {
		t.Errorf("without authentication: %v", res)
	}

	is := newJWTIssuer(t)
	ts := startAuthServer(t, is, "")
	for _, p := range protocols {
		for _, tc := range []struct {
			name, token, subject string
			roles                []string
		}{
			{"token", "worker-token", "worker-user", []string{"worker"}},
			{"jwt", is.token(t, "jo", "wfd", time.Now().Add(time.Hour), "tasks", "reader"), "jo", []string{"tasks", "reader"}},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				res, err := ts.client(append(p.opts, bearer(tc.token))...).GetIdentity(ctxT(t), &wfdv1.GetIdentityRequest{})
				if err != nil {
					t.Fatal(err)
				}
				if !res.GetAuthentication() || res.GetSubject() != tc.subject || !slices.Equal(res.GetRoles(), tc.roles) {
					t.Errorf("identity %v, want %s with %v", res, tc.subject, tc.roles)
				}
			})
		}
		t.Run(p.name+"/unauthenticated", func(t *testing.T) {
			_, err := ts.client(p.opts...).GetIdentity(ctxT(t), &wfdv1.GetIdentityRequest{})
			wantCode(t, err, connect.CodeUnauthenticated, "")
			_, err = ts.client(append(p.opts, bearer("wrong"))...).GetIdentity(ctxT(t), &wfdv1.GetIdentityRequest{})
			wantCode(t, err, connect.CodeUnauthenticated, "")
		})
	}
}
