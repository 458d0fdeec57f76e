//go:build linux

package main_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestServeLimitFlags runs `wfd serve` with its connection limits set low
// and checks each on the wire: a request body that stalls is cut after
// --read-body-timeout, the server advertises --max-streams-per-connection,
// and a connection past --max-connections is closed at once.
func TestServeLimitFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs wfd serve")
	}
	const patience = testwait.Timeout
	srv := startWfd(t, buildWfd(t), t.TempDir(),
		"--read-body-timeout", "200ms", "--max-connections", "2", "--max-streams-per-connection", "5")
	// The health check that saw the server start holds one connection.

	// A stalled body (HTTP/1.1, a connection of its own while it lasts).
	c, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.WriteString(c, "POST /wfd.v1.WorkflowService/RunWorkflow HTTP/1.1\r\nHost: 127.0.0.1\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"workflow\":")
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(patience))
	began := time.Now()
	res, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) || !bytes.Contains(res, []byte("deadline_exceeded")) {
		t.Fatalf("stalled body: read %q, %v; want deadline_exceeded and the connection closed", res, err)
	}
	t.Logf("stalled body cut after %v: %q", time.Since(began).Round(time.Millisecond), bytes.SplitN(res, []byte("\r\n"), 2)[0])
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	// The second connection is served and told the stream limit; the
	// slot of the first one above comes back once the server has closed
	// it, so try until a connection is served.
	var fr *http2.Framer
	var settings *http2.SettingsFrame
	deadline := time.Now().Add(patience)
	for settings == nil {
		if time.Now().After(deadline) {
			t.Fatal("no second connection served")
		}
		c, err = net.Dial("tcp", srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		_ = c.SetDeadline(time.Now().Add(patience))
		fr = http2.NewFramer(c, c)
		_, _ = io.WriteString(c, http2.ClientPreface)
		_ = fr.WriteSettings()
		if f, err := fr.ReadFrame(); err == nil {
			settings, _ = f.(*http2.SettingsFrame)
		}
	}
	if v, ok := settings.Value(http2.SettingMaxConcurrentStreams); !ok || v != 5 {
		t.Fatalf("SETTINGS_MAX_CONCURRENT_STREAMS %d (%v), want 5", v, ok)
	}

	// A third is closed at once.
	third, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = third.Close() }()
	_ = third.SetDeadline(time.Now().Add(patience))
	_, _ = io.WriteString(third, http2.ClientPreface)
	if n, err := third.Read(make([]byte, 64)); err == nil {
		t.Fatalf("a third connection was served (%d bytes)", n)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("a third connection was left waiting: %v", err)
	}
	// The server logs the refusal after closing the connection.
	for deadline := time.Now().Add(patience); !bytes.Contains([]byte(srv.out.String()), []byte("too many open connections")); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the refusal was not logged:\n%s", srv.out.String())
		}
	}
	srv.stop(t)
}
