package cli_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/wfd-dev/wfd/internal/pgtest"
)

// TestHandlersOwnerColumn: wfd handlers against a replica has an OWNER
// column, the replica holding each running handler ("-" for a finished
// one); a single process has none (the other tests' tables).
func TestHandlersOwnerColumn(t *testing.T) {
	url := pgtest.NewDatabase(t)
	addr, _, _ := serveStoppable(t, "--store", url, "--replica-id", "r1")
	waiting := field(ok(t, "run", "approval", "--input", `{"amount": 7}`, "--addr", addr))
	done := field(ok(t, "run", "echo", "--input", `{"x": 1}`, "--addr", addr))
	eventually(t, "the echo handler completes", func() bool {
		return strings.Contains(ok(t, "get", done, "--addr", addr), "completed")
	})
	out := ok(t, "handlers", "--addr", addr)
	matchLines(t, out, []string{
		`^ID +WORKFLOW +STATUS +OWNER +DETAIL$`,
		`^` + regexp.QuoteMeta(done) + ` +echo +completed +- `,
		`^` + regexp.QuoteMeta(waiting) + ` +approval +\S+ +r1 `,
	})
}
