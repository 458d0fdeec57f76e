package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wfd-dev/wfd/internal/devcert"
	"github.com/wfd-dev/wfd/internal/pgtest"
)

// TestServePeerFlagMistakes: the --peer-* flags need replica mode (and
// TLS for the certificate ones, authentication for the secret), and
// files that load; WFD_PEER_CA sets --peer-ca.
func TestServePeerFlagMistakes(t *testing.T) {
	f := writePKI(t)
	const store = "postgres://wfd@127.0.0.1:1/wfd"
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	secret := filepath.Join(t.TempDir(), "peer-secret")
	if err := os.WriteFile(tokens, []byte("tokens:\n  - {token: s3cret, subject: ada, roles: [admin]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte(strings.Repeat("x", 40)), 0o600); err != nil {
		t.Fatal(err)
	}
	tlsArgs := []string{"--tls-cert", f.serverCert, "--tls-key", f.serverKey}
	replica := []string{"--store", store, "--replica-id", "r1"}
	for _, tc := range []struct {
		name    string
		envCA   string
		args    [][]string
		want    string
		wantErr int
	}{
		{"peer CA without replica mode", "", [][]string{tlsArgs, {"--peer-ca", f.ca}}, "need --replica-id", 2},
		{"peer secret without replica mode", "", [][]string{{"--auth-tokens", tokens, "--peer-secret-file", secret}}, "need --replica-id", 2},
		{"peer server name without TLS", "", [][]string{replica, {"--peer-server-name", "wfd.internal"}}, "need --tls-cert", 2},
		{"peer secret without authentication", "", [][]string{replica, {"--peer-secret-file", secret}}, "--peer-secret-file needs --auth-tokens", 2},
		{"a short peer secret", "", [][]string{replica, {"--auth-tokens", tokens, "--peer-secret-file", tokens}}, "shorter than", 1},
		{"a peer CA file that is no certificate", "", [][]string{replica, tlsArgs, {"--peer-ca", f.serverKey}}, "no PEM certificate", 1},
		{"WFD_PEER_CA", f.serverKey, [][]string{replica, tlsArgs}, "no PEM certificate", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.envCA != "" {
				t.Setenv("WFD_PEER_CA", tc.envCA)
			}
			args := []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--console-addr", ""}
			for _, a := range tc.args {
				args = append(args, a...)
			}
			r := wfd(t, args...)
			if r.code != tc.wantErr || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.wantErr, tc.want)
			}
		})
	}
}

// TestServeReplicasForwardOverMTLS: two "wfd serve" replicas with mutual
// TLS, client certificates as identities and a peer secret, and the
// defaults otherwise (the peer CA is the client CA, each replica presents
// its own certificate to the other): a task of a handler live on A,
// answered through B, is forwarded to A and completed in the name of
// the caller's certificate.
func TestServeReplicasForwardOverMTLS(t *testing.T) {
	url := pgtest.NewDatabase(t)
	dir := t.TempDir()
	ca, err := devcert.NewCA("replicas CA")
	if err != nil {
		t.Fatal(err)
	}
	caFile, err := ca.WriteCA(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pair := func(name string, issue func() (devcert.Pair, error)) (string, string) {
		t.Helper()
		p, err := issue()
		if err != nil {
			t.Fatal(err)
		}
		c, k, err := p.Write(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		return c, k
	}
	tokens := write("tokens.yaml", "certificates:\n  - {subject: alice, roles: [starter, reader, tasks]}\n")
	secret := write("peer-secret", strings.Repeat("replicas-only-", 4)+"\n")
	aliceCert, aliceKey := pair("alice", func() (devcert.Pair, error) { return ca.Client("alice") })
	start := func(id string) (string, func() string) {
		cert, key := pair(id, func() (devcert.Pair, error) { return ca.Peer("127.0.0.1") })
		addr, logs := serveLogged(t, "--store", url, "--replica-id", id, "--console-addr", "", "--idle-timeout", "0", "--log-level", "debug",
			"--tls-cert", cert, "--tls-key", key, "--tls-client-ca", caFile, "--auth-tokens", tokens, "--peer-secret-file", secret)
		return addr, logs.String
	}
	a, _ := start("a")
	b, bLogs := start("b")
	alice := func(addr string) []string {
		return []string{"--addr", addr, "--timeout", "30s", "--tls-ca", caFile, "--tls-cert", aliceCert, "--tls-key", aliceKey}
	}
	id := field(ok(t, append([]string{"run", "expense", "--input", `{"approver": "alice"}`}, alice(a)...)...))
	var task string
	eventually(t, "the expense task", func() bool {
		out := ok(t, append([]string{"tasks", "--handler", id}, alice(b)...)...)
		for line := range strings.Lines(out) {
			if f := field(line); strings.HasPrefix(f, id+":") {
				task = f
				return true
			}
		}
		return false
	})
	out := ok(t, append([]string{"complete", task, `{"approved": true}`, "--by", "mallory"}, alice(b)...)...)
	if !strings.Contains(out, "alice") || strings.Contains(out, "mallory") {
		t.Fatalf("complete through b printed %q, want it completed by alice", out)
	}
	if !strings.Contains(bLogs(), "call forwarded") {
		t.Fatalf("b did not forward the answer; its logs:\n%s", bLogs())
	}
	eventually(t, "the handler completes on a", func() bool {
		return strings.Contains(ok(t, append([]string{"get", id}, alice(a)...)...), "completed")
	})
}
