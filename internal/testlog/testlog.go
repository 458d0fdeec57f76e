// Package testlog is a log destination for tests: the code under test
// writes to it from its goroutines while the test reads what was logged
// (typically waiting for a line with internal/testwait).
package testlog

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that goroutines may write and read concurrently.
// The zero value is an empty buffer ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
