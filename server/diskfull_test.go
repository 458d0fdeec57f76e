//go:build linux

package server_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testlog"
)

// TestStoreErrorShowsNoPath fills the file system under a real store (a
// small tmpfs, so it needs root; skipped otherwise): the call that cannot
// commit answers Unavailable with a clear message and an error id, not the
// store's file path, and the log holds the path under that id.
func TestStoreErrorShowsNoPath(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("needs a small file system to fill (mounting a tmpfs needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	var logs testlog.Buffer
	ts := startServer(t, serverConfig{dir: dir, logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError}))})
	c := ts.client()
	run(t, c, "echo", nil)

	fill, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := fill.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the file system: %v", err)
			}
			break
		}
	}
	_ = fill.Close() // the file system is full on purpose: an error here is that same ENOSPC
	// Free pages in the file may take a few commits; the file system is
	// full, so the store must grow soon.
	var callErr error
	for i := 0; i < 5000 && callErr == nil; i++ {
		_, callErr = c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "echo", Input: st(t, map[string]any{"pad": strings.Repeat("p", 512)})})
	}
	if err := os.Remove(fill.Name()); err != nil {
		t.Fatal(err)
	}
	var ce *connect.Error
	if !errors.As(callErr, &ce) || ce.Code() != connect.CodeUnavailable {
		t.Fatalf("a write on a full file system answered %v, want Unavailable", callErr)
	}
	m := regexp.MustCompile(`^the store is unavailable; retry later \(error id ([A-Z2-7]{12})\)$`).FindStringSubmatch(ce.Message())
	if m == nil || strings.Contains(ce.Message(), dir) {
		t.Fatalf("message %q", ce.Message())
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "error_id="+m[1]) && strings.Contains(line, dir) && strings.Contains(line, "no space left on device") {
			return
		}
	}
	t.Fatalf("no log line has error id %s with the path and the cause:\n%s", m[1], logs.String())
}
