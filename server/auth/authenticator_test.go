package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/server/auth"
)

// issuer signs JWTs with an ECDSA key whose JWKS it writes or serves.
type issuer struct {
	key *ecdsa.PrivateKey
	kid string
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &issuer{key: k, kid: "k1"}
}

func (is *issuer) jwks(t *testing.T) []byte {
	t.Helper()
	b, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &is.key.PublicKey, KeyID: is.kid, Algorithm: string(jose.ES256), Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (is *issuer) sign(t *testing.T, c jwt.Claims, extra map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: is.key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", is.kid))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(c).Claims(extra).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func request(token string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/wfd.v1.WorkflowService/ListWorkflows", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

func TestStaticTokens(t *testing.T) {
	sum := sha256.Sum256([]byte("bob-token"))
	file := writeFile(t, "tokens.yaml", []byte(`
tokens:
  - token: alice-token
    subject: alice
    roles: [reader, tasks]
  - sha256: `+hex.EncodeToString(sum[:])+`
    subject: bob
    roles: [admin]
`))
	a, err := auth.New(context.Background(), auth.Config{TokensFile: file})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		token   string
		want    auth.Identity
		wantErr error
	}{
		{"alice-token", auth.Identity{Subject: "alice", Roles: []string{"reader", "tasks"}}, nil},
		{"bob-token", auth.Identity{Subject: "bob", Roles: []string{"admin"}}, nil},
		{"alice-token2", auth.Identity{}, auth.ErrBadCredentials},
		{"", auth.Identity{}, auth.ErrNoCredentials},
	} {
		id, err := a.Authenticate(request(tc.token))
		if !errors.Is(err, tc.wantErr) || id.Subject != tc.want.Subject || !slices.Equal(id.Roles, tc.want.Roles) {
			t.Errorf("token %q: got %+v, %v; want %+v, %v", tc.token, id, err, tc.want, tc.wantErr)
		}
	}
	r := request("")
	r.Header.Set("Authorization", "Basic YWxpY2U6eA==")
	if _, err := a.Authenticate(r); !errors.Is(err, auth.ErrBadCredentials) {
		t.Errorf("Basic credentials: %v, want ErrBadCredentials", err)
	}
}

func TestTokenFileRefusesBadEntries(t *testing.T) {
	for name, body := range map[string]string{
		"no subject":     `{"tokens": [{"token": "x"}]}`,
		"token and hash": `{"tokens": [{"token": "x", "sha256": "00", "subject": "a"}]}`,
		"bad hash":       `{"tokens": [{"sha256": "zz", "subject": "a"}]}`,
		"unknown field":  `{"tokens": [{"token": "x", "subject": "a", "role": ["admin"]}]}`,
		"not a mapping":  `[1, 2]`,
	} {
		if _, err := auth.New(context.Background(), auth.Config{TokensFile: writeFile(t, "t.json", []byte(body))}); err == nil {
			t.Errorf("%s: New accepted %s", name, body)
		}
	}
}

func TestJWT(t *testing.T) {
	is := newIssuer(t)
	now := time.Now()
	valid := jwt.Claims{Subject: "carol", Issuer: "https://idp.example", Audience: jwt.Audience{"wfd"}, Expiry: jwt.NewNumericDate(now.Add(time.Hour))}
	other := newIssuer(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(is.jwks(t)) }))
	defer srv.Close()
	for _, source := range []string{"file", "url"} {
		t.Run(source, func(t *testing.T) {
			jwks := srv.URL
			if source == "file" {
				jwks = writeFile(t, "jwks.json", is.jwks(t))
			}
			a, err := auth.New(context.Background(), auth.Config{JWKS: jwks, Issuer: "https://idp.example", Audience: "wfd"})
			if err != nil {
				t.Fatal(err)
			}
			id, err := a.Authenticate(request(is.sign(t, valid, map[string]any{"roles": []string{"reader"}, "wfd_roles": []string{"starter"}, "groups": "finance ops"})))
			if err != nil || id.Subject != "carol" || !slices.Equal(id.Roles, []string{"reader", "starter", "finance", "ops"}) {
				t.Fatalf("valid JWT: %+v, %v", id, err)
			}
			expired, wrongAud, wrongIss, noExp, noSub := valid, valid, valid, valid, valid
			expired.Expiry = jwt.NewNumericDate(now.Add(-time.Hour))
			wrongAud.Audience = jwt.Audience{"someone-else"}
			wrongIss.Issuer = "https://evil.example"
			noExp.Expiry = nil
			noSub.Subject = ""
			for name, tok := range map[string]string{
				"expired":        is.sign(t, expired, nil),
				"wrong audience": is.sign(t, wrongAud, nil),
				"wrong issuer":   is.sign(t, wrongIss, nil),
				"no exp":         is.sign(t, noExp, nil),
				"no sub":         is.sign(t, noSub, nil),
				"other key":      other.sign(t, valid, nil),
				"garbage":        "a.b.c",
			} {
				if id, err := a.Authenticate(request(tok)); !errors.Is(err, auth.ErrBadCredentials) {
					t.Errorf("%s: got %+v, %v; want ErrBadCredentials", name, id, err)
				}
			}
		})
	}
}

// TestJWKSRefresh: a token signed by a key the issuer rotated in after
// start-up verifies once the cached JWKS is older than its refresh period.
func TestJWKSRefresh(t *testing.T) {
	old, rotated := newIssuer(t), newIssuer(t)
	rotated.kid = "k2"
	current := old
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(current.jwks(t)) }))
	defer srv.Close()
	clock := time.Now()
	a, err := auth.New(context.Background(), auth.Config{JWKS: srv.URL, JWKSRefresh: time.Minute, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	claims := jwt.Claims{Subject: "dave", Expiry: jwt.NewNumericDate(clock.Add(time.Hour))}
	current = rotated
	if _, err := a.Authenticate(request(rotated.sign(t, claims, nil))); err == nil {
		t.Fatal("a key fetched after start-up verified before any refresh was due")
	}
	clock = clock.Add(2 * time.Minute)
	if id, err := a.Authenticate(request(rotated.sign(t, claims, nil))); err != nil || id.Subject != "dave" {
		t.Fatalf("after the refresh period: %+v, %v", id, err)
	}
}

func certificate(t *testing.T, tmpl *x509.Certificate) *x509.Certificate {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = big.NewInt(1)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClientCertificate maps verified client certificates to identities:
// the URI SAN, else the common name, else the DNS SAN; roles from the
// token file's certificates section. An unverified certificate is no
// credential.
func TestClientCertificate(t *testing.T) {
	file := writeFile(t, "tokens.yaml", []byte(`
certificates:
  - subject: spiffe://example.org/worker
    roles: [worker]
  - subject: erin
    roles: [reader, tasks]
`))
	a, err := auth.New(context.Background(), auth.Config{TokensFile: file, ClientCertificates: true})
	if err != nil {
		t.Fatal(err)
	}
	spiffe, _ := url.Parse("spiffe://example.org/worker")
	for _, tc := range []struct {
		name string
		cert *x509.Certificate
		want auth.Identity
	}{
		{"URI SAN", &x509.Certificate{Subject: pkix.Name{CommonName: "ignored"}, URIs: []*url.URL{spiffe}, DNSNames: []string{"w.example"}},
			auth.Identity{Subject: "spiffe://example.org/worker", Roles: []string{"worker"}}},
		{"common name", &x509.Certificate{Subject: pkix.Name{CommonName: "erin"}, DNSNames: []string{"e.example"}},
			auth.Identity{Subject: "erin", Roles: []string{"reader", "tasks"}}},
		{"DNS SAN, unmapped", &x509.Certificate{DNSNames: []string{"svc.example"}}, auth.Identity{Subject: "svc.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := certificate(t, tc.cert)
			r := request("")
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}, VerifiedChains: [][]*x509.Certificate{{c}}}
			id, err := a.Authenticate(r)
			if err != nil || id.Subject != tc.want.Subject || !slices.Equal(id.Roles, tc.want.Roles) {
				t.Fatalf("got %+v, %v; want %+v", id, err, tc.want)
			}
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}}
			if _, err := a.Authenticate(r); !errors.Is(err, auth.ErrNoCredentials) {
				t.Fatalf("unverified certificate: %v, want ErrNoCredentials", err)
			}
		})
	}
	c := certificate(t, &x509.Certificate{})
	r := request("")
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}, VerifiedChains: [][]*x509.Certificate{{c}}}
	if _, err := a.Authenticate(r); !errors.Is(err, auth.ErrBadCredentials) {
		t.Fatalf("certificate without a name: %v, want ErrBadCredentials", err)
	}
}

func TestNoConfigNoAuthenticator(t *testing.T) {
	a, err := auth.New(context.Background(), auth.Config{})
	if a != nil || err != nil {
		t.Fatalf("New(zero Config) = %v, %v; want nil, nil", a, err)
	}
}

// TestJWKSRevokedKey: a key the issuer dropped stops verifying once the
// cached set is past its refresh period (refetched in the background).
func TestJWKSRevokedKey(t *testing.T) {
	old, rotated := newIssuer(t), newIssuer(t)
	rotated.kid = "k2"
	var mu sync.Mutex
	current := old
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write(current.jwks(t))
	}))
	defer srv.Close()
	var clockMu sync.Mutex
	clock := time.Now()
	now := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
	a, err := auth.New(context.Background(), auth.Config{JWKS: srv.URL, JWKSRefresh: time.Minute, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	tok := old.sign(t, jwt.Claims{Subject: "gil", Expiry: jwt.NewNumericDate(now().Add(time.Hour))}, nil)
	if _, err := a.Authenticate(request(tok)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	current = rotated
	mu.Unlock()
	clockMu.Lock()
	clock = clock.Add(2 * time.Minute)
	clockMu.Unlock()
	testwait.For(t, "the revoked key refused", func() bool {
		_, err := a.Authenticate(request(tok))
		return errors.Is(err, auth.ErrBadCredentials)
	})
}

// TestTokenFileReload: a changed token file takes effect without a
// restart; one that no longer reads leaves the previous tokens in force.
func TestTokenFileReload(t *testing.T) {
	file := writeFile(t, "tokens.yaml", []byte("tokens:\n  - {token: one, subject: first, roles: [reader]}\n"))
	var mu sync.Mutex
	clock := time.Now()
	advance := func() { mu.Lock(); clock = clock.Add(3 * time.Second); mu.Unlock() }
	a, err := auth.New(context.Background(), auth.Config{TokensFile: file, Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }})
	if err != nil {
		t.Fatal(err)
	}
	rewrite := func(body string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(file, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		advance()
	}
	check := func(token string, want error) {
		t.Helper()
		if _, err := a.Authenticate(request(token)); !errors.Is(err, want) {
			t.Fatalf("token %q: %v, want %v", token, err, want)
		}
	}
	check("one", nil)
	rewrite("tokens:\n  - {token: two, subject: second, roles: [reader]}\n", time.Now().Add(time.Hour))
	check("two", nil)
	check("one", auth.ErrBadCredentials)
	rewrite("tokens: [ {token: three", time.Now().Add(2*time.Hour))
	check("two", nil)
	check("three", auth.ErrBadCredentials)
}
