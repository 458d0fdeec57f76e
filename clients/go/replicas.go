package client

import (
	"context"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// Replicas lists the live replicas sharing the server's database (wfd
// serve --replica-id), by id; none for a single-process server. A call
// for a handler another replica owns is Unavailable, its message naming
// that replica and its address: retry against that address (calls are
// not forwarded between replicas yet).
func (c *Client) Replicas(ctx context.Context) ([]*wfdv1.Replica, error) {
	resp, err := c.svc.ListReplicas(ctx, &wfdv1.ListReplicasRequest{})
	if err != nil {
		return nil, err
	}
	return resp.GetReplicas(), nil
}
