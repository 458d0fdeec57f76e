package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testlog"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/cli"
)

// idleApproval starts an approval and returns its id once it waits.
func idleApproval(t *testing.T, addr string) string {
	t.Helper()
	id := field(ok(t, "run", "approval", "--input", `{"amount": 7}`, "--addr", addr))
	eventually(t, "approval is idle", func() bool {
		return strings.Contains(ok(t, "get", id, "--addr", addr), "idle since")
	})
	return id
}

// TestWaitCommands: wfd wait, run --wait and send --wait print the handler
// once it finished (exit 0 if it completed) or still running when the wait
// ended (exit 1).
func TestWaitCommands(t *testing.T) {
	addr := serve(t)
	if out := ok(t, "run", "echo", "--input", `{"x": 1}`, "--wait", "30s", "--addr", addr); !strings.Contains(out, "  echo  completed  {\"x\":1}") {
		t.Errorf("run --wait printed %q", out)
	}
	id := idleApproval(t, addr)
	r := wfd(t, "wait", id, "--wait", "100ms", "--addr", addr)
	if r.code != 1 || r.stderr != "" || !strings.Contains(r.stdout, id+"  approval  idle  waits for approval") {
		t.Errorf("wait on a waiting approval: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if out := ok(t, "send", id, "approval", `{"approved": true}`, "--wait", "30s", "--addr", addr); !strings.Contains(out, id+"  approval  completed") {
		t.Errorf("send --wait printed %q", out)
	}
	if out := ok(t, "wait", id, "--addr", addr); !strings.Contains(out, id+"  approval  completed") {
		t.Errorf("wait on a completed handler printed %q", out)
	}
	cancelled := field(ok(t, "run", "approval", "--addr", addr))
	ok(t, "cancel", cancelled, "--addr", addr)
	if r := wfd(t, "wait", cancelled, "--addr", addr); r.code != 1 || !strings.Contains(r.stdout, "cancelled") {
		t.Errorf("wait on a cancelled handler: exit %d, stdout %q", r.code, r.stdout)
	}
	if r := wfd(t, "wait", "nope", "--addr", addr); r.code != 1 || !strings.Contains(r.stderr, "not_found") {
		t.Errorf("wait on an unknown handler: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := wfd(t, "run", "echo", "--wait", "2h", "--addr", addr); r.code != 1 || !strings.Contains(r.stderr, "invalid_argument") {
		t.Errorf("run --wait 2h: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestStreamChoices: wfd stream prints what the handler does (events and
// its end) unless --internal; --from-head skips what happened before.
func TestStreamChoices(t *testing.T) {
	addr := serve(t)
	id := idleApproval(t, addr)
	ok(t, "release", id, "--addr", addr)
	ok(t, "send", id, "approval", `{"approved": true}`, "--addr", addr)
	ok(t, "wait", id, "--addr", addr)

	def := ok(t, "stream", id, "--addr", addr)
	matchLines(t, def, []string{`^#2 event question `, `^#\d+ completed \{"approved":true,`})
	for _, internal := range []string{"step decide", "idle:", "released", "restored"} {
		if strings.Contains(def, internal) {
			t.Errorf("the default stream shows %q:\n%s", internal, def)
		}
	}
	// run --follow prints the same: the handler, then its events and end.
	if out := ok(t, "run", "echo", "--input", `{"y": 1}`, "--follow", "--addr", addr); strings.Contains(out, "step echo") || !strings.HasSuffix(out, " completed {\"y\":1}\n") {
		t.Errorf("run --follow printed:\n%s", out)
	}
	matchLines(t, ok(t, "stream", id, "--internal", "--addr", addr), []string{
		`^#1 step decide started`, `^#2 event question `, `idle: waits for approval`, `^#\d+ released$`, `^#\d+ restored$`, `completed`})

	// From the head of a finished handler: nothing more will happen.
	if out := ok(t, "stream", id, "--from-head", "--addr", addr); out != "" {
		t.Errorf("stream --from-head of a finished handler printed %q", out)
	}
	if r := wfd(t, "stream", id, "--from-head", "--after", "1", "--addr", addr); r.code != 2 {
		t.Errorf("--from-head with --after: exit %d, stderr %q", r.code, r.stderr)
	}

	// From the head of a waiting handler: only what the answer brings.
	waiting := idleApproval(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	out, errs := &testlog.Buffer{}, &testlog.Buffer{}
	done := make(chan int, 1)
	go func() { done <- cli.Main(ctx, []string{"stream", waiting, "--from-head", "--addr", addr}, out, errs) }()
	eventually(t, "the stream is subscribed", func() bool {
		var s wfdv1.GetStatsResponse
		return protojson.Unmarshal([]byte(ok(t, "stats", "--json", "--addr", addr)), &s) == nil && s.GetStreams() > 0
	})
	ok(t, "send", waiting, "approval", `{"approved": false}`, "--addr", addr)
	if code := <-done; code != 0 {
		t.Fatalf("stream --from-head exited with %d: %s", code, errs)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], `completed {"approved":false`) {
		t.Errorf("stream --from-head printed:\n%s", out)
	}
}

// TestWhoami: without authentication whoami says so; with a token file it
// names the token's subject and roles, a bad token is refused, and over
// mutual TLS the client certificate's subject and roles are the caller.
func TestWhoami(t *testing.T) {
	if out := ok(t, "whoami", "--addr", serve(t)); out != "authentication off\n" {
		t.Errorf("whoami without authentication printed %q", out)
	}
	file := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(file, []byte("tokens:\n  - {token: r-token, subject: rita, roles: [reader, tasks]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := serve(t, "--auth-tokens", file)
	matchLines(t, ok(t, "whoami", "--token", "r-token", "--addr", addr), []string{`^subject: +rita$`, `^roles: +reader, tasks$`})
	var id wfdv1.GetIdentityResponse
	if err := protojson.Unmarshal([]byte(ok(t, "whoami", "--json", "--token", "r-token", "--addr", addr)), &id); err != nil ||
		!id.GetAuthentication() || id.GetSubject() != "rita" {
		t.Errorf("whoami --json: %v %v", &id, err)
	}
	if r := wfd(t, "whoami", "--token", "wrong", "--addr", addr); r.code != 1 || !strings.Contains(r.stderr, "unauthenticated") {
		t.Errorf("whoami with a bad token: exit %d, stderr %q", r.code, r.stderr)
	}

	// Over mutual TLS the client certificate names the caller, with the
	// roles the token file's certificates section gives it.
	f := writePKI(t)
	certs := filepath.Join(t.TempDir(), "certs.yaml")
	if err := os.WriteFile(certs, []byte("certificates:\n  - {subject: alice, roles: [worker]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tlsAddr := serve(t, "--tls-cert", f.serverCert, "--tls-key", f.serverKey, "--tls-client-ca", f.ca, "--auth-tokens", certs)
	matchLines(t, ok(t, "whoami", "--addr", tlsAddr, "--tls-ca", f.ca, "--tls-cert", f.clientCert, "--tls-key", f.clientKey),
		[]string{`^subject: +alice$`, `^roles: +worker$`})
}

// TestWaitIdle: wait --idle ends once the handler waits for outside
// input and prints what it waits for, with exit status 0; --after-seq
// needs --idle.
func TestWaitIdle(t *testing.T) {
	addr := serve(t)
	id := field(ok(t, "--addr", addr, "run", "approval", "--input", `{"amount": 1}`))
	out := ok(t, "--addr", addr, "wait", id, "--idle", "--wait", "1m")
	if !strings.Contains(out, "waits for approval") {
		t.Fatalf("wait --idle printed:\n%s", out)
	}
	r := wfd(t, "--addr", addr, "wait", id, "--after-seq", "3")
	if r.code == 0 || !strings.Contains(r.stderr, "--after-seq needs --idle") {
		t.Fatalf("--after-seq alone: exit %d, %q", r.code, r.stderr)
	}
}

// TestGetAt: get --at looks back at a handler as its stream showed it at
// a record: idle before the answer, completed at the end.
func TestGetAt(t *testing.T) {
	addr := serve(t)
	id := field(ok(t, "--addr", addr, "run", "approval", "--input", `{"amount": 1}`))
	idle := ok(t, "--addr", addr, "wait", id, "--idle", "--json")
	ok(t, "--addr", addr, "send", id, "approval", `{"approved": true}`, "--wait", "1m")
	seq := regexp.MustCompile(`"lastSeq":"(\d+)"`).FindStringSubmatch(idle)
	if seq == nil {
		t.Fatalf("no lastSeq in %s", idle)
	}
	out := ok(t, "--addr", addr, "get", id, "--at", seq[1])
	if !strings.Contains(out, "status:") || !strings.Contains(out, "running") || !strings.Contains(out, "waits for approval") {
		t.Fatalf("get --at %s:\n%s", seq[1], out)
	}
	r := wfd(t, "--addr", addr, "get", id, "--at", "100000")
	if r.code == 0 || !strings.Contains(r.stderr, "out_of_range") {
		t.Fatalf("get --at past the end: exit %d, %q", r.code, r.stderr)
	}
}
