//go:build linux

package bolt

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// dropMapped tells the kernel that the size bytes mapped at addr are not
// needed (MADV_DONTNEED). On a shared file mapping this only drops the
// page-table entries; the data stays in the file and the page cache.
//
// The address comes from bbolt as a uintptr; the raw system call takes it
// as one, where unix.Madvise would need it turned back into a slice (which
// go vet rightly flags as a possible misuse of unsafe.Pointer).
func dropMapped(addr uintptr, size int64) error {
	if addr == 0 || size <= 0 {
		return nil
	}
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, addr, uintptr(size), unix.MADV_DONTNEED); errno != 0 {
		return fmt.Errorf("madvise: %w", errno)
	}
	return nil
}
