//go:build linux

package main_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	bbolt "go.etcd.io/bbolt"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// storeHandlers is how many handlers storeTemplate writes: enough that
// the handlers bucket and its indexes span several pages under a branch
// page.
const storeHandlers = 300

func storeID(i int) string { return fmt.Sprintf("store-%04d", i) }

// TestDamagedStore starts wfd serve and wfd store check on copies of one
// store, damaged in several ways.
func TestDamagedStore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wfd and runs it: not in -short mode")
	}
	bin := buildWfd(t)
	good := storeTemplate(t, bin)
	pageSize, _ := bucketRoot(t, good, "handlers")

	t.Run("sound", func(t *testing.T) {
		dir := copyStore(t, good)
		code, stdout, stderr := runWfd(t, bin, "store", "check", "--data", dir)
		if code != 0 || !strings.Contains(stdout, "no problems found") {
			t.Fatalf("wfd store check on a sound store: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
	})

	// Damage that start-up meets: wfd serve exits with one line that says
	// what is wrong with which file and what to do; wfd store check finds
	// it too.
	startup := []struct {
		name    string
		damage  func(t *testing.T, path string)
		problem string
	}{
		{"cut short", func(t *testing.T, path string) {
			if err := os.Truncate(path, fileSize(t, path)/2); err != nil {
				t.Fatal(err)
			}
		}, "it was cut short"},
		{"meta pages overwritten", func(t *testing.T, path string) {
			writeAt(t, path, 0, bytes.Repeat([]byte{0xA5}, 2*pageSize))
		}, "neither meta page is valid"},
		{"16 bytes of bit rot in a page read at start-up", func(t *testing.T, path string) {
			// The status index is what start-up reads to find the
			// running handlers; its root page now says it is another.
			_, root := bucketRoot(t, path, "idx_status")
			writeAt(t, path, int64(root)*int64(pageSize), []byte("16 bytes of rot!"))
		}, "Page expected to be"},
	}
	for _, tt := range startup {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyStore(t, good)
			path := filepath.Join(dir, "wfd.db")
			tt.damage(t, path)
			code, stdout, stderr := runWfd(t, bin, "serve", "--addr", "127.0.0.1:0", "--data", dir, "--console-addr", "")
			if code != 1 {
				t.Errorf("wfd serve on a damaged store: exit %d, want 1", code)
			}
			oneLine(t, "wfd serve", stdout+stderr, path+" is damaged", tt.problem, "run 'wfd store check --data "+dir+"'", "backup")

			code, stdout, stderr = runWfd(t, bin, "store", "check", "--data", dir)
			if code != 1 || !strings.Contains(stdout, "problem: ") || !strings.Contains(stdout, tt.problem) {
				t.Errorf("wfd store check: exit %d, want 1 and a problem with %q\nstdout: %s", code, tt.problem, stdout)
			}
			oneLine(t, "wfd store check", stderr, path+" is damaged", "backup")
		})
	}

	// A page number in the handlers bucket now points far outside the
	// file: reading the handlers under it faults. The server starts (no
	// running handler is there), those handlers' calls fail with DataLoss,
	// and everything else goes on.
	t.Run("a page of some handlers", func(t *testing.T) {
		dir := copyStore(t, good)
		path := filepath.Join(dir, "wfd.db")
		from, to := breakBranch(t, path, "handlers", 1)
		srv := startWfd(t, bin, dir)
		c := srv.client()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		damaged := 0
		for round := range 2 { // the server survives the faults, and faults again
			for i := range storeHandlers {
				id := storeID(i)
				_, err := c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id})
				if id < from || id >= to {
					if err != nil {
						t.Fatalf("GetHandler %s (outside the damaged range %s..%s): %v", id, from, to, err)
					}
					continue
				}
				if connect.CodeOf(err) != connect.CodeDataLoss {
					t.Fatalf("GetHandler %s (damaged): %v, want data_loss", id, err)
				}
				if round == 0 {
					damaged++
				}
			}
		}
		if damaged == 0 {
			t.Fatalf("no handler in the damaged range %s..%s", from, to)
		}
		if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: "store-zz-late", Input: input(1)}); err != nil {
			t.Fatalf("RunWorkflow after the faults: %v", err)
		}
		t.Logf("%d handlers under the damaged page answered data_loss, twice; the others and a new one worked", damaged)

		// wfd store check refuses to run beside the server, and names it.
		code, _, stderr := runWfd(t, bin, "store", "check", "--data", dir)
		if code != 1 {
			t.Errorf("wfd store check beside the server: exit %d, want 1", code)
		}
		oneLine(t, "wfd store check", stderr, fmt.Sprintf("%s is in use by process %d (", path, srv.cmd.Process.Pid))
		srv.stop(t)
		if out := srv.out.String(); strings.Contains(out, "goroutine ") || strings.Contains(out, "fatal error") {
			t.Errorf("the server's output has a crash in it:\n%s", out)
		}

		code, stdout, stderr := runWfd(t, bin, "store", "check", "--data", dir)
		if code != 1 || !strings.Contains(stdout, "problem: bucket handlers") {
			t.Errorf("wfd store check: exit %d, want 1 and a problem in bucket handlers\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
	})
}

// TestStoreInUse: a second wfd serve on a data directory in use says at
// once which process holds it.
func TestStoreInUse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wfd and runs it: not in -short mode")
	}
	bin := buildWfd(t)
	dir := t.TempDir()
	first := startWfd(t, bin, dir)
	code, stdout, stderr := runWfd(t, bin, "serve", "--addr", "127.0.0.1:0", "--data", dir, "--console-addr", "")
	if code != 1 {
		t.Errorf("second wfd serve: exit %d, want 1", code)
	}
	path := filepath.Join(dir, "wfd.db")
	// The holder's command line, shortened: its start is enough.
	oneLine(t, "second wfd serve", stdout+stderr, fmt.Sprintf("%s is in use by process %d (%s serve ", path, first.cmd.Process.Pid, bin))
	first.stop(t)
}

// TestForeignStore: wfd serve on a data directory whose wfd.db is
// another program's bbolt file exits with one line that says so, naming
// the file and its buckets, and leaves the file as it was.
func TestForeignStore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wfd and runs it: not in -short mode")
	}
	bin := buildWfd(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "wfd.db")
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("accounts"))
		if err != nil {
			return err
		}
		return b.Put([]byte("alice"), []byte("42"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runWfd(t, bin, "serve", "--addr", "127.0.0.1:0", "--data", dir, "--console-addr", "")
	if code != 1 {
		t.Errorf("wfd serve on another program's file: exit %d, want 1", code)
	}
	oneLine(t, "wfd serve", stdout+stderr, path+` is not a wfd store`, `"accounts"`, "--data directory of its own")
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(before, after) {
		t.Fatalf("wfd serve changed the file (%d bytes before, %d after, %v)", len(before), len(after), err)
	}
}

// oneLine checks that out is one line starting "wfd: " that contains
// every one of want, and no trace of a crash.
func oneLine(t *testing.T, what, out string, want ...string) {
	t.Helper()
	line := strings.TrimSuffix(out, "\n")
	if strings.Contains(line, "\n") || !strings.HasPrefix(line, "wfd: ") {
		t.Errorf("%s printed %q, want one line starting with \"wfd: \"", what, out)
	}
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Errorf("%s printed %q, want it to contain %q", what, line, w)
		}
	}
	for _, crash := range []string{"goroutine", "panic", "fatal error"} {
		if strings.Contains(out, crash) {
			t.Errorf("%s printed %q, with %q in it", what, out, crash)
		}
	}
}

// storeTemplate runs wfd serve on a new data directory, starts
// storeHandlers echo handlers, stops it and returns its store file.
func storeTemplate(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	srv := startWfd(t, bin, dir)
	c := srv.client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	parallel(t, 8, storeHandlers, func(i int) error {
		_, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: storeID(i), Input: input(i)})
		return err
	})
	srv.stop(t)
	return filepath.Join(dir, "wfd.db")
}

// copyStore copies the store file into a new data directory.
func copyStore(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wfd.db"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runWfd runs wfd with args and returns its exit status and output.
func runWfd(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("wfd %s did not exit within a minute\n%s%s", strings.Join(args, " "), out.String(), errOut.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("wfd %s: %v", strings.Join(args, " "), err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func writeAt(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// bucketRoot returns the page size and the root page of bucket name in the
// store file at path.
func bucketRoot(t *testing.T, path, name string) (pageSize int, root uint64) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	err = db.View(func(tx *bbolt.Tx) error {
		root = uint64(tx.Bucket([]byte(name)).Root())
		return nil
	})
	if err != nil || root == 0 {
		t.Fatalf("bucket %s: root page %d, %v; want a page of its own", name, root, err)
	}
	return db.Info().PageSize, root
}

// breakBranch points element i of the branch page at the root of bucket
// name far outside the file, as a flipped bit in a page number does, and
// returns the keys [from, to) under that element.
func breakBranch(t *testing.T, path, name string, i int) (from, to string) {
	t.Helper()
	pageSize, root := bucketRoot(t, path, name)
	page := make([]byte, pageSize)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.ReadAt(page, int64(root)*int64(pageSize))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Page header: id u64, flags u16, count u16, overflow u32; then
	// branch elements: pos u32 (of the key, from the element), ksize u32,
	// pgid u64.
	ne := binary.NativeEndian
	flags, count := ne.Uint16(page[8:]), int(ne.Uint16(page[10:]))
	if flags != 0x01 || count < i+2 {
		t.Fatalf("bucket %s: root page %d has flags %#x and %d elements, want a branch page with more than %d", name, root, flags, count, i+1)
	}
	key := func(i int) string {
		e := 16 + 16*i
		pos, ksize := int(ne.Uint32(page[e:])), int(ne.Uint32(page[e+4:]))
		return string(page[e+pos : e+pos+ksize])
	}
	// Far beyond any mapping, yet inside bbolt's bound on page offsets.
	wild := ne.AppendUint64(nil, 0xF000_0000_0000/uint64(pageSize))
	writeAt(t, path, int64(root)*int64(pageSize)+int64(16+16*i+8), wild)
	return key(i), key(i + 1)
}
