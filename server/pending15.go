package server

// The methods issue 15 adds to the API; each is being built in its own
// change and answers Unimplemented until then.

import (
	"context"
	"errors"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

var errNotYet = errors.New("not implemented yet")

func (s *service) DeleteHandler(context.Context, *wfdv1.DeleteHandlerRequest) (*wfdv1.DeleteHandlerResponse, error) {
	return nil, connect.NewError(connect.CodeUnimplemented, errNotYet)
}

func (s *service) ListPublishedEvents(context.Context, *wfdv1.ListPublishedEventsRequest) (*wfdv1.ListPublishedEventsResponse, error) {
	return nil, connect.NewError(connect.CodeUnimplemented, errNotYet)
}
