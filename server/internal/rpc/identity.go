package rpc

import (
	"context"
	"slices"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/namespace"

	"github.com/wfd-dev/wfd/server/auth"
)

// GetIdentity answers with the caller as the authorizer saw it in the
// call's namespace. Without authentication every caller may do
// everything and has no subject; with it, a caller whose credentials fail
// never gets here (the authorizer answers Unauthenticated).
func (v *Service) GetIdentity(ctx context.Context, _ *wfdv1.GetIdentityRequest) (*wfdv1.GetIdentityResponse, error) {
	ns := namespace.Default
	if info, ok := connect.CallInfoForHandlerContext(ctx); ok {
		ns = namespace.Of(info.RequestHeader().Get(namespace.Header))
	}
	if !v.authOn {
		return &wfdv1.GetIdentityResponse{Namespace: ns}, nil
	}
	id, _ := auth.FromContext(ctx)
	return &wfdv1.GetIdentityResponse{Authentication: true, Subject: id.Subject, Roles: slices.Clone(id.Roles), Namespace: ns}, nil
}

// NamespaceInfo is a namespace as ListNamespaces shows it.
type NamespaceInfo struct {
	Name      string
	Retention time.Duration // 0: forever
	Roles     []string      // the caller's there; nil without authentication
}

// ListNamespaces lists the namespaces served where the caller holds a
// role (all of them without authentication).
func (v *Service) ListNamespaces(ctx context.Context, _ *wfdv1.ListNamespacesRequest) (*wfdv1.ListNamespacesResponse, error) {
	var who *auth.Identity
	if v.authOn {
		id, _ := auth.FromContext(ctx)
		who = &id
	}
	res := &wfdv1.ListNamespacesResponse{}
	if v.namespaces == nil {
		return &wfdv1.ListNamespacesResponse{Namespaces: []*wfdv1.Namespace{{Name: namespace.Default}}}, nil
	}
	for _, n := range v.namespaces(ctx, who) {
		out := &wfdv1.Namespace{Name: n.Name, Roles: n.Roles}
		if n.Retention > 0 {
			out.Retention = durationpb.New(n.Retention)
		}
		res.Namespaces = append(res.Namespaces, out)
	}
	return res, nil
}
