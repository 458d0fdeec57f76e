//go:build !linux

package bolt

// lockHolder cannot name the holder of a lock outside Linux.
func lockHolder(string) (int, string) { return 0, "" }
