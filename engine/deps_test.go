package engine_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDependencies: the engine knows nothing of the network, the store or
// the API. It reaches the store through interfaces it defines and keeps its
// state in the internal checkpoint format, so nothing that serves or calls
// (grpc, net/http, connect) nor the public API's generated code may be among
// its dependencies, direct or not.
func TestDependencies(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the dependencies with")
	}
	out, err := exec.Command(goCmd, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := regexp.MustCompile(`^(google\.golang\.org/grpc|net/http|connectrpc\.com|` +
		`github\.com/wfd-dev/wfd/(gen|server|persistence|clients|cli)(/|$))`)
	var bad []string
	for _, pkg := range strings.Fields(string(out)) {
		if forbidden.MatchString(pkg) {
			bad = append(bad, pkg)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("the engine depends on:\n  %s", strings.Join(bad, "\n  "))
	}
}

// TestStateNotInClients: the checkpoint format (and the store's metadata) is
// internal: the generated code of the public API, which clients in every
// language get, holds none of it.
func TestStateNotInClients(t *testing.T) {
	internal := regexp.MustCompile(`\bwfd\.(state|storage)\.v1\b|\bHandlerState\b|\bHandlerMeta\b|wfd/(state|storage)/`)
	for _, dir := range []string{"../gen", "../clients/ts/src/gen", "../clients/python/gen"} {
		files := 0
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if m := internal.Find(b); m != nil {
				t.Errorf("%s mentions %q", path, m)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if files == 0 {
			t.Fatalf("no generated files in %s", dir)
		}
	}
}
