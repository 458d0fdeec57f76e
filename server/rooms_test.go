package server_test

import (
	"os/exec"
	"strings"
	"testing"
)

// rooms are the server's concerns under server/internal, and the rooms
// each may import besides the leaves (apierr, observe) and live: none.
// Imports run server → {rpc, workers, replica, schedules, observe} → live → engine,
// persistence; a room reaches another only through live's ports.
var rooms = []string{"live", "rpc", "workers", "replica", "schedules", "observe", "apierr"}

// leaves may be imported by every room: apierr imports no room, observe
// only apierr.
var leaves = map[string]bool{"apierr": true, "observe": true}

// TestRoomsImportNoSibling: no room imports a sibling room (live is the
// one they share), live imports no room but the leaves, observe only
// apierr, and apierr none.
func TestRoomsImportNoSibling(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the dependencies with")
	}
	const prefix = "github.com/wfd-dev/wfd/server/internal/"
	for _, room := range rooms {
		out, err := exec.Command(goCmd, "list", "-e", "-deps", "-f", "{{if not .Error}}{{.ImportPath}}{{end}}", "./internal/"+room).Output()
		if err != nil {
			t.Fatalf("go list -deps ./internal/%s: %v", room, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			other, ok := strings.CutPrefix(dep, prefix)
			if !ok || other == room {
				continue
			}
			other, _, _ = strings.Cut(other, "/")
			allowed := other == "apierr" && room != "apierr" ||
				!leaves[room] && (other == "observe" || other == "live" && room != "live")
			if !allowed {
				t.Errorf("server/internal/%s imports server/internal/%s", room, other)
			}
		}
		if strings.Contains(string(out), "github.com/wfd-dev/wfd/server\n") {
			t.Errorf("server/internal/%s imports package server", room)
		}
	}
}
