package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
)

// Shape of --mode unread.
const (
	unreadHandlers   = 6                     // echo handlers the streams follow
	unreadInputBytes = 900 << 10             // each one's input: its result record is about 1 MiB
	unreadPerConn    = 200                   // unread streams per HTTP/2 connection (the server allows 250)
	unreadWindow     = 64 << 10              // what an unread stream's client takes before it reads
	unreadProbers    = 4                     // clients measuring echo latency meanwhile
	targetUnreadRSS  = 512 << 20             // the bound the issue sets on the server's RSS
	unreadSample     = 50 * time.Millisecond // RSS sampling period during the hold
)

// unreadResult is --mode unread: the server's memory and other clients'
// latency while --streams StreamEvents streams are opened over large
// records and never read.
type unreadResult struct {
	Streams        int     `json:"streams"`
	Handlers       int     `json:"handlers"`
	RecordBytes    int     `json:"record_bytes"`
	HoldSeconds    float64 `json:"hold_seconds"`
	RSSBefore      int64   `json:"rss_before_bytes"`
	RSSPeak        int64   `json:"rss_peak_bytes"`
	RSSAfter       int64   `json:"rss_after_bytes"`
	EchoBefore     summary `json:"echo_before"`
	EchoDuring     summary `json:"echo_during"`
	Exhausted      int     `json:"streams_resource_exhausted"`
	Cut            int     `json:"streams_cut_off"`
	Complete       int     `json:"streams_complete"`
	OpenFailed     int     `json:"streams_not_opened"`
	RSSTargetBytes int64   `json:"rss_target_bytes"`
}

// runUnread is --mode unread. It starts a server, runs six echo handlers
// with an input of 0.9 MiB of random letters (so their result records are
// about 1 MiB each, and compression cannot shrink them), measures echo
// latency from four clients and the server's RSS, then opens --streams
// StreamEvents streams over those handlers, 200 to a connection, each of
// whose clients reads the first message and nothing more (64 KiB flow
// control windows). While they are held for --hold it samples the
// server's RSS and measures the echo latency again. At the end it reads
// every held stream to its end and counts how each ended.
func runUnread(ctx context.Context, cfg config, log io.Writer) (res *Result, err error) {
	res = &Result{Config: resultConfig{Mode: modeUnread, C: unreadProbers, Conns: cfg.Conns, Client: cfg.Client, Protocol: cfg.Protocol,
		Fsync: "on (the server's default)"}}
	ur := &unreadResult{Streams: cfg.Streams, Handlers: unreadHandlers, RecordBytes: unreadInputBytes, HoldSeconds: cfg.Hold.Seconds(),
		RSSTargetBytes: targetUnreadRSS}
	res.Unread = ur
	srv, err := startChild(cfg, false)
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := srv.stop(cfg.Grace); serr != nil {
			err = errors.Join(err, serr)
		}
	}()
	res.Config.Server, res.Config.ServerPID = "started: "+strings.Join(srv.args, " "), srv.pid()
	cl := newClients(srv.addr, cfg, nil)
	defer cl.close()
	if err := waitHealthy(ctx, cl, srv, 10*time.Millisecond); err != nil {
		return res, err
	}
	ids, err := bulkyHandlers(ctx, cl.api(0))
	if err != nil {
		return res, err
	}
	fmt.Fprintf(log, "unread: %d echo handlers with %d KiB results; measuring echo latency\n", len(ids), unreadInputBytes>>10)
	if ur.EchoBefore, err = probeEcho(ctx, cl, cfg.Hold/2); err != nil {
		return res, err
	}
	m, err := rss(srv.pid())
	if err != nil {
		return res, err
	}
	ur.RSSBefore = m.RSS

	fmt.Fprintf(log, "unread: opening %d streams and not reading them\n", cfg.Streams)
	held, err := openUnread(ctx, srv.addr, ids, cfg.Streams)
	defer held.close()
	ur.OpenFailed = held.failed
	if err != nil {
		return res, err
	}
	peak := make(chan int64, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() { peak <- samplePeakRSS(sctx, srv.pid()) }()
	ur.EchoDuring, err = probeEcho(ctx, cl, cfg.Hold)
	stop()
	ur.RSSPeak = max(<-peak, ur.RSSBefore)
	if err != nil {
		return res, err
	}
	ur.Exhausted, ur.Cut, ur.Complete = held.drain()
	if m, err := rss(srv.pid()); err == nil {
		ur.RSSAfter = m.RSS
	}
	return res, nil
}

// bulkyHandlers runs the echo handlers whose result records the streams
// follow.
func bulkyHandlers(ctx context.Context, api wfdv1connect.WorkflowServiceClient) ([]string, error) {
	rng := rand.New(rand.NewPCG(7, 11))
	letters := make([]byte, unreadInputBytes)
	for i := range letters {
		letters[i] = byte('a' + rng.IntN(26))
	}
	in := &structpb.Struct{Fields: map[string]*structpb.Value{"data": structpb.NewStringValue(string(letters))}}
	var ids []string
	for range unreadHandlers {
		res, err := api.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: echoWorkflow, Input: in, Wait: durationpb.New(time.Minute)})
		if err != nil {
			return nil, fmt.Errorf("starting a large echo: %w", err)
		}
		ids = append(ids, res.GetHandler().GetHandlerId())
	}
	return ids, nil
}

// probeEcho runs small echo handlers from unreadProbers clients for d and
// summarizes their start-to-complete latency.
func probeEcho(ctx context.Context, cl *clients, d time.Duration) (summary, error) {
	var (
		mu   sync.Mutex
		lat  []time.Duration
		errs []error
		wg   sync.WaitGroup
	)
	end := time.Now().Add(d)
	in := &structpb.Struct{Fields: map[string]*structpb.Value{"n": structpb.NewNumberValue(1)}}
	for i := range unreadProbers {
		wg.Go(func() {
			api := cl.api(i)
			for time.Now().Before(end) && ctx.Err() == nil {
				start := time.Now()
				_, err := api.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: echoWorkflow, Input: in, Wait: durationpb.New(time.Minute)})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					lat = append(lat, time.Since(start))
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return summary{}, fmt.Errorf("echo while streams are held: %w", errs[0])
	}
	return summarize(lat), nil
}

// samplePeakRSS samples pid's RSS until ctx ends and returns the largest.
func samplePeakRSS(ctx context.Context, pid int) int64 {
	var peak int64
	t := time.NewTicker(unreadSample)
	defer t.Stop()
	for {
		if m, err := rss(pid); err == nil {
			peak = max(peak, m.RSS)
		}
		select {
		case <-ctx.Done():
			return peak
		case <-t.C:
		}
	}
}

// heldStreams are the streams opened and not read.
type heldStreams struct {
	clients []*http.Client
	streams []*connect.ServerStreamForClient[wfdv1.StreamEventsResponse]
	failed  int
}

// openUnread opens n streams over ids, unreadPerConn to a connection, and
// reads the first message (the subscription's heartbeat) of each.
func openUnread(ctx context.Context, addr string, ids []string, n int) (*heldStreams, error) {
	h := &heldStreams{}
	var api wfdv1connect.WorkflowServiceClient
	for i := range n {
		if i%unreadPerConn == 0 {
			var p http.Protocols
			p.SetUnencryptedHTTP2(true)
			hc := &http.Client{Transport: &http.Transport{Protocols: &p, HTTP2: &http.HTTP2Config{
				MaxReceiveBufferPerStream: unreadWindow, MaxReceiveBufferPerConnection: unreadWindow * unreadPerConn,
			}}}
			h.clients = append(h.clients, hc)
			api = wfdv1connect.NewWorkflowServiceClient(hc, "http://"+addr, connect.WithGRPC(),
				connect.WithAcceptCompression("gzip", nil, nil))
		}
		s, err := api.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: ids[i%len(ids)], IncludeInternal: true})
		if err != nil {
			h.failed++
			continue
		}
		h.streams = append(h.streams, s)
		if !s.Receive() {
			h.failed++
		}
	}
	if h.failed == n {
		return h, fmt.Errorf("no stream could be opened")
	}
	return h, nil
}

// drain reads every held stream to its end and counts how they ended.
func (h *heldStreams) drain() (exhausted, cut, complete int) {
	for _, s := range h.streams {
		for s.Receive() {
		}
		switch err := s.Err(); {
		case err == nil:
			complete++
		case connect.CodeOf(err) == connect.CodeResourceExhausted:
			exhausted++
		default:
			cut++
		}
	}
	return exhausted, cut, complete
}

func (h *heldStreams) close() {
	for _, s := range h.streams {
		_ = s.Close()
	}
	for _, c := range h.clients {
		c.CloseIdleConnections()
	}
}

func writeUnreadTable(w io.Writer, res *Result) {
	u := res.Unread
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	fmt.Fprintf(w, "wfd bench --mode unread: %d streams over %d handlers with %d KiB records, held %.0f s, fsync=%s\n",
		u.Streams, u.Handlers, u.RecordBytes>>10, u.HoldSeconds, res.Config.Fsync)
	fmt.Fprintf(w, "server: %s (pid %d)\n\n", res.Config.Server, res.Config.ServerPID)
	verdict := "ok"
	if u.RSSPeak > u.RSSTargetBytes {
		verdict = "OVER"
	}
	fmt.Fprintf(w, "server RSS: %.0f MiB before, %.0f MiB peak while held (target < %.0f MiB: %s), %.0f MiB after\n",
		mib(u.RSSBefore), mib(u.RSSPeak), mib(u.RSSTargetBytes), verdict, mib(u.RSSAfter))
	fmt.Fprintf(w, "echo latency (%d clients), ms: before p50 %.2f p99 %.2f (n=%d); while held p50 %.2f p99 %.2f (n=%d)\n",
		unreadProbers, u.EchoBefore.P50, u.EchoBefore.P99, u.EchoBefore.Count, u.EchoDuring.P50, u.EchoDuring.P99, u.EchoDuring.Count)
	fmt.Fprintf(w, "held streams ended: %d ResourceExhausted (resumable), %d cut off (not read within the send timeout), %d complete; %d not opened\n",
		u.Exhausted, u.Cut, u.Complete, u.OpenFailed)
}
