// Command approval runs wfd's approval workflow end to end with the Go
// client: it starts a handler, prints its stream as it happens, answers the
// question when the handler goes idle, and prints the result.
//
//	go run ./examples/go/approval --addr 127.0.0.1:7233
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	client "github.com/wfd-dev/wfd/clients/go"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7233", "wfd server `host:port`")
	approve := flag.Bool("approve", true, "the answer to give")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *addr, *approve); err != nil {
		fmt.Fprintln(os.Stderr, "approval:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string, approve bool) error {
	c, err := client.Dial(addr)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	h, err := c.Run(ctx, "approval", map[string]any{"amount": 42, "requested_by": "ada"})
	if err != nil {
		return err
	}
	fmt.Println("started", h.GetHandlerId())
	for rec, err := range c.Stream(ctx, h.GetHandlerId(), 0, client.StreamInternal()) {
		if err != nil {
			return err
		}
		switch {
		case rec.GetStepStateChanged() != nil:
			s := rec.GetStepStateChanged()
			fmt.Printf("#%d step %s running=%v waiting=%v emitted=%v\n", rec.GetSeq(), s.GetStep(), s.GetRunning(), s.GetWaiting(), s.GetEmittedEventTypes())
		case rec.GetEventWritten() != nil:
			ev := rec.GetEventWritten()
			fmt.Printf("#%d %s: %s\n", rec.GetSeq(), ev.GetType(), compact(ev.GetData()))
		case rec.GetIdleChanged().GetIdle():
			fmt.Printf("#%d idle, answering approved=%v\n", rec.GetSeq(), approve)
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := c.Send(sctx, h.GetHandlerId(), "approval", map[string]any{"approved": approve, "comment": "looks fine"})
			cancel()
			if err != nil {
				return err
			}
		case rec.GetIdleChanged() != nil:
			fmt.Printf("#%d busy\n", rec.GetSeq())
		case rec.GetHandlerFinished() != nil:
			fin := rec.GetHandlerFinished()
			fmt.Printf("#%d %v result=%s %s\n", rec.GetSeq(), fin.GetStatus(), compact(fin.GetResult()), fin.GetError())
		default:
			fmt.Printf("#%d %s\n", rec.GetSeq(), compact(rec))
		}
	}
	return nil
}

func compact(m proto.Message) string {
	b, _ := protojson.Marshal(m)
	return string(b)
}
