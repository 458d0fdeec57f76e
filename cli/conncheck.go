package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
)

// A connection whose TLS settings do not fit the server's never succeeds,
// however often it is tried: the server's certificate is not trusted, or
// one side speaks TLS and the other does not. grpc-go reports each as
// UNAVAILABLE, which the client retries for seconds, with words such as
// "error reading server preface: EOF". The command line tells these
// apart as its connection is made (connCheck wraps the transport
// credentials) and ends the call at its first attempt with a mismatchError
// that says what is wrong and which flag fixes it (the interceptors below
// run inside the client's retry, which does not retry an error that is
// not a gRPC status).

// mismatchError is a connection that cannot work with these settings.
type mismatchError struct{ addr, msg string }

func (e *mismatchError) Error() string { return "connect to " + e.addr + ": " + e.msg }

// probeTimeout bounds the TLS handshake that asks whether a server that
// closed a plaintext connection speaks TLS.
const probeTimeout = 2 * time.Second

// connCheck finds mismatches as connections are made, and remembers the
// first one for the calls that then fail.
type connCheck struct {
	// clientCert: the client has a certificate to present (--tls-cert).
	clientCert bool

	mu    sync.Mutex
	found error
}

func (c *connCheck) record(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.found == nil {
		c.found = err
	}
	return err
}

func (c *connCheck) mismatch() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.found
}

// explain returns the mismatch for a call that failed with UNAVAILABLE
// after one was found, and err otherwise.
func (c *connCheck) explain(err error) error {
	if err == nil || status.Code(err) != codes.Unavailable {
		return err
	}
	if m := c.mismatch(); m != nil {
		return m
	}
	return err
}

// dialOptions are the interceptors that end a call with the mismatch.
func (c *connCheck) dialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return c.explain(invoker(ctx, method, req, reply, cc, opts...))
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			s, err := streamer(ctx, desc, cc, method, opts...)
			if err != nil {
				return nil, c.explain(err)
			}
			return checkedStream{s, c}, nil
		}),
	}
}

type checkedStream struct {
	grpc.ClientStream
	c *connCheck
}

func (s checkedStream) RecvMsg(m any) error { return s.c.explain(s.ClientStream.RecvMsg(m)) }
func (s checkedStream) SendMsg(m any) error { return s.c.explain(s.ClientStream.SendMsg(m)) }

// credentials wraps the transport credentials of the connection: TLS ones
// (useTLS) or plaintext.
func (c *connCheck) credentials(inner credentials.TransportCredentials, useTLS bool) credentials.TransportCredentials {
	return &checkedCreds{TransportCredentials: inner, c: c, tls: useTLS}
}

type checkedCreds struct {
	credentials.TransportCredentials
	c   *connCheck
	tls bool
}

func (cc *checkedCreds) Clone() credentials.TransportCredentials {
	return &checkedCreds{TransportCredentials: cc.TransportCredentials.Clone(), c: cc.c, tls: cc.tls}
}

func (cc *checkedCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := cc.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		if m := cc.c.tlsHandshakeMismatch(err, authority); m != nil {
			m.addr = authority
			return nil, nil, cc.c.record(m)
		}
		return nil, nil, err
	}
	return &checkedConn{Conn: conn, c: cc.c, tls: cc.tls}, info, nil
}

// tlsHandshakeMismatch explains a failed client handshake, or returns nil
// for a failure that may pass (a connection reset, a timeout).
func (c *connCheck) tlsHandshakeMismatch(err error, authority string) *mismatchError {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		header   tls.RecordHeaderError
		verify   *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &unknown):
		issuer := ""
		if unknown.Cert != nil {
			issuer = fmt.Sprintf(", issued by %q", unknown.Cert.Issuer.CommonName)
		}
		return &mismatchError{msg: fmt.Sprintf("TLS: server certificate not trusted (unknown authority%s); pass --tls-ca FILE with the CA that signed it", issuer)}
	case errors.As(err, &hostname):
		host, _, serr := net.SplitHostPort(authority)
		if serr != nil {
			host = authority
		}
		var names []string
		if crt := hostname.Certificate; crt != nil {
			names = append(names, crt.DNSNames...)
			for _, ip := range crt.IPAddresses {
				names = append(names, ip.String())
			}
		}
		return &mismatchError{msg: fmt.Sprintf("TLS: server certificate not valid for %s (it names %s); connect with an --addr the certificate names", host, strings.Join(names, ", "))}
	case errors.As(err, &invalid):
		return &mismatchError{msg: fmt.Sprintf("TLS: server certificate not valid (%v)", invalid.Error())}
	case errors.As(err, &verify):
		return &mismatchError{msg: fmt.Sprintf("TLS: server certificate not valid (%v)", verify.Err)}
	case errors.As(err, &header):
		return &mismatchError{msg: "the server does not speak TLS (it answered in plaintext); connect without --tls, --tls-ca, --tls-cert and --tls-key"}
	}
	return c.clientCertMismatch(err)
}

// clientCertMismatch explains a TLS alert from the server about the
// client's certificate (in TLS 1.3 it comes after the client's handshake
// is over, with the first read), or returns nil.
func (c *connCheck) clientCertMismatch(err error) *mismatchError {
	alert, ok := remoteAlert(err)
	if !ok {
		return nil
	}
	switch alert {
	case 116: // certificate_required (RFC 8446)
		if c.clientCert {
			// crypto/tls sends no certificate that the server's list of
			// acceptable CAs rules out.
			return &mismatchError{msg: "TLS: the server requires a client certificate signed by a CA it trusts (its --tls-client-ca), and the one of --tls-cert is not"}
		}
		return &mismatchError{msg: "TLS: the server requires a client certificate; pass --tls-cert and --tls-key"}
	case 42, 43, 44, 45, 46, 48: // bad, unsupported, revoked, expired, unknown certificate; unknown CA
		return &mismatchError{msg: fmt.Sprintf("TLS: the server refused the client certificate (%v); pass one signed by a CA the server trusts (its --tls-client-ca)", err)}
	}
	return nil
}

// checkedConn looks at how the server first answers on a connection whose
// handshake passed: a TLS alert about the client's certificate, or, on a
// plaintext connection, a close before any byte (what a TLS server does
// to an HTTP/2 preface), which a TLS handshake of its own then explains.
type checkedConn struct {
	net.Conn
	c        *connCheck
	tls      bool
	once     sync.Once
	answered bool
}

func (cc *checkedConn) Read(b []byte) (int, error) {
	n, err := cc.Conn.Read(b)
	if n > 0 {
		cc.answered = true
	}
	if err == nil || cc.answered {
		return n, err
	}
	cc.once.Do(func() {
		if cc.tls {
			if m := cc.c.clientCertMismatch(err); m != nil {
				m.addr = cc.RemoteAddr().String()
				err = cc.c.record(m)
			}
			return
		}
		if errors.Is(err, io.EOF) || isReset(err) {
			if speaksTLS(cc.RemoteAddr()) {
				err = cc.c.record(&mismatchError{cc.RemoteAddr().String(), "the server speaks TLS; use --tls (and --tls-ca FILE unless the system's roots trust its certificate)"})
			}
		}
	})
	return n, err
}

func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

// remoteAlert returns the TLS alert the server sent, which crypto/tls
// reports as a net.OpError "remote error" around its unexported alert
// type (a uint8).
func remoteAlert(err error) (uint8, bool) {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return 0, false
	}
	if v := reflect.ValueOf(op.Err); v.Kind() == reflect.Uint8 {
		return uint8(v.Uint()), true
	}
	return 0, false
}

// speaksTLS reports whether addr completes a TLS handshake, or answers one
// with a TLS alert. It checks no certificate: it only asks which protocol
// the server speaks, and sends nothing else.
func speaksTLS(addr net.Addr) bool {
	if addr == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} // only the protocol is asked
	conn, err := d.DialContext(ctx, addr.Network(), addr.String())
	if err != nil {
		_, alert := remoteAlert(err)
		return alert
	}
	_ = conn.Close() // the probe is over
	return true
}
