package server_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/server"
)

// Example_embed embeds wfd in a Go program: a workflow of its own, a
// bbolt store, the server on a loopback port, and a run through the Go
// client.
func Example_embed() {
	// A workflow: one step that greets the name in its input.
	greet := engine.Workflow{
		Name: "greet",
		Steps: []engine.Step{{
			Name:    "greet",
			Accepts: []string{engine.StartEvent},
			Emits:   []string{engine.StopEvent},
			Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
				name := in.Data.GetFields()["name"].GetStringValue()
				return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
					"greeting": structpb.NewStringValue("hello, " + name),
				}})
			},
		}},
	}

	dir, err := os.MkdirTemp("", "wfd-example")
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	store, err := bolt.Open(filepath.Join(dir, "wfd.db"), bolt.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = store.Close() }()

	ctx, stop := context.WithCancel(context.Background())
	srv, err := server.New(ctx, server.Options{
		Store:     store,
		Workflows: []engine.Workflow{greet},
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		log.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l, 5*time.Second) }()

	c, err := client.Dial(l.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	h, err := c.Run(ctx, "greet", map[string]any{"name": "gopher"})
	if err != nil {
		log.Fatal(err)
	}
	for rec, err := range c.Stream(ctx, h.GetHandlerId(), 0) {
		if err != nil {
			log.Fatal(err)
		}
		if fin := rec.GetHandlerFinished(); fin != nil {
			fmt.Println(fin.GetStatus(), fin.GetResult().GetFields()["greeting"].GetStringValue())
		}
	}

	stop() // shuts the server down gracefully
	if err := <-served; err != nil {
		log.Fatal(err)
	}
	// Output: HANDLER_STATUS_COMPLETED hello, gopher
}
