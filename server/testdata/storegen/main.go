// Command storegen writes the golden stored formats that later versions of
// wfd must still read (see ../README.md):
//
//   - server/testdata/approval-released.db: a bbolt store holding one
//     released approval handler (metadata, checkpoint and stream records);
//   - engine/testdata/handlerstate-v1.golden: that handler's checkpoint, the
//     encoded HandlerState bytes exactly as the store holds them;
//   - persistence/internal/codec/testdata/handlermeta-v1.golden: its stored
//     metadata, the encoded HandlerMeta bytes exactly as the store holds them.
//
// It drives a real server through its API, as a client would: run, wait for
// idle, release, shut down. It was run once, at commit 3c765ed (before the
// engine's state left the public protobuf package), from the repository root:
//
//	go run ./server/testdata/storegen
//
// Run at a later commit it would write that commit's formats instead, and
// the tests would no longer prove that old files stay readable.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	bbolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/workflows"
)

// HandlerID is the released approval handler's id.
const HandlerID = "golden-approval"

const (
	storePath = "server/testdata/approval-released.db"
	statePath = "engine/testdata/handlerstate-v1.golden"
	metaPath  = "persistence/internal/codec/testdata/handlermeta-v1.golden"
)

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
		Store: store, Workflows: workflows.All(), Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		store.Close()
		return err
	}
	hs := httptest.NewServer(srv.Handler())
	c := wfdv1connect.NewWorkflowServiceClient(hs.Client(), hs.URL)

	input, err := structpb.NewStruct(map[string]any{"amount": 42, "requester": "ada"})
	if err != nil {
		return err
	}
	if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: HandlerID, Input: input}); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if err := waitIdle(ctx, c); err != nil {
		return err
	}
	res, err := c.ReleaseHandler(ctx, &wfdv1.ReleaseHandlerRequest{HandlerId: HandlerID})
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	if res.Handler.Residency != wfdv1.Residency_RESIDENCY_RELEASED {
		return fmt.Errorf("after release: %v", res.Handler)
	}
	hs.Close()
	if err := srv.Close(ctx); err != nil {
		return err
	}
	if err := store.Close(); err != nil {
		return err
	}
	return extract()
}

func waitIdle(ctx context.Context, c wfdv1connect.WorkflowServiceClient) error {
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: HandlerID})
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

// extract copies the handler's stored metadata and checkpoint, byte for
// byte, out of the store file.
func extract() error {
	db, err := bbolt.Open(storePath, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(func(tx *bbolt.Tx) error {
		for _, f := range []struct{ bucket, path string }{{"handlers", metaPath}, {"snapshots", statePath}} {
			v := tx.Bucket([]byte(f.bucket)).Get([]byte(HandlerID))
			if v == nil {
				return fmt.Errorf("no %s entry for %s", f.bucket, HandlerID)
			}
			if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(f.path, v, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
}
