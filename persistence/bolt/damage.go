package bolt

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/wfd-dev/wfd/persistence"
)

// DamagedError reports a store file whose structure is damaged: cut short,
// meta pages that do not validate, a page that does not hold what points to
// it, or a page that cannot be read at all. It wraps persistence.ErrCorrupt.
// Unlike a single value that does not decode, the damage may concern many
// handlers; the store file has to be checked (Check) and restored.
type DamagedError struct {
	// Path is the store file.
	Path string
	// Problem says what is wrong, in a phrase.
	Problem string
}

// Error leaves the path out: the error may reach a client, and the file's
// location is none of its business. The CLI names it from Path.
func (e *DamagedError) Error() string {
	return fmt.Sprintf("%v: the store file is damaged: %s", persistence.ErrCorrupt, e.Problem)
}

// Unwrap makes errors.Is(err, persistence.ErrCorrupt) hold.
func (e *DamagedError) Unwrap() error { return persistence.ErrCorrupt }

// InUseError reports a store file another process (or another Store in
// this process) holds open. It wraps persistence.ErrUnavailable.
type InUseError struct {
	Path string
	// PID is the holder's process id, 0 if it cannot be known (outside
	// Linux, or a process in another PID namespace).
	PID int
	// Command is the holder's command line, shortened; empty if unknown.
	Command string
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("%v: %s is in use by %s", persistence.ErrUnavailable, e.Path, e.Holder())
}

// Holder names the holding process as a phrase: "process 42 (wfd serve)",
// "this process" or "another process".
func (e *InUseError) Holder() string {
	switch {
	case e.PID == os.Getpid():
		return "this process"
	case e.PID <= 0:
		return "another process"
	case e.Command != "":
		return fmt.Sprintf("process %d (%s)", e.PID, e.Command)
	default:
		return fmt.Sprintf("process %d", e.PID)
	}
}

// Unwrap makes errors.Is(err, persistence.ErrUnavailable) hold.
func (e *InUseError) Unwrap() error { return persistence.ErrUnavailable }

// guard runs fn, which reads the store file's mapped pages, so that a
// damaged file fails the call instead of the process. bbolt trusts the
// file: a page number or offset that bit rot changed makes it read far
// outside its mapping, and a page the disk cannot return raises SIGBUS.
// The runtime turns such a fault into a panic only in a goroutine that
// asked for it (debug.SetPanicOnFault is per goroutine), so guard asks
// for it around fn, in the goroutine that runs the transaction. bbolt
// also panics on pages that are not what it expects (its own assertions),
// and its View and Update roll back on a panic, so recovering here leaves
// it usable. Every panic is reported as damage: the transaction functions
// of this package do not panic on their own (and writes already turn a
// panic in a change into an error, see safeCall).
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = &DamagedError{Path: path, Problem: panicProblem(p)}
		}
	}()
	return fn()
}

// panicProblem describes a recovered panic.
func panicProblem(p any) string {
	if f, ok := p.(interface{ Addr() uintptr }); ok {
		return fmt.Sprintf("fault reading a page of the file (address %#x): %v", f.Addr(), p)
	}
	return fmt.Sprintf("bbolt: %v", p)
}

// ForeignFileError reports a bbolt file that is not a wfd store: it has
// buckets but not wfd's mark (the schema version in its meta bucket, which
// wfd writes in the transaction that creates its buckets), so it belongs
// to another program. Open leaves such a file as it is. It wraps
// persistence.ErrInvalid.
type ForeignFileError struct {
	Path string
	// Buckets are the file's top-level buckets, in key order (the first
	// few: maxForeignBuckets).
	Buckets []string
	// More counts the buckets past those.
	More int
}

// maxForeignBuckets is how many bucket names a ForeignFileError keeps.
const maxForeignBuckets = 8

func (e *ForeignFileError) Error() string {
	return fmt.Sprintf("%v: %s is not a wfd store: a bbolt file of another program (its buckets: %s); wfd leaves it as it is",
		persistence.ErrInvalid, e.Path, e.Names())
}

// Names lists the file's buckets as a phrase: "accounts", "sessions" and
// 3 more.
func (e *ForeignFileError) Names() string {
	quoted := make([]string, len(e.Buckets))
	for i, b := range e.Buckets {
		quoted[i] = strconv.QuoteToGraphic(b)
	}
	names := strings.Join(quoted, ", ")
	if e.More > 0 {
		names += fmt.Sprintf(" and %d more", e.More)
	}
	return names
}

// Unwrap makes errors.Is(err, persistence.ErrInvalid) hold.
func (e *ForeignFileError) Unwrap() error { return persistence.ErrInvalid }
