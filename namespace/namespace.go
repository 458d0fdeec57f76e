// Package namespace holds what the server, its clients and its command
// line agree on about namespaces: the header a call names its namespace
// in, the default one, and the rule for a namespace's name.
//
// A namespace is a world of its own on one server: its handlers,
// workflows (and their versions), tasks, published events, schedules,
// concurrency keys and workers live in a store of their own (a bbolt file,
// a PostgreSQL schema), so two namespaces may use the same handler ids and
// workflow names without seeing each other, and one namespace's load,
// retention or damage touches no other.
package namespace

import (
	"errors"
	"fmt"
)

// Header is the request header that names a call's namespace. A call
// without it is in Default.
const Header = "Wfd-Namespace"

// Default is the namespace of calls that name none, and of every store
// written before namespaces.
const Default = "default"

// MaxLen bounds a namespace's name (it names a file and a PostgreSQL
// schema).
const MaxLen = 48

// ErrInvalid is what Check's errors wrap.
var ErrInvalid = errors.New("invalid namespace")

// Check accepts a name of 1 to MaxLen lower-case letters, digits and
// hyphens that starts with a letter and does not end with a hyphen (a DNS
// label, shorter): it is safe in a file name, a schema name and a header.
func Check(name string) error {
	if name == "" {
		return fmt.Errorf("%w: the name is empty", ErrInvalid)
	}
	if len(name) > MaxLen {
		return fmt.Errorf("%w: %q is longer than %d characters", ErrInvalid, name, MaxLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("%w: %q: character %q not allowed (use a-z 0-9 -)", ErrInvalid, name, c)
		}
	}
	if c := name[0]; c < 'a' || c > 'z' {
		return fmt.Errorf("%w: %q must start with a letter", ErrInvalid, name)
	}
	if name[len(name)-1] == '-' {
		return fmt.Errorf("%w: %q must not end with a hyphen", ErrInvalid, name)
	}
	return nil
}

// Of returns the namespace a header value names: Default for "".
func Of(header string) string {
	if header == "" {
		return Default
	}
	return header
}
