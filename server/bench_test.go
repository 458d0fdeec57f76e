package server_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// BenchmarkParkResume is one approval handler started, parked and answered
// through the API over loopback (gRPC protocol, the store without fsync),
// from GOMAXPROCS×16 concurrent clients in this process: the server's CPU
// and allocations per handler, plus the client's. `wfd bench` measures the
// same with fsync and the client in another process.
func BenchmarkParkResume(b *testing.B) {
	ts := startServer(b, serverConfig{})
	api := ts.client(connect.WithGRPC())
	ctx := context.Background()
	answer := &wfdv1.Event{Type: "approval", Data: &structpb.Struct{Fields: map[string]*structpb.Value{
		"approved": structpb.NewBoolValue(true),
	}}}
	input := &structpb.Struct{Fields: map[string]*structpb.Value{"amount": structpb.NewNumberValue(42)}}
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		run := &wfdv1.RunWorkflowRequest{Workflow: "approval", Input: input}
		send := &wfdv1.SendEventRequest{Event: answer}
		for pb.Next() {
			res, err := api.RunWorkflow(ctx, run)
			if err != nil {
				b.Error(err)
				return
			}
			h := res.GetHandler()
			// A slow step run (past the linger) parks after the
			// response; the answer is only accepted once it waits.
			for h.GetIdle() == nil {
				time.Sleep(100 * time.Microsecond)
				g, err := api.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: h.GetHandlerId()})
				if err != nil {
					b.Error(err)
					return
				}
				h = g.GetHandler()
			}
			send.HandlerId = h.GetHandlerId()
			sres, err := api.SendEvent(ctx, send)
			if err != nil {
				b.Error(err)
				return
			}
			// A slow step run (past the linger) completes after the
			// response; the benchmark does not wait for it.
			if s := sres.GetHandler().GetStatus(); s != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED && s != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
				b.Errorf("handler %s is %v after its answer", send.HandlerId, s)
				return
			}
		}
	})
}
