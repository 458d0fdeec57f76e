//go:build !unix

package bolt

import (
	"os"
	"time"
)

// lockShared does not lock outside Unix: bbolt's own lock (LockFileEx on
// Windows) still keeps a second process out, and validate may then read a
// file another process is writing.
func lockShared(string, time.Duration) (*os.File, bool, error) { return nil, false, nil }
