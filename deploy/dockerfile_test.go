package deploy_test

import (
	"context"
	"os"
	"path/filepath"
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
	port := portNamed(t, pod.Containers[0].Ports, "grpc")
	if !slices.Contains(exposed, itoa(port.ContainerPort)) {
		t.Errorf("EXPOSE %v, want the container port %d", exposed, port.ContainerPort)
	}
	if !slices.Equal(volumes, []string{"/data"}) {
		t.Errorf("VOLUME %v, want [/data]", volumes)
	}
	want := []string{"serve", "--addr", "0.0.0.0:" + itoa(port.ContainerPort), "--data", "/data"}
	if !slices.Equal(cmd, want) {
		t.Errorf("CMD %q, want %q", cmd, want)
	}
	if _, err := os.Stat(filepath.Join("..", ".dockerignore")); err != nil {
		t.Errorf("no .dockerignore beside the build context: %v", err)
	}
}
