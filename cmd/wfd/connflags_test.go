//go:build linux

package main_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestServeConnectionFlags: --idle-conn-timeout and --min-body-rate reach
// the server. A keep-alive connection with no call is closed after the
// idle timeout given; a body that trickles slower than the rate given
// fails its call, where the defaults (2m idle, 1 KiB/s) would keep both
// going for the whole test.
func TestServeConnectionFlags(t *testing.T) {
	bin := buildWfd(t)
	p := startWfd(t, bin, t.TempDir(), "--idle-conn-timeout", "1s", "--min-body-rate", "100000", "--read-body-timeout", "1s")

	t.Run("idle connection closed", func(t *testing.T) {
		c, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+p.addr+"\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(c)
		res, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		// Nothing more is sent: the server closes the connection once it
		// has been idle for a second (by default, after two minutes).
		if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
			t.Fatalf("idle connection: read %v after %v, want EOF (closed by the server)", err, time.Since(start))
		}
	})

	t.Run("slow body refused", func(t *testing.T) {
		c, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		const body = 1 << 20
		if _, err := io.WriteString(c, "POST /wfd.v1.WorkflowService/ListWorkflows HTTP/1.1\r\nHost: "+p.addr+
			"\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		// 256 bytes every 50 ms, about 5 KB/s, keeps up with the default
		// minimum (1 KiB/s) but not with 100,000 bytes a second: the call
		// fails long before the body is sent (it would take minutes).
		done := make(chan struct{})
		defer close(done)
		go func() {
			chunk := make([]byte, 256)
			for i := range chunk {
				chunk[i] = ' '
			}
			for sent := 0; sent < body; sent += len(chunk) {
				select {
				case <-done:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := c.Write(chunk); err != nil {
					return
				}
			}
		}()
		if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("slow body: no answer: %v", err)
		}
		_ = res.Body.Close()
		if res.StatusCode == http.StatusOK {
			t.Fatalf("slow body answered %s, want the call failed", res.Status)
		}
	})
}
