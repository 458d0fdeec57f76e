package server_test

import (
	"bufio"
	"context"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/server"
)

// bulky writes n records of about size bytes each (random letters, which
// compression cannot shrink much), then completes.
func bulky(n, size int) engine.Workflow {
	rng := rand.New(rand.NewPCG(1, 2))
	letters := make([]byte, size)
	for i := range letters {
		letters[i] = byte('a' + rng.IntN(26))
	}
	return engine.Workflow{
		Name: "bulky",
		Steps: []engine.Step{{
			Name: "write", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
			Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				for i := range n {
					sc.Write("chunk", &structpb.Struct{Fields: map[string]*structpb.Value{
						"i": structpb.NewNumberValue(float64(i)), "data": structpb.NewStringValue(string(letters)),
					}})
				}
				return sc.Send(engine.StopEvent, &structpb.Struct{})
			},
		}},
	}
}

// unreadClient is an HTTP/2 client whose streams take at most 64 KiB
// before their reader reads: a stream the test does not read blocks the
// server's send at once.
func unreadClient() *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p, HTTP2: &http.HTTP2Config{
		MaxReceiveBufferPerStream: 64 << 10, MaxReceiveBufferPerConnection: 64 << 10,
	}}}
}

// metric reads one unlabelled value of the server's /metrics.
func metric(t *testing.T, ts *testServer, name string) float64 {
	t.Helper()
	res, err := ts.http.Get("http://" + ts.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

var resumeAfter = regexp.MustCompile(`resume after seq (\d+)$`)

// TestStreamUnreadHoldsNoMore: a client that opens a stream and stops
// reading holds the server's stream memory only for the send timeout.
// With room for one record in flight, the unread stream holds it; another
// stream of the same handler, read, ends with ResourceExhausted naming the
// sequence number to resume after, and resuming from it gets every
// record after it, to the end, once the unread stream's send gave up.
func TestStreamUnreadHoldsNoMore(t *testing.T) {
	const records, size = 12, 200 << 10
	ts := startServer(t, serverConfig{workflows: []engine.Workflow{bulky(records, size)}, options: func(o *server.Options) {
		o.Streams = server.StreamLimits{MemoryBytes: 1, BufferBytes: 64 << 10, SendTimeout: 6 * time.Second}
	}})
	ctx := ctxT(t)
	c := ts.client()
	res, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "bulky", Wait: durationpb.New(testwait.Timeout)})
	if err != nil {
		t.Fatal(err)
	}
	id := res.GetHandler().GetHandlerId()
	if res.GetHandler().GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("bulky = %v, want completed", res.GetHandler())
	}

	unread := wfdv1connect.NewWorkflowServiceClient(unreadClient(), "http://"+ts.addr, connect.WithGRPC())
	a, err := unread.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: id})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Close() }()
	if !a.Receive() || a.Msg().GetHeartbeat() == nil {
		t.Fatalf("unread stream's first message: %v, %v", a.Msg(), a.Err())
	}
	testwait.For(t, "the unread stream's send to hold the stream memory", func() bool {
		return metric(t, ts, "wfd_stream_sending_bytes") > 0
	})

	var got []uint64
	after, ended := uint64(0), 0
	for {
		b, err := c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: id, AfterSeq: after})
		if err != nil {
			t.Fatal(err)
		}
		for b.Receive() {
			if r := b.Msg().GetRecord(); r != nil {
				got = append(got, r.GetSeq())
				after = r.GetSeq()
			}
		}
		err = b.Err()
		_ = b.Close()
		if err == nil {
			break
		}
		wantCode(t, err, connect.CodeResourceExhausted, "")
		// The sequence number to resume after: the last record received,
		// or a later internal one that the stream skipped.
		m := resumeAfter.FindStringSubmatch(err.(*connect.Error).Message())
		if m == nil {
			t.Fatalf("ResourceExhausted %q names no sequence number to resume after", err)
		}
		seq, _ := strconv.ParseUint(m[1], 10, 64)
		if seq < after {
			t.Fatalf("ResourceExhausted %q names seq %d, before the last record received (%d)", err, seq, after)
		}
		after = seq
		ended++
	}
	if ended == 0 {
		t.Fatal("the read stream never ran out of stream memory while the unread one held it")
	}
	if len(got) != records+1 {
		t.Fatalf("records over %d resumed streams: %v, want %d and the terminal one", ended+1, got, records)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("records out of order or repeated: %v", got)
		}
	}

	// The unread stream was given up: reading it now ends it with an
	// error rather than the rest of its records.
	n := 0
	for a.Receive() {
		n++
	}
	if a.Err() == nil {
		t.Fatalf("the unread stream ended cleanly after %d more messages, want it cut off", n)
	}
	testwait.For(t, "the stream memory to be free", func() bool { return metric(t, ts, "wfd_stream_sending_bytes") == 0 })
	if v := metric(t, ts, "wfd_streams_ended_behind_total"); v < float64(ended+1) {
		t.Fatalf("wfd_streams_ended_behind_total = %v, want at least %d", v, ended+1)
	}
}
