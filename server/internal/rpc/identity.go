package rpc

import (
	"context"
	"slices"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/server/auth"
)

// GetIdentity answers with the caller as the authorizer saw it. Without
// authentication every caller may do everything and has no subject;
// with it, a caller whose credentials fail never gets here (the
// authorizer answers Unauthenticated).
func (v *Service) GetIdentity(ctx context.Context, _ *wfdv1.GetIdentityRequest) (*wfdv1.GetIdentityResponse, error) {
	if !v.authOn {
		return &wfdv1.GetIdentityResponse{}, nil
	}
	id, _ := auth.FromContext(ctx)
	return &wfdv1.GetIdentityResponse{Authentication: true, Subject: id.Subject, Roles: slices.Clone(id.Roles)}, nil
}
