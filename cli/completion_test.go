package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// helpCommands are the command names `wfd help` lists.
func helpCommands(t *testing.T) []string {
	t.Helper()
	help := ok(t, "help")
	_, list, found := strings.Cut(help, "Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	var names []string
	for line := range strings.Lines(list) {
		if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			names = append(names, field(line))
		}
	}
	if !found || len(names) < 10 {
		t.Fatalf("cannot read the commands of wfd help:\n%s", help)
	}
	return names
}

// TestCompletionScripts: each script names every command `wfd help` lists
// and the flags of the commands, and the shell accepts its syntax.
func TestCompletionScripts(t *testing.T) {
	names := append(helpCommands(t), "help")
	for _, cmd := range []string{"version", "completion"} {
		if !strings.Contains(strings.Join(names, " "), cmd) {
			t.Errorf("wfd help does not list %s: %v", cmd, names)
		}
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			script := ok(t, "completion", shell)
			for _, want := range append(names, "--idle-timeout", "--max-streams-per-connection", "--follow", "--tls-ca", "--token", "--mine", "--version", "workflows --json") {
				if shell == "fish" && strings.HasPrefix(want, "--") {
					want = "-l " + strings.TrimPrefix(want, "--") // complete -c wfd ... -l idle-timeout
				}
				if !strings.Contains(script, want) {
					t.Errorf("the %s script does not mention %q", shell, want)
				}
			}
			if _, err := exec.LookPath(shell); err != nil {
				t.Skipf("%s is not installed: its syntax is not checked", shell)
			}
			sh := exec.Command(shell, "-n")
			sh.Stdin = strings.NewReader(script)
			if out, err := sh.CombinedOutput(); err != nil {
				t.Fatalf("%s -n: %v\n%s", shell, err, out)
			}
		})
	}
	if r := wfd(t, "completion", "tcsh"); r.code != 2 || !strings.Contains(r.stderr, `unknown shell "tcsh"`) {
		t.Errorf("wfd completion tcsh: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestBashCompletion runs the bash script's function on command lines:
// commands, a command's flags after global flags, fixed arguments.
func TestBashCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	script := ok(t, "completion", "bash")
	addr, bin := serve(t), wfdBinary(t)
	host, port, _ := strings.Cut(addr, ":")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		words []string // the last is the word being completed
		want  string   // the completions, one per line
	}{
		{[]string{"wfd", "wor"}, "workers\nworkflows"},
		{[]string{"wfd", "--addr", "h:1", "--json", "ver"}, "version"},
		{[]string{"wfd", "--addr", "h:1", "serve", "--idle-t"}, "--idle-timeout"},
		{[]string{"wfd", "run", "--fo"}, "--follow"},
		{[]string{"wfd", "completion", "z"}, "zsh"},
		{[]string{"wfd", "store", ""}, "check"},
		{[]string{"wfd", "help", "comp"}, "complete\ncompletion"},
		{[]string{"wfd", "--tl"}, "--tls\n--tls-ca\n--tls-cert\n--tls-key"},
		{[]string{"wfd", "get", "--tls-ca", "c"}, "ca.pem"}, // a file name, not --tls-ca's value as a flag
		// Workflow names from the server, with the line's --addr.
		{[]string{bin, "--addr", addr, "run", "ex"}, "expense"},
		{[]string{bin, "workflows", "--addr=" + addr, "app"}, "approval"},
		// The actions on versions, beside the workflow names.
		{[]string{bin, "workflows", "--addr", addr, "de"}, "delete-version\ndeploy"},
		{[]string{bin, "workflows", "--addr", addr, "e"}, "echo\nexpense"},
		{[]string{bin, "run", "--input", "{}", "--addr", addr, "--json", "no"}, "notebook"},
		// As bash splits the line: at ":" and "=" (COMP_WORDBREAKS).
		{[]string{bin, "--addr", "=", host, ":", port, "run", "ex"}, "expense"},
	} {
		t.Run(strings.Join(tc.words[1:], " "), func(t *testing.T) {
			line := script + `
COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_wfd
printf '%s\n' "${COMPREPLY[@]}" | sort
`
			sh := exec.Command("bash", append([]string{"-c", line, "bash"}, tc.words...)...)
			sh.Dir = dir
			out, err := sh.CombinedOutput()
			if err != nil {
				t.Fatalf("bash: %v\n%s", err, out)
			}
			if got := strings.TrimSpace(string(out)); got != tc.want {
				t.Fatalf("completions %q, want %q", got, tc.want)
			}
		})
	}
}
