package deploy_test

import (
	"context"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	digest "github.com/opencontainers/go-digest"
)

// offlineImages answers BuildKit's questions about base images with an
// empty image config: the lint needs no registry (CI reaches none), and
// no rule it runs depends on what the bases hold.
type offlineImages struct{}

func (offlineImages) ResolveImageConfig(_ context.Context, ref string, _ sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	return ref, "", []byte(`{"architecture":"amd64","os":"linux","config":{}}`), nil
}

// TestDockerfileLint runs BuildKit's Dockerfile checks on deploy/Dockerfile
// (what `docker build --check` runs, offline): a syntax error or any
// warning (casing, JSON CMD, legacy ENV, duplicate stage names, ...) fails.
func TestDockerfileLint(t *testing.T) {
	dt, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	src := llb.Scratch()
	def, err := src.Marshal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sm := llb.NewSourceMap(&src, "Dockerfile", "Dockerfile", dt)
	sm.Definition = def
	res, err := dockerfile2llb.DockerfileLint(ctx, dt, dockerfile2llb.ConvertOpt{SourceMap: sm, MetaResolver: offlineImages{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Errorf("Dockerfile: %s (line %v)", res.Error.Message, res.Error.Location.GetRanges())
	}
	for _, w := range res.Warnings {
		t.Errorf("Dockerfile: %s: %s (line %v)", w.RuleName, w.Detail, w.Location.GetRanges())
	}
}

// TestDockerfileMatchesManifests checks that the image and the StatefulSet
// agree: the final stage runs as the user the pod runs as, exposes the
// container port, declares /data a volume and serves it with --data.
func TestDockerfileMatchesManifests(t *testing.T) {
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	ast, err := parser.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	stages, _, err := instructions.Parse(ast.AST, nil)
	if err != nil {
		t.Fatal(err)
	}
	final := stages[len(stages)-1]
	var (
		user    string
		exposed []string
		volumes []string
		cmd     []string
	)
	for _, c := range final.Commands {
		switch c := c.(type) {
		case *instructions.UserCommand:
			user = c.User
		case *instructions.ExposeCommand:
			exposed = append(exposed, c.Ports...)
		case *instructions.VolumeCommand:
			volumes = append(volumes, c.Volumes...)
		case *instructions.CmdCommand:
			cmd = c.CmdLine
		}
	}
	sts := manifests(t).statefulSets
	pod := sts[0].Spec.Template.Spec
	if uid := pod.SecurityContext.RunAsUser; uid == nil || !strings.HasPrefix(user, itoa(*uid)+":") {
		t.Errorf("USER %q, want uid:gid with the pod's runAsUser", user)
	}
	c := pod.Containers[0]
	port := portNamed(t, c.Ports, "grpc")
	console := portNamed(t, c.Ports, "console")
	for _, p := range []int32{port.ContainerPort, console.ContainerPort} {
		if !slices.Contains(exposed, itoa(p)) {
			t.Errorf("EXPOSE %v, want the container ports %d (API) and %d (console)", exposed, port.ContainerPort, console.ContainerPort)
		}
	}
	if !slices.Equal(volumes, []string{"/data"}) {
		t.Errorf("VOLUME %v, want [/data]", volumes)
	}
	// The console on every interface too: at its default, the
	// container's loopback, no one outside the container reaches it.
	want := []string{"serve", "--addr", "0.0.0.0:" + itoa(port.ContainerPort), "--console-addr", "0.0.0.0:" + itoa(console.ContainerPort), "--data", "/data"}
	if !slices.Equal(cmd, want) {
		t.Errorf("CMD %q, want %q", cmd, want)
	}
	if _, err := os.Stat(filepath.Join("..", ".dockerignore")); err != nil {
		t.Errorf("no .dockerignore beside the build context: %v", err)
	}
}

// dockerStages parses deploy/Dockerfile into its stages and global ARGs.
func dockerStages(t *testing.T) []instructions.Stage {
	t.Helper()
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	ast, err := parser.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	stages, _, err := instructions.Parse(ast.AST, nil)
	if err != nil {
		t.Fatal(err)
	}
	return stages
}

// TestDockerfileBasesPinned: every stage's base image is pinned by digest
// and keeps its tag (name:tag@sha256:...), so that a rebuild of a commit
// uses the bases it was built with, and a reader still sees which
// release each is.
func TestDockerfileBasesPinned(t *testing.T) {
	pinned := regexp.MustCompile(`^[a-z0-9./-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}$`)
	for _, st := range dockerStages(t) {
		if !pinned.MatchString(st.BaseName) {
			t.Errorf("stage %q: FROM %s, want name:tag@sha256:<64 hex digits>", st.Name, st.BaseName)
		}
	}
}

// TestDockerfileStampsVersion: the build context has no .git (see
// .dockerignore), so Go records no VCS revision; the build stage takes
// VERSION, COMMIT and COMMIT_TIME as build arguments and links them into
// the variables `wfd version` reads (-X), which must exist in ../cli; the
// final stage labels the image with them (OCI annotations).
func TestDockerfileStampsVersion(t *testing.T) {
	vars := cliLinkVars(t)
	stages := dockerStages(t)
	want := map[string]string{"linkVersion": "VERSION", "linkRevision": "COMMIT", "linkTime": "COMMIT_TIME"}
	found := map[string]bool{}
	for _, st := range stages[:len(stages)-1] {
		args := map[string]bool{}
		for _, c := range st.Commands {
			switch c := c.(type) {
			case *instructions.ArgCommand:
				for _, a := range c.Args {
					args[a.Key] = true
				}
			case *instructions.RunCommand:
				line := strings.Join(c.CmdLine, " ")
				if !strings.Contains(line, "go build") {
					continue
				}
				for _, m := range regexp.MustCompile(`-X ?([\w./-]+)\.(\w+)=\$\{?(\w+)\}?`).FindAllStringSubmatch(line, -1) {
					pkg, name, arg := m[1], m[2], m[3]
					if pkg != "github.com/wfd-dev/wfd/cli" || !vars[name] {
						t.Errorf("go build -X %s.%s: no such string variable in ../cli", pkg, name)
					}
					if !args[arg] {
						t.Errorf("go build -X %s.%s=${%s}: no ARG %s before it in stage %q", pkg, name, arg, arg, st.Name)
					}
					if want[name] == arg {
						found[name] = true
					}
				}
			}
		}
	}
	for name, arg := range want {
		if !found[name] {
			t.Errorf("the build does not link ${%s} into cli.%s (-X)", arg, name)
		}
	}
	labels := map[string]string{}
	for _, c := range stages[len(stages)-1].Commands {
		if l, ok := c.(*instructions.LabelCommand); ok {
			for _, kv := range l.Labels {
				labels[kv.Key] = strings.Trim(kv.Value, `"`)
			}
		}
	}
	for k, v := range map[string]string{"org.opencontainers.image.revision": "${COMMIT}", "org.opencontainers.image.version": "${VERSION}"} {
		if labels[k] != v {
			t.Errorf("LABEL %s=%q, want %q", k, labels[k], v)
		}
	}
}

// cliLinkVars reads the package-level string variables of ../cli/version.go,
// the ones a build may set with -X.
func cliLinkVars(t *testing.T) map[string]bool {
	t.Helper()
	f, err := goparser.ParseFile(token.NewFileSet(), filepath.Join("..", "cli", "version.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "string" || len(vs.Values) > 0 {
				continue // -X sets only string variables without an initial value (or a constant one)
			}
			for _, n := range vs.Names {
				vars[n.Name] = true
			}
		}
	}
	return vars
}
