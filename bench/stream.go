package bench

import (
	"context"
	"errors"
	"fmt"
	"io"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
)

// stream follows one handler's StreamEvents.
type stream struct {
	s      *connect.ServerStreamForClient[wfdv1.StreamEventsResponse]
	id     string
	cancel context.CancelFunc
}

// openStream sends the StreamEvents request; records are read by until.
func openStream(ctx context.Context, api wfdv1connect.WorkflowServiceClient, req *wfdv1.StreamEventsRequest) (*stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	s, err := api.StreamEvents(ctx, req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("StreamEvents %s: %w", req.GetHandlerId(), err)
	}
	return &stream{s: s, id: req.GetHandlerId(), cancel: cancel}, nil
}

// until reads records until want(record) holds. A handler that finishes
// otherwise, or a stream that ends first, is an error.
func (s *stream) until(want func(*wfdv1.Record) bool) error {
	for s.s.Receive() {
		rec := s.s.Msg().GetRecord()
		if rec == nil {
			continue // a heartbeat
		}
		if want(rec) {
			if f := rec.GetHandlerFinished(); f != nil && f.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
				return fmt.Errorf("handler %s ended %v: %s", s.id, f.GetStatus(), f.GetError())
			}
			return nil
		}
		if f := rec.GetHandlerFinished(); f != nil {
			return fmt.Errorf("handler %s ended %v before the awaited record: %s", s.id, f.GetStatus(), f.GetError())
		}
	}
	err := s.s.Err()
	if err == nil || errors.Is(err, io.EOF) {
		err = errors.New("stream ended early")
	}
	return fmt.Errorf("StreamEvents %s: %w", s.id, err)
}

// close ends the stream without reading the rest: cancelling first keeps
// Close from draining a stream that would never end.
func (s *stream) close() {
	s.cancel()
	_ = s.s.Close()
}

func isFinished(r *wfdv1.Record) bool { return r.GetHandlerFinished() != nil }

func isIdle(r *wfdv1.Record) bool { return r.GetIdleChanged().GetIdle() }
