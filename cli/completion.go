package cli

import (
	"context"
	"flag"
	"strings"
)

func completionCommand() *command {
	return &command{
		name:    "completion",
		args:    "bash|zsh|fish",
		summary: "print a shell completion script",
		detail: `Prints a script that completes wfd's commands, their flags and fixed
arguments, and the workflow names of 'wfd run' and 'wfd workflows' (from
'wfd workflows --json', with the --addr, --token and --tls* flags and
WFD_* variables of the command line being completed). It is made from the
same table as 'wfd help', so it matches this binary. Load it with:

  bash: source <(wfd completion bash)     # in ~/.bashrc
  zsh:  source <(wfd completion zsh)      # in ~/.zshrc, after compinit
        (or save it as _wfd in a directory of $fpath)
  fish: wfd completion fish > ~/.config/fish/completions/wfd.fish`,
		minArgs: 1, maxArgs: 1,
		argWords: shells(),
		define: func(_ *flagSet) action {
			return func(_ context.Context, e *env, args []string) error {
				spec := completionSpec()
				var script string
				switch args[0] {
				case "bash":
					script = spec.bash()
				case "zsh":
					script = spec.zsh()
				case "fish":
					script = spec.fish()
				default:
					return usageErrorf("completion: unknown shell %q (there are: %s)", args[0], strings.Join(shells(), ", "))
				}
				return (&printer{w: e.stdout}).line(strings.TrimSuffix(script, "\n"))
			}
		},
	}
}

func shells() []string { return []string{"bash", "zsh", "fish"} }

// compFlag is one flag as completion sees it.
type compFlag struct {
	name, usage string
	value       bool // takes a value (the next word)
}

// compCommand is one command as completion sees it.
type compCommand struct {
	name, summary string
	flags         []compFlag
	words         []string // fixed arguments
	workflows     bool     // the server's workflow names as arguments
}

// compSpec is everything the scripts complete.
type compSpec struct {
	global   []compFlag // before the command
	commands []compCommand
}

// completionSpec reads the command table, so that the scripts complete
// exactly the commands and flags this binary has.
func completionSpec() compSpec {
	g := newFlagSet("wfd")
	addClientFlags(g)
	g.Bool("version", false, "print the version")
	spec := compSpec{global: compFlags(g)}
	var names []string
	for _, c := range commands() {
		spec.commands = append(spec.commands, compCommand{
			name: c.name, summary: c.summary, flags: compFlags(c.newFlags()),
			words: c.argWords, workflows: c.argWorkflows,
		})
		names = append(names, c.name)
	}
	// help and bench are not in the table: help takes a command name,
	// bench parses its own flags (package bench).
	spec.commands = append(spec.commands,
		compCommand{name: "bench", summary: "measure a server over loopback ('wfd bench -h')"},
		compCommand{name: "help", summary: "show the commands, or one command's flags", words: names},
	)
	return spec
}

func compFlags(fs *flagSet) []compFlag {
	var out []compFlag
	fs.VisitAll(func(f *flag.Flag) {
		_, usage := flag.UnquoteUsage(f)
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		out = append(out, compFlag{name: f.Name, usage: usage, value: !ok || !b.IsBoolFlag()})
	})
	return out
}

// flagWords spells the flags for a word list: "--a --b".
func flagWords(fs []compFlag, onlyValued bool) string {
	var ws []string
	for _, f := range fs {
		if !onlyValued || f.value {
			ws = append(ws, "--"+f.name)
		}
	}
	return strings.Join(ws, " ")
}

// valuePattern is a shell case pattern matching the global flags that
// take a value, in Go's two spellings: --addr|-addr|...
func (s compSpec) valuePattern() string {
	var ps []string
	for _, f := range s.global {
		if f.value {
			ps = append(ps, "--"+f.name, "-"+f.name)
		}
	}
	return strings.Join(ps, "|")
}

func (s compSpec) commandNames() string {
	names := make([]string, len(s.commands))
	for i, c := range s.commands {
		names[i] = c.name
	}
	return strings.Join(names, " ")
}
