// Package errid makes the ids that tie an error a client sees to the log
// entry that holds its detail (a stack, a file path): the client gets a
// clear message and the id, the operator finds the rest under that id.
package errid

import "crypto/rand"

// New returns a fresh error id: 12 characters of base32, unique enough to
// find one log entry among a service's lifetime of them.
func New() string {
	return rand.Text()[:12]
}
