package cli

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"

	"github.com/wfd-dev/wfd/bench"
)

// Exit statuses.
const (
	exitOK          = 0
	exitError       = 1 // a call failed, or a followed or awaited handler did not complete
	exitUsage       = 2
	exitInterrupted = 130
)

// Main runs the command line args (without the program name) and returns
// the process's exit status: 0 on success, 1 on an error, 2 on a usage
// error. It returns when the command is done or ctx is cancelled (serve
// shuts down gracefully then).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeUsage(stderr)
		return exitUsage
	}
	g, args, err := parseGlobals(args)
	if errors.Is(err, flag.ErrHelp) {
		writeUsage(stdout)
		return exitOK
	}
	if err != nil {
		return report(stderr, "", err)
	}
	if g.version {
		args = append([]string{"version"}, args...)
	}
	if len(args) == 0 {
		return report(stderr, "", usageErrorf("no command after %s", strings.Join(g.names(), " ")))
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) == 1 {
			writeUsage(stdout)
			return exitOK
		}
		cmd, ok := lookup(args[1])
		if !ok {
			return report(stderr, "", usageErrorf("unknown command %q", args[1]))
		}
		cmd.writeHelp(stdout, cmd.newFlags())
		return exitOK
	}
	if args[0] == "bench" {
		if len(g.flags) > 0 {
			// bench's --tls and --timeout mean other things than the
			// client flags'.
			return report(stderr, "", usageErrorf("bench does not take the global flag %s: give bench its flags after it", g.names()[0]))
		}
		// The benchmark has its own flags and report (package bench).
		return bench.Main(ctx, args[1:], stdout, stderr)
	}
	cmd, ok := lookup(args[0])
	if !ok {
		return report(stderr, "", usageErrorf("unknown command %q", args[0]))
	}
	err = cmd.run(ctx, g.flags, args[1:], stdout, stderr)
	if err != nil && ctx.Err() != nil {
		return exitInterrupted // SIGINT or SIGTERM: the user knows
	}
	return report(stderr, cmd.name, err)
}

// run parses the command's flags and arguments and runs it.
// globals are the flags given before the command name.
func (c *command) run(ctx context.Context, globals []setFlag, args []string, stdout, stderr io.Writer) error {
	fs := c.newFlags()
	pos, err := fs.parse(globals, args)
	if errors.Is(err, flag.ErrHelp) {
		c.writeHelp(stdout, fs)
		return nil
	}
	if err != nil {
		return err
	}
	if len(pos) < c.minArgs || len(pos) > c.maxArgs {
		return usageErrorf("%s: wrong number of arguments\nUsage: %s", c.name, c.synopsis())
	}
	return fs.action(ctx, &env{stdout: stdout, stderr: stderr}, pos)
}

// env is what a running command writes to.
type env struct {
	stdout, stderr io.Writer
}
