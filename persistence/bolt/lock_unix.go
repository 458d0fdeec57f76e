//go:build unix

package bolt

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockRetry is how often lockShared tries again while it waits.
const lockRetry = 50 * time.Millisecond

// lockShared takes a shared lock on the store file, on a descriptor of its
// own, waiting up to timeout (negative: forever) while another process
// holds it exclusively. bbolt locks the file with flock(2) too, exclusively
// to write and shared to read, so while the returned file is open no
// process writes the store. inUse is true if the timeout passed first. A
// missing file returns a nil file.
func lockShared(path string, timeout time.Duration) (f *os.File, inUse bool, err error) {
	f, err = os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	deadline := time.Now().Add(timeout)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		switch {
		case err == nil:
			return f, false, nil
		case !errors.Is(err, unix.EWOULDBLOCK):
			_ = f.Close()
			return nil, false, err
		case timeout >= 0 && !time.Now().Before(deadline):
			_ = f.Close()
			return nil, true, nil
		}
		time.Sleep(lockRetry)
	}
}
