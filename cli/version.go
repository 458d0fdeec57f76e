package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
)

// modulePath names the module when the build information does not (a
// binary built without module support).
const modulePath = "github.com/wfd-dev/wfd"

func versionCommand() *command {
	return &command{
		name:    "version",
		summary: "print wfd's version, the commit it was built from, and the Go version",
		detail: `Prints the module version (the tag of 'go install ...@version', a
pseudo-version for a build in a git checkout, "(devel)" when the build
recorded none), the VCS revision and commit time the binary was built
from, whether the work tree had changes ("modified"), and the Go version
and platform. A build without VCS information (the Docker image, built
from a context without .git) has them linked in instead: its VERSION,
COMMIT and COMMIT_TIME build arguments. 'wfd --version' is the same. With --json, one JSON
object: module, version, revision, time, modified, go, platform (revision
and time are empty when the build did not record them).`,
		define: func(fs *flagSet) action {
			asJSON := fs.Bool("json", false, "print one JSON object")
			fs.acceptGlobal("json")
			return func(_ context.Context, e *env, _ []string) error {
				v := buildVersion()
				if *asJSON {
					return json.NewEncoder(e.stdout).Encode(v)
				}
				return (&printer{w: e.stdout}).fields(v.fields())
			}
		},
	}
}

// A build that records no VCS information (deploy/Dockerfile: its build
// context has no .git) names what it was built from at link time; each
// that is set wins over the build information:
//
//	go build -ldflags "-X github.com/wfd-dev/wfd/cli.linkVersion=v1.2.3 \
//	  -X github.com/wfd-dev/wfd/cli.linkRevision=$(git rev-parse HEAD) \
//	  -X github.com/wfd-dev/wfd/cli.linkTime=$(git log -1 --format=%cI)" ./cmd/wfd
var (
	linkVersion  string // the release, e.g. v1.2.3 (git describe)
	linkRevision string // the commit
	linkTime     string // the commit's time, RFC 3339
)

// versionInfo is what `wfd version` prints.
type versionInfo struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Revision string `json:"revision"`
	Time     string `json:"time"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// buildVersion reads the version from the binary's build information.
func buildVersion() versionInfo {
	v := versionInfo{Module: modulePath, Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.fromBuildInfo(bi)
	}
	if linkVersion != "" {
		v.Version = linkVersion
	}
	if linkRevision != "" {
		// The link names the commit; whether its tree had changes is in
		// the version (git describe --dirty), not known here.
		v.Revision, v.Modified = linkRevision, false
	}
	if linkTime != "" {
		v.Time = linkTime
	}
	return v
}

// fromBuildInfo fills v from the binary's build information.
func (v *versionInfo) fromBuildInfo(bi *debug.BuildInfo) {
	if bi.Main.Path != "" {
		v.Module = bi.Main.Path
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
}

// fields are the lines of the text form.
func (v versionInfo) fields() [][2]string {
	revision := v.Revision
	switch {
	case revision == "":
		revision = "unknown (not built from a VCS checkout)"
	case v.Modified:
		revision += " (modified)"
	}
	when := v.Time
	if when == "" {
		when = "unknown"
	}
	return [][2]string{
		{"version", v.Version},
		{"module", v.Module},
		{"revision", revision},
		{"time", when},
		{"go", fmt.Sprintf("%s %s", v.Go, v.Platform)},
	}
}
