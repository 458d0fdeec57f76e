package server_test

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"connectrpc.com/connect"
	bbolt "go.etcd.io/bbolt"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// TestDamagedPageOnWritePath: a released handler whose answer's commit
// must rewrite a damaged page (a leaf of the residency index, which
// loading it does not read) fails that call with DataLoss, every time,
// and nothing else: health stays SERVING and /readyz 200 however often
// it is tried, and the other handlers are answered. (The store used to
// report bbolt's assertion on that page as Unavailable: every attempt
// flipped the server to NOT_SERVING.)
func TestDamagedPageOnWritePath(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir})
	c := ts.client()
	const n = 300
	id := func(i int) string { return fmt.Sprintf("h-%03d", i) }
	for i := range n {
		if _, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: id(i), Input: st(t, map[string]any{"amount": i})}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		waitIdle(t, c, id(i))
		release(t, c, id(i))
	}
	ts.stop()
	damaged := damageLeaf(t, filepath.Join(dir, "wfd.db"), "idx_residency")
	if len(damaged) == 0 {
		t.Fatal("the damaged leaf holds no handler's entry")
	}

	ts = startServer(t, serverConfig{dir: dir})
	c = ts.client()
	answer := func(h string) error {
		_, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: h, Event: &wfdv1.Event{Type: "approval", Data: st(t, map[string]any{"approved": true})}})
		return err
	}
	// A commit that touches the damaged page fails: the answers whose
	// index entries are on it, and those whose entries move into its key
	// range or whose leaves are rebalanced with it (many, as the released
	// entries are deleted); never with a retryable Unavailable, and the
	// other answers are taken.
	answered := 0
	for round := range 2 {
		for i := range n {
			err := answer(id(i))
			switch code := connect.CodeOf(err); {
			case err == nil:
				answered++
			case damaged[id(i)] && code != connect.CodeDataLoss:
				t.Fatalf("round %d: answer to %s (its residency entry on the damaged page): %v, want DataLoss", round, id(i), err)
			case code != connect.CodeDataLoss && code != connect.CodeFailedPrecondition:
				t.Fatalf("round %d: answer to %s: %v, want it taken or DataLoss", round, id(i), err)
			}
			if s := healthOf(t, ts); s != healthpb.HealthCheckResponse_SERVING {
				t.Fatalf("round %d, after %s: health %v, want SERVING", round, id(i), s)
			}
		}
	}
	if answered == 0 {
		t.Fatalf("no answer taken: the damage of one page failed every commit")
	}
	res, err := http.Get("http://" + ts.addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/readyz %d after the damaged commits, want 200", res.StatusCode)
	}
	t.Logf("%d handlers' entries on the damaged page; %d of %d answers taken", len(damaged), answered, n)
}

// damageLeaf overwrites the page id in the header of a leaf page in the
// middle of bucket's tree (bbolt then refuses the page: "Page expected to
// be ...") and returns the handler ids its keys name (an index key ends
// in the handler's order key, whose id follows the creation time).
func damageLeaf(t *testing.T, path, bucket string) map[string]bool {
	t.Helper()
	var pageSize int
	var leaf uint64
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bbolt.Tx) error {
		pageSize = db.Info().PageSize
		root := uint64(tx.Bucket([]byte(bucket)).Root())
		page := readPage(t, path, root, pageSize)
		if flags := binary.LittleEndian.Uint16(page[8:]); flags&0x01 == 0 {
			return fmt.Errorf("bucket %s's root page %d is not a branch (flags %#x): write more handlers", bucket, root, flags)
		}
		count := int(binary.LittleEndian.Uint16(page[10:]))
		child := page[16+(count/2)*16:]
		leaf = binary.LittleEndian.Uint64(child[8:])
		return nil
	})
	_ = db.Close()
	if err != nil {
		t.Fatal(err)
	}
	page := readPage(t, path, leaf, pageSize)
	ids := map[string]bool{}
	count := int(binary.LittleEndian.Uint16(page[10:]))
	for i := range count {
		e := page[16+i*16:]
		pos, ksize := binary.LittleEndian.Uint32(e[4:]), binary.LittleEndian.Uint32(e[8:])
		key := e[pos : pos+ksize]
		// The key ends in "h-NNN".
		ids[string(key[len(key)-5:])] = true
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.WriteAt([]byte("8 bytes!"), int64(leaf)*int64(pageSize)); err != nil {
		t.Fatal(err)
	}
	return ids
}

func readPage(t *testing.T, path string, id uint64, pageSize int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	b := make([]byte, pageSize)
	if _, err := f.ReadAt(b, int64(id)*int64(pageSize)); err != nil {
		t.Fatal(err)
	}
	return b
}

// healthOf is the server's grpc.health.v1 status.
func healthOf(t *testing.T, ts *testServer) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	check := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](
		ts.http, "http://"+ts.addr+"/grpc.health.v1.Health/Check", connect.WithGRPC())
	res, err := check.CallUnary(ctxT(t), connect.NewRequest(&healthpb.HealthCheckRequest{}))
	if err != nil {
		t.Fatalf("health Check: %v", err)
	}
	return res.Msg.GetStatus()
}
