package client

import (
	"context"
	"fmt"
	"net"
	"strings"

	"google.golang.org/grpc/credentials"
)

// bearer is a per-RPC credential carrying a bearer token.
type bearer struct {
	header     map[string]string
	requireTLS bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return b.header, nil
}

// RequireTransportSecurity makes grpc-go refuse to send the token on a
// connection without TLS; false only for a loopback target (tokenCredentials).
func (b bearer) RequireTransportSecurity() bool { return b.requireTLS }

// tokenCredentials returns the credential for token, or an error if it
// would go in plaintext to a target that is not on this machine.
func tokenCredentials(target, token string, creds credentials.TransportCredentials) (credentials.PerRPCCredentials, error) {
	b := bearer{header: map[string]string{"authorization": "Bearer " + token}, requireTLS: true}
	if creds.Info().SecurityProtocol == "insecure" {
		if !loopbackTarget(target) {
			return nil, fmt.Errorf("client: dial %s: a bearer token is sent only over TLS (WithTLS), or in plaintext to a loopback address", target)
		}
		b.requireTLS = false
	}
	return b, nil
}

// loopbackTarget reports whether a gRPC target names this machine: a unix
// socket, localhost, or a loopback IP address, with or without a
// "dns:///" or "passthrough:///" scheme.
func loopbackTarget(target string) bool {
	if strings.HasPrefix(target, "unix:") || strings.HasPrefix(target, "unix-abstract:") {
		return true
	}
	if i := strings.Index(target, ":///"); i >= 0 {
		target = target[i+4:]
	} else if strings.HasPrefix(target, "dns://") {
		// dns://authority/host:port
		if j := strings.Index(target[len("dns://"):], "/"); j >= 0 {
			target = target[len("dns://")+j+1:]
		}
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		host = target
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
