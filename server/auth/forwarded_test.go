package auth_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/wfd-dev/wfd/server/auth"
)

const completeTask = "/wfd.v1.WorkflowService/CompleteTask"

// peerAuth is an Authenticator with a token file (bob's token) and the
// peer secrets in lines, on the clock *now.
func peerAuth(t *testing.T, now *time.Time, lines ...string) *auth.Authenticator {
	t.Helper()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("tokens:\n  - {token: bob-token, subject: bob, roles: [reader]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := auth.Config{TokensFile: tokens, Now: func() time.Time { return *now }}
	if lines != nil {
		cfg.PeerSecretFile = filepath.Join(dir, "peer")
		if err := os.WriteFile(cfg.PeerSecretFile, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a, err := auth.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var (
	secret1 = strings.Repeat("a", 40)
	secret2 = strings.Repeat("b", 40)
)

// A forwarded identity verifies only when signed with a peer secret the
// owner has, for the procedure called, recently; the header then decides
// the identity alone, and any other header is refused, never ignored.
func TestForwardedIdentity(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	owner := peerAuth(t, &now, secret1, secret2) // secret2 verifies too (rotation)
	alice := auth.Identity{Subject: "alice", Roles: []string{"tasks"}}
	sign := func(a *auth.Authenticator, id auth.Identity, proc string) string {
		t.Helper()
		v, err := a.SignForwarded(id, proc)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	good := sign(peerAuth(t, &now, secret1), alice, completeTask)
	rotated := sign(peerAuth(t, &now, secret2, secret1), alice, completeTask)
	earlier := now.Add(-auth.ForwardedValidity - time.Second)
	old := sign(peerAuth(t, &earlier, secret1), alice, completeTask)
	// A JWT with the same claims and secret, but not of the forwarded
	// identity's type.
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte(secret1)}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	at := jwt.NewNumericDate(now)
	otherType, err := jwt.Signed(signer).Claims(jwt.Claims{Subject: "alice", Audience: jwt.Audience{completeTask}, IssuedAt: at, Expiry: at}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		owner   *auth.Authenticator
		headers []string // ForwardedIdentityHeader values
		bearer  string
		proc    string
		want    string // subject; "" for ErrBadCredentials
	}{
		{"signed", owner, []string{good}, "", completeTask, "alice"},
		{"signed with the second secret", owner, []string{rotated}, "", completeTask, "alice"},
		{"a valid bearer token does not help a bad header", owner, []string{"v1.e30.AAAA"}, "bob-token", completeTask, ""},
		{"another secret", owner, []string{sign(peerAuth(t, &now, strings.Repeat("c", 40)), alice, completeTask)}, "", completeTask, ""},
		{"another procedure", owner, []string{good}, "", "/wfd.v1.WorkflowService/RunWorkflow", ""},
		{"too old", owner, []string{old}, "", completeTask, ""},
		{"another type of token", owner, []string{otherType}, "", completeTask, ""},
		{"twice", owner, []string{good, good}, "", completeTask, ""},
		{"unsigned", owner, []string{"alice"}, "", completeTask, ""},
		{"empty", owner, []string{""}, "", completeTask, ""},
		{"no peer secret on the owner", peerAuth(t, &now), []string{good}, "", completeTask, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", tc.proc, nil)
			for _, h := range tc.headers {
				r.Header.Add(auth.ForwardedIdentityHeader, h)
			}
			if tc.bearer != "" {
				r.Header.Set("Authorization", "Bearer "+tc.bearer)
			}
			id, err := tc.owner.Authenticate(r)
			if tc.want == "" {
				if !errors.Is(err, auth.ErrBadCredentials) {
					t.Fatalf("got %v, %v; want ErrBadCredentials", id, err)
				}
				return
			}
			if err != nil || id.Subject != tc.want || !slices.Equal(id.Roles, alice.Roles) {
				t.Fatalf("got %v, %v; want %v", id, err, alice)
			}
		})
	}
	if _, err := peerAuth(t, &now).SignForwarded(alice, completeTask); !errors.Is(err, auth.ErrNoPeerSecret) {
		t.Fatalf("signing without a peer secret: %v, want ErrNoPeerSecret", err)
	}
}

func TestPeerSecretFileRefusesShortOrEmptySecrets(t *testing.T) {
	for _, content := range []string{"", "\n\n", "short\n", secret1 + "\nshort\n"} {
		f := filepath.Join(t.TempDir(), "peer")
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := auth.New(context.Background(), auth.Config{ClientCertificates: true, PeerSecretFile: f}); err == nil {
			t.Errorf("peer secret file %q accepted", content)
		}
	}
}
