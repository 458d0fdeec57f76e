package testlog_test

import (
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/wfd-dev/wfd/internal/testlog"
)

// TestBuffer: loggers on many goroutines write whole lines to one Buffer
// while it is read (run with -race).
func TestBuffer(t *testing.T) {
	var logs testlog.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	const writers, lines = 8, 100
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range lines {
				log.Info("line", "writer", w, "i", i)
				_ = logs.String()
			}
		})
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(logs.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines, want %d", len(got), writers*lines)
	}
	for _, l := range got {
		if !strings.Contains(l, `msg=line writer=`) {
			t.Fatalf("torn line %q", l)
		}
	}
}
