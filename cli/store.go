package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/wfd-dev/wfd/persistence/bolt"
)

// readmeDamaged points operators to the README's section on damaged stores.
const readmeDamaged = `see "A damaged store" in wfd's README`

func storeCommand() *command {
	return &command{
		name:    "store",
		args:    "check [--data DIR]",
		summary: "check the store for damage (offline: stop wfd serve first)",
		detail: `'wfd store check' reads the whole store file DATA/wfd.db: its meta pages,
free list and size, every key and value, and then runs bbolt's consistency
check (every page reachable once or free, keys in order). It prints what
it finds and exits 1 if the file is damaged. It refuses to run while a
server has the store open (it names the process): stop the server, or
check a copy of the file.`,
		minArgs: 1, maxArgs: 1, argWords: []string{"check"},
		define: func(fs *flagSet) action {
			var data string
			fs.StringVar(&data, "data", "./data", "`directory` of the store")
			fs.fromEnv("data")
			return func(ctx context.Context, e *env, args []string) error {
				if args[0] != "check" {
					return usageErrorf("store: unknown subcommand %q (there is: check)", args[0])
				}
				return storeCheck(ctx, e.stdout, data)
			}
		},
	}
}

// storeCheck runs bolt.Check on the store in data and prints its report.
func storeCheck(ctx context.Context, w io.Writer, data string) error {
	path := filepath.Join(data, "wfd.db")
	r, err := bolt.Check(ctx, path)
	var inUse *bolt.InUseError
	if errors.As(err, &inUse) {
		return fmt.Errorf("%s is in use by %s. Stop it first, or check a copy of the file", path, inUse.Holder())
	}
	if err != nil {
		return err
	}
	p := &printer{w: w}
	if r.PageSize > 0 {
		if err := p.line(fmt.Sprintf("%s: %d bytes, %d pages of %d bytes, last transaction %d",
			path, r.Size, r.Pages, r.PageSize, r.Txid)); err != nil {
			return err
		}
	}
	for _, pr := range r.Problems {
		if err := p.line("problem: " + pr); err != nil {
			return err
		}
	}
	if r.More > 0 {
		if err := p.line(fmt.Sprintf("problem: ... and %d more", r.More)); err != nil {
			return err
		}
	}
	for _, n := range r.Notes {
		if err := p.line("note: " + n); err != nil {
			return err
		}
	}
	if !r.OK() {
		n := len(r.Problems) + r.More
		return fmt.Errorf("%s is damaged (%d %s). Restore it from a backup (%s)", path, n, plural(n, "problem", "problems"), readmeDamaged)
	}
	return p.line(fmt.Sprintf("%s: %d buckets, %d keys, %d free pages: no problems found", path, r.Buckets, r.Keys, r.Free))
}

// explainStore turns an error of opening (or starting on) the store in data
// into the one line an operator needs: what is wrong, with which file, and
// what to do. Other errors pass through.
func explainStore(data string, err error) error {
	var damaged *bolt.DamagedError
	var inUse *bolt.InUseError
	var foreign *bolt.ForeignFileError
	switch {
	case errors.As(err, &damaged):
		// One line, whatever bbolt's panic said.
		problem := strings.Join(strings.Fields(damaged.Problem), " ")
		return fmt.Errorf("%s is damaged: %s. Stop wfd, run 'wfd store check --data %s', and restore the file from a backup (%s)",
			damaged.Path, problem, shellQuote(data), readmeDamaged)
	case errors.As(err, &inUse):
		return fmt.Errorf("%s is in use by %s. Stop it, or give this server another --data directory", inUse.Path, inUse.Holder())
	case errors.As(err, &foreign):
		return fmt.Errorf("%s is not a wfd store but another program's bbolt file (its buckets: %s); wfd leaves it as it is. Give wfd a --data directory of its own",
			foreign.Path, foreign.Names())
	}
	return err
}

// shellQuote quotes s for a shell if it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
