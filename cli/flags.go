package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// flagSet is a flag.FlagSet whose flags may come after the arguments, may
// take their defaults from the environment, and may be given before the
// command name (the global flags it accepts).
type flagSet struct {
	*flag.FlagSet
	env    map[string]string // flag name → environment variable
	global map[string]bool   // flags that may also come before the command
	action action
}

func newFlagSet(name string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &flagSet{FlagSet: fs, env: map[string]string{}, global: map[string]bool{}}
}

// acceptGlobal lets the global flags names, given before the command,
// set the command's flags of the same names (which mean the same).
func (fs *flagSet) acceptGlobal(names ...string) {
	for _, n := range names {
		fs.global[n] = true
	}
}

// fromEnv makes WFD_<NAME> the default of the flag name.
func (fs *flagSet) fromEnv(names ...string) {
	for _, n := range names {
		fs.env[n] = "WFD_" + strings.ToUpper(strings.ReplaceAll(n, "-", "_"))
	}
}

// envAs makes variable the default of the flag name, for a flag whose
// WFD_<NAME> another command uses for something else.
func (fs *flagSet) envAs(name, variable string) {
	fs.env[name] = variable
}

// parse applies the environment, then the global flags given before the
// command, then the arguments, and returns the positional arguments: a
// flag after the command overrides the same one before it, which overrides
// the environment. Flags and arguments may be mixed; "--" ends the flags.
func (fs *flagSet) parse(globals []setFlag, args []string) ([]string, error) {
	for name, v := range fs.env {
		if val, ok := os.LookupEnv(v); ok {
			if err := fs.Set(name, val); err != nil {
				return nil, usageErrorf("%s=%q: %v", v, val, err)
			}
		}
	}
	for _, g := range globals {
		if !fs.global[g.name] {
			return nil, usageErrorf("%s does not take the global flag --%s", fs.Name(), g.name)
		}
		if err := fs.Set(g.name, g.value); err != nil {
			return nil, usageErrorf("--%s %q: %v", g.name, g.value, err)
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageErrorf("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// writeDefaults lists the flags, with their environment variables.
func (fs *flagSet) writeDefaults(w io.Writer) {
	var lines [][2]string
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		left := "--" + f.Name
		if name != "" {
			left += " " + name
		}
		var notes []string
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" {
			notes = append(notes, "default "+f.DefValue)
		}
		if v, ok := fs.env[f.Name]; ok {
			notes = append(notes, "env "+v)
		}
		if len(notes) > 0 {
			usage += " (" + strings.Join(notes, ", ") + ")"
		}
		lines = append(lines, [2]string{left, usage})
	})
	if len(lines) == 0 {
		return
	}
	width := 0
	for _, l := range lines {
		width = max(width, len(l[0]))
	}
	fmt.Fprint(w, "\nFlags:\n")
	for _, l := range lines {
		fmt.Fprintf(w, "  %-*s  %s\n", width, l[0], l[1])
	}
}

// choice is a flag that takes one of a fixed set of values.
type choice struct {
	value   string
	choices []string
}

func (c *choice) String() string { return c.value }

func (c *choice) Set(s string) error {
	if !slices.Contains(c.choices, s) {
		return fmt.Errorf("%q is not one of %s", s, strings.Join(c.choices, ", "))
	}
	c.value = s
	return nil
}
