//go:build !linux

package bolt

// dropMapped does nothing outside Linux: the mapping's pages are left to
// the kernel.
func dropMapped(uintptr, int64) error { return nil }
