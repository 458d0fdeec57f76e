package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// debugGet fetches path from the server's pprof endpoint (--debug-addr).
func debugGet(ctx context.Context, c *child, path string) (*http.Response, error) {
	if c.debugAddr == "" {
		return nil, fmt.Errorf("the server was started without --debug-addr")
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.debugAddr+path, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("server pprof %s: %w", path, err)
	}
	if res.StatusCode != http.StatusOK {
		_ = res.Body.Close()
		cancel()
		return nil, fmt.Errorf("server pprof %s: %s", path, res.Status)
	}
	res.Body = readCloser{res.Body, cancel}
	return res, nil
}

type readCloser struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (r readCloser) Close() error {
	err := r.ReadCloser.Close()
	r.cancel()
	return err
}

// gcHeap makes the server run a garbage collection (net/http/pprof's heap
// profile with gc=1 calls runtime.GC first) and returns its live heap
// right after: runtime.MemStats.HeapAlloc, which the text form of the
// profile (debug=1) ends with.
func (r *runner) gcHeap(ctx context.Context, c *child) (int64, error) {
	res, err := debugGet(ctx, c, "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return 0, err
	}
	defer func() { _ = res.Body.Close() }()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	const key = "# HeapAlloc = "
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("server pprof: cannot parse %q", sc.Text())
			}
			_, _ = io.Copy(io.Discard, res.Body)
			return n, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("server pprof heap: %w", err)
	}
	return 0, fmt.Errorf("server pprof heap: no %q line", strings.TrimSpace(key))
}

// saveHeap saves the server's heap profile (after a GC) to the
// --heapprofile prefix with suffix, if one was given.
func (r *runner) saveHeap(ctx context.Context, c *child, rel *releaseResult, suffix string) error {
	if r.cfg.HeapProf == "" {
		return nil
	}
	res, err := debugGet(ctx, c, "/debug/pprof/heap?gc=1")
	if err != nil {
		return err
	}
	defer func() { _ = res.Body.Close() }()
	path := r.cfg.HeapProf + suffix
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("saving the server's heap profile: %w", err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	rel.HeapProfiles = append(rel.HeapProfiles, path)
	return nil
}
