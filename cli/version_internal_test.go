package cli

import "testing"

// TestVersionFromLinkerFlags: a build without VCS information (the
// Dockerfile's context has no .git) names its version, commit and commit
// time with -X ...cli.linkVersion=... and the rest; they win over the
// build information, and an empty one leaves it.
func TestVersionFromLinkerFlags(t *testing.T) {
	saved := [3]string{linkVersion, linkRevision, linkTime}
	t.Cleanup(func() { linkVersion, linkRevision, linkTime = saved[0], saved[1], saved[2] })

	linkVersion, linkRevision, linkTime = "", "", ""
	plain := buildVersion()

	linkVersion, linkRevision, linkTime = "v1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-09-20T10:00:00Z"
	v := buildVersion()
	if v.Version != "v1.2.3" || v.Revision != linkRevision || v.Time != linkTime || v.Modified {
		t.Errorf("with -X: %+v", v)
	}
	if v.Go != plain.Go || v.Module != plain.Module || v.Platform != plain.Platform {
		t.Errorf("with -X: %+v, want the Go version, module and platform of %+v", v, plain)
	}

	linkVersion, linkRevision, linkTime = "v1.2.4-dirty", "", ""
	if v := buildVersion(); v.Version != "v1.2.4-dirty" || v.Revision != plain.Revision || v.Time != plain.Time {
		t.Errorf("with only linkVersion: %+v, want the rest of %+v", v, plain)
	}
}
