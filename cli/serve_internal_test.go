package cli

import (
	"testing"
	"time"

	"github.com/wfd-dev/wfd/server"
)

// TestConnLimitsBodyRateAndIdle: --min-body-rate and --idle-conn-timeout
// reach server.Options, 0 meaning none (negative there).
func TestConnLimitsBodyRateAndIdle(t *testing.T) {
	o := serveOptions{maxStreams: 1, streams: server.StreamLimits{MemoryBytes: 1, BufferBytes: 1, SendTimeout: time.Second},
		minBodyRate: 512, idleConnTimeout: time.Minute}
	got, err := o.connLimits()
	if err != nil {
		t.Fatal(err)
	}
	if got.MinBodyRate != 512 || got.IdleConnTimeout != time.Minute {
		t.Fatalf("MinBodyRate %d, IdleConnTimeout %v; want 512, 1m", got.MinBodyRate, got.IdleConnTimeout)
	}
	o.minBodyRate, o.idleConnTimeout = 0, 0
	if got, err = o.connLimits(); err != nil {
		t.Fatal(err)
	}
	if got.MinBodyRate >= 0 || got.IdleConnTimeout >= 0 {
		t.Fatalf("0 gave MinBodyRate %d, IdleConnTimeout %v; want them off (negative)", got.MinBodyRate, got.IdleConnTimeout)
	}
}
