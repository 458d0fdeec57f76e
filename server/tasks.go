package server

import (
	"context"
	"errors"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

var errNotYet = errors.New("not implemented yet")

func (v *service) ListTasks(context.Context, *wfdv1.ListTasksRequest) (*wfdv1.ListTasksResponse, error) {
	return nil, connect.NewError(connect.CodeUnimplemented, errNotYet)
}

func (v *service) GetTask(context.Context, *wfdv1.GetTaskRequest) (*wfdv1.GetTaskResponse, error) {
	return nil, connect.NewError(connect.CodeUnimplemented, errNotYet)
}

func (v *service) CompleteTask(context.Context, *wfdv1.CompleteTaskRequest) (*wfdv1.CompleteTaskResponse, error) {
	return nil, connect.NewError(connect.CodeUnimplemented, errNotYet)
}

func (v *service) PublishEvent(context.Context, *wfdv1.PublishEventRequest) (*wfdv1.PublishEventResponse, error) {
	return nil, connect.NewError(connect.CodeUnimplemented, errNotYet)
}
