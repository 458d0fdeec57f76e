package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/wfd-dev/wfd/internal/devcert"
)

// benchToken is the bearer token the --tls run sends with every call; the
// server verifies it against a token file (--auth-tokens) and checks the
// caller's role for each call, so the run measures authentication too.
const benchToken = "wfd-bench-token-0123456789abcdef0123456789abcdef"

// security is what a --tls run needs: a throwaway CA and a server
// certificate for 127.0.0.1 in a temporary directory, and the token.
type security struct {
	dir               string
	certFile, keyFile string
	client            *tls.Config
	tokensFile        string
	token             string
}

func newSecurity() (*security, error) {
	ca, err := devcert.NewCA("wfd bench CA")
	if err != nil {
		return nil, err
	}
	pair, err := ca.Server("127.0.0.1")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "wfd-bench-tls-")
	if err != nil {
		return nil, err
	}
	s := &security{dir: dir, client: &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}, token: benchToken}
	if s.certFile, s.keyFile, err = pair.Write(dir, "server"); err != nil {
		s.close()
		return nil, fmt.Errorf("writing the bench certificate: %w", err)
	}
	s.tokensFile = filepath.Join(dir, "tokens.yaml")
	tokens := "tokens:\n  - token: " + benchToken + "\n    subject: wfd-bench\n    roles: [admin]\n"
	if err := os.WriteFile(s.tokensFile, []byte(tokens), 0o600); err != nil {
		s.close()
		return nil, fmt.Errorf("writing the bench token file: %w", err)
	}
	return s, nil
}

// serveArgs are the server's TLS and authentication flags.
func (s *security) serveArgs() []string {
	return []string{"--tls-cert", s.certFile, "--tls-key", s.keyFile, "--auth-tokens", s.tokensFile}
}

func (s *security) close() { _ = os.RemoveAll(s.dir) }

// grpcOptions are grpc-go's TLS credentials and the token.
func (s *security) grpcOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithTransportCredentials(credentials.NewTLS(s.client.Clone())),
		grpc.WithPerRPCCredentials(bearer{"Bearer " + s.token}),
	}
}

// bearer is a per-RPC credential, as the Go client's WithBearerToken.
type bearer struct{ value string }

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": b.value}, nil
}

func (bearer) RequireTransportSecurity() bool { return true }

// headerInterceptor sets a header (the token, the namespace) on
// connect-go's calls, streams included.
type headerInterceptor struct{ key, value string }

func (t headerInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set(t.key, t.value)
		return next(ctx, req)
	}
}

func (t headerInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set(t.key, t.value)
		return conn
	}
}

func (t headerInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
