package server

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// ListReplicas lists the live replicas of the database (replica mode,
// internal/replica); a single-process server has none.
func (v *service) ListReplicas(ctx context.Context, _ *wfdv1.ListReplicasRequest) (*wfdv1.ListReplicasResponse, error) {
	out := &wfdv1.ListReplicasResponse{}
	if v.s.replica == nil {
		return out, nil
	}
	rs, err := v.s.replica.Replicas(ctx)
	if err != nil {
		return nil, apierr.Hide(v.s.log, err)
	}
	for _, r := range rs {
		out.Replicas = append(out.Replicas, &wfdv1.Replica{
			Id: r.ID, Address: r.Address, StartedAt: timestamppb.New(r.Started), ExpiresAt: timestamppb.New(r.Expires),
		})
	}
	return out, nil
}
