// Command notesgen writes server/testdata/notes-released.db (see
// ../README.md): a bbolt store, schema 3, holding two released handlers of
// goldenwf.Notes, idle with an outside event type and a whole-run deadline.
// The wfd that wrote it (commit fe775f8) kept those two as pseudo-waiters
// ("~external/note", "~timeout") in the stored metadata; later versions
// keep them as fields, and must still read and index this file.
//
// It drives a real server through its API: run, send one note, wait for
// idle, release, shut down. It was run once, at commit fe775f8, from the
// repository root:
//
//	go run ./server/testdata/notesgen
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http/httptest"
	"os"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/server/testdata/goldenwf"
)

const storePath = "server/testdata/notes-released.db"

// The handlers' ids.
var ids = []string{"golden-notes", "golden-notes-late"}

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	if err := os.Remove(storePath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	store, err := bolt.Open(storePath, bolt.Options{})
	if err != nil {
		return err
	}
	srv, err := server.New(ctx, server.Options{
		Store: store, Workflows: []engine.Workflow{goldenwf.Notes()}, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		store.Close()
		return err
	}
	hs := httptest.NewServer(srv.Handler())
	c := wfdv1connect.NewWorkflowServiceClient(hs.Client(), hs.URL)
	for _, id := range ids {
		if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "notes", HandlerId: id}); err != nil {
			return fmt.Errorf("run: %w", err)
		}
		data, _ := structpb.NewStruct(map[string]any{"text": "first"})
		if _, err := c.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "note", Data: data}}); err != nil {
			return fmt.Errorf("send: %w", err)
		}
		if err := waitIdle(ctx, c, id); err != nil {
			return err
		}
		res, err := c.ReleaseHandler(ctx, &wfdv1.ReleaseHandlerRequest{HandlerId: id})
		if err != nil {
			return fmt.Errorf("release: %w", err)
		}
		if res.Handler.Residency != wfdv1.Residency_RESIDENCY_RELEASED {
			return fmt.Errorf("after release: %v", res.Handler)
		}
	}
	hs.Close()
	if err := srv.Close(ctx); err != nil {
		return err
	}
	return store.Close()
}

func waitIdle(ctx context.Context, c wfdv1connect.WorkflowServiceClient, id string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id})
		if err != nil {
			return err
		}
		if res.Handler.Idle != nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("handler not idle: %v", res.Handler)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
