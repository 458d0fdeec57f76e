package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// command is one subcommand.
type command struct {
	name    string
	args    string // the positional arguments and main flags, as usage shows them
	summary string
	detail  string
	minArgs int
	maxArgs int
	// argWords and argWorkflows are what shell completion offers for the
	// positional arguments: fixed words, the server's workflow names, or both.
	argWords     []string
	argWorkflows bool
	// define adds the command's flags to fs and returns the action, which
	// runs once they are parsed.
	define func(fs *flagSet) action
}

// action runs a command with its positional arguments.
type action func(ctx context.Context, e *env, args []string) error

// commands lists the subcommands in the order help shows them.
func commands() []*command {
	out := []*command{
		serveCommand(),
		workflowsCommand(),
		runCommand(),
		getCommand(),
		handlersCommand(),
		sendCommand(),
		streamCommand(),
		waitCommand(),
		cancelCommand(),
		releaseCommand(),
		deleteCommand(),
		tasksCommand(),
		taskCommand(),
		completeCommand(),
		cancelTaskCommand(),
	}
	out = append(out, taskLifeCommands()...)
	return append(out,
		publishCommand(),
		eventsCommand(),
		schedulesCommand(),
		statsCommand(),
		whoamiCommand(),
		namespacesCommand(),
		workersCommand(),
		replicasCommand(),
		storeCommand(),
		versionCommand(),
		completionCommand(),
	)
}

func lookup(name string) (*command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return nil, false
}

func (c *command) newFlags() *flagSet {
	fs := newFlagSet(c.name)
	fs.action = c.define(fs)
	return fs
}

func (c *command) synopsis() string {
	return strings.TrimSpace("wfd " + c.name + " " + c.args)
}

func (c *command) writeHelp(w io.Writer, fs *flagSet) {
	fmt.Fprintf(w, "Usage: %s [flags]\n\n%s\n", c.synopsis(), c.summary)
	if c.detail != "" {
		fmt.Fprintf(w, "\n%s\n", c.detail)
	}
	fs.writeDefaults(w)
}

func writeUsage(w io.Writer) {
	fmt.Fprint(w, `wfd runs durable workflows: a server, and a client of it.

Usage: wfd <command> [arguments] [flags]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %s\n        %s\n", strings.TrimPrefix(c.synopsis(), "wfd "), c.summary)
	}
	fmt.Fprint(w, `  bench [-n N] [-c C] [--echo N] [--json] [--addr HOST:PORT]
        measure a server over loopback (starts one unless --addr); 'wfd bench -h'

Client commands take --addr HOST:PORT (env WFD_ADDR, default 127.0.0.1:7233),
--timeout, --tls, --tls-ca, --tls-cert, --tls-key, --token and --json
(protojson, one object per line). These global flags may also come before
the command (wfd --addr HOST:PORT workflows); the command's own flags
override them. Flags may come before or after arguments; WFD_* variables
give defaults. 'wfd --version' is 'wfd version'.
Exit status: 0 ok, 1 error or a followed or awaited handler did not complete,
2 usage error.

Examples:
  wfd run expense --input '{"amount": 120, "approver": "ada"}'
  wfd tasks --assignee ada --status pending     # ada's inbox
  wfd task TASK                                 # what to answer (the schema)
  wfd complete TASK '{"approved": true}' --by ada
  wfd run order --input '{"order_id": "A1"}'
  wfd publish payment:A1 '{"amount": 9.5}'      # wakes the order
  wfd run batch --input '{"n": 3, "fail": [1]}' --follow; wfd get HANDLER

Run 'wfd help <command>' for a command's flags.
`)
}
