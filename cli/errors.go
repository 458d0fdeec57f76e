package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// usageError is a command line that does not parse: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errHandlerUnsuccessful ends a command that followed a handler to a
// failed or cancelled end; the record has been printed already.
var errHandlerUnsuccessful = errors.New("the handler did not complete")

// report prints err for cmd (empty before a command is known) and returns
// the exit status.
func report(w io.Writer, cmd string, err error) int {
	var ue *usageError
	var se interface{ GRPCStatus() *status.Status }
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		help := "wfd help"
		if cmd != "" {
			help += " " + cmd
		}
		fmt.Fprintf(w, "wfd: %s\nRun '%s' for usage.\n", ue.msg, help)
		return exitUsage
	case errors.Is(err, errHandlerUnsuccessful):
		return exitError
	case errors.As(err, &se):
		s := se.GRPCStatus()
		fmt.Fprintf(w, "wfd: %s: %s\n", codeName(s.Code()), s.Message())
		return exitError
	default:
		fmt.Fprintf(w, "wfd: %v\n", err)
		return exitError
	}
}

// codeName spells a status code the way Connect does: NotFound → not_found.
func codeName(c codes.Code) string {
	var b strings.Builder
	for i, r := range c.String() {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
