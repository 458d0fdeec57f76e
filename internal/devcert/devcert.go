// Package devcert makes throwaway certificate authorities and certificates
// for tests and benchmarks: ECDSA P-256 keys, PEM output, nothing stored.
// Never use them for anything real.
package devcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a self-signed certificate authority.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// CertPEM is the CA's certificate, PEM-encoded.
	CertPEM []byte
}

// Pair is a certificate and its key, PEM-encoded.
type Pair struct {
	CertPEM, KeyPEM []byte
	// Serial is the certificate's serial number, to tell pairs apart.
	Serial *big.Int
}

// NewCA makes a CA named name, valid for a day.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("devcert: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("devcert: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("devcert: %w", err)
	}
	return &CA{cert: cert, key: key, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Pool returns a pool holding the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Server issues a server certificate for hosts (IP addresses or DNS names).
func (ca *CA) Server(hosts ...string) (Pair, error) {
	return ca.issue(hosts[0], hosts, x509.ExtKeyUsageServerAuth)
}

// Peer issues a certificate for hosts that serves TLS and is also a
// client certificate (serverAuth and clientAuth): a replica's, which it
// presents to the other replicas under mTLS.
func (ca *CA) Peer(hosts ...string) (Pair, error) {
	return ca.issue(hosts[0], hosts, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
}

// Client issues a client certificate whose subject is commonName.
func (ca *CA) Client(commonName string) (Pair, error) {
	return ca.issue(commonName, nil, x509.ExtKeyUsageClientAuth)
}

func (ca *CA) issue(cn string, hosts []string, usage ...x509.ExtKeyUsage) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("devcert: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usage,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return Pair{}, fmt.Errorf("devcert: %w", err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Pair{}, fmt.Errorf("devcert: %w", err)
	}
	return Pair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}),
		Serial:  tmpl.SerialNumber,
	}, nil
}

// TLS returns the pair as a tls.Certificate.
func (p Pair) TLS() (tls.Certificate, error) {
	c, err := tls.X509KeyPair(p.CertPEM, p.KeyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("devcert: %w", err)
	}
	return c, nil
}

// Write writes the pair to dir/name.crt and dir/name.key (the key readable
// by its owner only) and returns their paths.
func (p Pair) Write(dir, name string) (certFile, keyFile string, err error) {
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, p.CertPEM, 0o644); err != nil {
		return "", "", fmt.Errorf("devcert: %w", err)
	}
	if err := os.WriteFile(keyFile, p.KeyPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("devcert: %w", err)
	}
	return certFile, keyFile, nil
}

// WriteCA writes the CA's certificate to dir/name.crt and returns its path.
func (ca *CA) WriteCA(dir, name string) (string, error) {
	f := filepath.Join(dir, name+".crt")
	if err := os.WriteFile(f, ca.CertPEM, 0o644); err != nil {
		return "", fmt.Errorf("devcert: %w", err)
	}
	return f, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}
