// Package names holds the rules for the names and texts that workflow
// definitions and step code give wfd: event types, keys, workflow names,
// task titles, descriptions. The step author's API (flow) applies them
// when it validates a definition, and the engine when a step passes it a
// name, so that both refuse the same things.
package names

import (
	"fmt"
	"strings"
	"unicode/utf8"

	pl "github.com/wfd-dev/wfd/internal/payload"
)

// Limits on a name or text. Names end up in protobuf strings, which must
// be UTF-8, and in store keys, which must be short.
const (
	// MaxNameBytes bounds a name: an event type, a key, a workflow name,
	// a task's title or assignee.
	MaxNameBytes = 256
	// MaxTextBytes bounds a text: a description.
	MaxTextBytes = 64 << 10
)

// ReservedPrefix starts the event types the engine and server use among
// themselves (task answers, published keys, children's ends).
const ReservedPrefix = "wfd."

// Reserved reports whether event type t is one of wfd's own.
func Reserved(t string) bool { return strings.HasPrefix(t, ReservedPrefix) }

// Check refuses a name or text that is empty (when required), longer than
// maxBytes, or not UTF-8, with an error wrapping the payload package's
// ErrInvalid that calls it what ("the key", "the event type").
func Check(what, s string, maxBytes int, required bool) error {
	switch {
	case s == "" && required:
		return fmt.Errorf("%w: %s is empty", pl.ErrInvalid, what)
	case len(s) > maxBytes:
		return fmt.Errorf("%w: %s is %d bytes long, over the limit of %d", pl.ErrInvalid, what, len(s), maxBytes)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", pl.ErrInvalid, what)
	}
	return nil
}
