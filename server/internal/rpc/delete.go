package rpc

import (
	"context"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// DeleteHandler removes a finished handler with everything stored under
// its id (metadata, checkpoint with its idempotency keys, stream records,
// tasks, index entries) in one commit. The published-event log is not
// touched: it is immutable.
func (v *Service) DeleteHandler(ctx context.Context, req *wfdv1.DeleteHandlerRequest) (*wfdv1.DeleteHandlerResponse, error) {
	id := req.GetHandlerId()
	if err := checkHandlerID(id); err != nil {
		return nil, err
	}
	if err := v.rt.DeleteHandler(ctx, id); err != nil {
		return nil, err
	}
	return &wfdv1.DeleteHandlerResponse{}, nil
}
