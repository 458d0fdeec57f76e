package tlsfiles_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wfd-dev/wfd/internal/devcert"
	"github.com/wfd-dev/wfd/internal/testlog"
	"github.com/wfd-dev/wfd/server/tlsfiles"
)

func serial(t *testing.T, c *tls.Certificate) string {
	t.Helper()
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf.SerialNumber.String()
}

// A certificate renewed file by file passes through a state where the
// certificate is new and the key old: that pair does not load, and the
// old one is served until the key arrives.
func TestReloaderKeepsTheLastGoodPairWhileTheFilesChange(t *testing.T) {
	ca, err := devcert.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	first, err := ca.Server("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	second, err := ca.Server("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile, err := first.Write(dir, "server")
	if err != nil {
		t.Fatal(err)
	}
	logs := &testlog.Buffer{}
	r, err := tlsfiles.NewReloader(certFile, keyFile, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	get := func() string {
		t.Helper()
		c, err := r.GetCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		return serial(t, c)
	}
	if got := get(); got != first.Serial.String() {
		t.Fatalf("serving %s, want the first pair %s", got, first.Serial)
	}

	if err := os.WriteFile(certFile, second.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != first.Serial.String() {
		t.Fatalf("with a new certificate and the old key: serving %s, want the first pair %s", got, first.Serial)
	}
	if !strings.Contains(logs.String(), "do not load") {
		t.Fatalf("the mismatched pair was not logged; logs:\n%s", logs)
	}

	if err := os.WriteFile(keyFile, second.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != second.Serial.String() {
		t.Fatalf("with both files new: serving %s, want the second pair %s", got, second.Serial)
	}

	// Files that vanish for a moment (replaced by a rename) keep the pair.
	if err := os.Remove(certFile); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != second.Serial.String() {
		t.Fatalf("with the certificate file missing: serving %s, want %s", got, second.Serial)
	}
}

func TestServerConfig(t *testing.T) {
	ca, err := devcert.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.Server("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile, err := pair.Write(dir, "server")
	if err != nil {
		t.Fatal(err)
	}
	caFile, err := ca.WriteCA(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name    string
		files   tlsfiles.Files
		auth    tls.ClientAuthType
		wantErr string
	}{
		{"server only", tlsfiles.Files{Cert: certFile, Key: keyFile}, tls.NoClientCert, ""},
		{"mTLS by default requires", tlsfiles.Files{Cert: certFile, Key: keyFile, ClientCA: caFile}, tls.RequireAndVerifyClientCert, ""},
		{"mTLS verify if given", tlsfiles.Files{Cert: certFile, Key: keyFile, ClientCA: caFile, ClientAuth: tlsfiles.VerifyIfGiven}, tls.VerifyClientCertIfGiven, ""},
		{"unknown mode", tlsfiles.Files{Cert: certFile, Key: keyFile, ClientCA: caFile, ClientAuth: "sometimes"}, 0, "client auth"},
		{"mode without CA", tlsfiles.Files{Cert: certFile, Key: keyFile, ClientAuth: tlsfiles.Require}, 0, "needs a client CA"},
		{"missing key", tlsfiles.Files{Cert: certFile, Key: missing}, 0, "missing.pem"},
		{"key as CA", tlsfiles.Files{Cert: certFile, Key: keyFile, ClientCA: keyFile}, 0, "no PEM certificate"},
		{"no key", tlsfiles.Files{Cert: certFile}, 0, "both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tlsfiles.ServerConfig(tc.files, log)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ClientAuth != tc.auth || cfg.MinVersion != tls.VersionTLS12 || cfg.GetCertificate == nil {
				t.Fatalf("config: client auth %v min version %x, want %v and TLS 1.2", cfg.ClientAuth, cfg.MinVersion, tc.auth)
			}
		})
	}
}
