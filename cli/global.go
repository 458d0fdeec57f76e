package cli

import (
	"errors"
	"flag"
	"strings"
)

// globalFlagNames are the flags that may come before the command name:
// the client flags (serve's flags of the same names mean something else,
// and serve does not take them there).
func globalFlagNames() []string {
	return []string{"addr", "timeout", "json", "tls", "tls-ca", "tls-cert", "tls-key", "token", "namespace"}
}

// setFlag is a flag given on the command line, by name and value.
type setFlag struct{ name, value string }

// globals is what came before the command name.
type globals struct {
	flags   []setFlag // handed to the command, which checks it takes them
	version bool      // --version: the version command
}

// parseGlobals parses the global flags before the command name and
// returns them with the rest of the command line (the command and its
// arguments). It only checks the values' syntax: the command applies them
// over the environment and under its own flags, and refuses those it does
// not take. flag.ErrHelp means -h or --help came first.
func parseGlobals(args []string) (globals, []string, error) {
	fs := newFlagSet("wfd")
	addClientFlags(fs)
	var g globals
	fs.BoolVar(&g.version, "version", false, "print the version")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return g, nil, err
		}
		return g, nil, usageErrorf("%v (before the command, only --%s and --version)", err, strings.Join(globalFlagNames(), ", --"))
	}
	// Visit walks only the flags given, by name; a flag given twice keeps
	// its last value, as after the command.
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "version" {
			g.flags = append(g.flags, setFlag{f.Name, f.Value.String()})
		}
	})
	return g, fs.Args(), nil
}

// names lists the global flags given, for messages.
func (g globals) names() []string {
	out := make([]string, len(g.flags))
	for i, f := range g.flags {
		out[i] = "--" + f.name
	}
	return out
}
