package cli

import (
	"testing"
	"time"

	"github.com/wfd-dev/wfd/server"
)

// TestConnLimitsBodyRate: --min-body-rate reaches server.Options, 0
// meaning none (negative there).
func TestConnLimitsBodyRate(t *testing.T) {
	o := serveOptions{maxStreams: 1, streams: server.StreamLimits{MemoryBytes: 1, BufferBytes: 1, SendTimeout: time.Second},
		minBodyRate: 512}
	got, err := o.connLimits()
	if err != nil {
		t.Fatal(err)
	}
	if got.MinBodyRate != 512 {
		t.Fatalf("MinBodyRate %d, want 512", got.MinBodyRate)
	}
	o.minBodyRate = 0
	if got, err = o.connLimits(); err != nil {
		t.Fatal(err)
	}
	if got.MinBodyRate >= 0 {
		t.Fatalf("0 gave MinBodyRate %d, want it off (negative)", got.MinBodyRate)
	}
}
