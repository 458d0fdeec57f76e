package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/server/auth"
)

// authFlags are serve's authentication and authorization flags.
type authFlags struct {
	tokens, jwks, issuer, audience string
	reflection                     optionalBool
	hosts, origins                 string
	debugAllowRemote               bool
	peerSecret                     string // --peer-secret-file
	grants                         workerGrants

	authn *auth.Authenticator // built by prepare
	// allowedHosts and allowedOrigins are the effective lists (prepare).
	allowedHosts, allowedOrigins []string
}

func (a *authFlags) define(fs *flagSet) {
	fs.StringVar(&a.tokens, "auth-tokens", "", "YAML or JSON `file` of bearer tokens (subject, roles) and client certificate roles (off when empty)")
	fs.StringVar(&a.jwks, "auth-jwks", "", "JWKS `file or URL` whose keys verify JWT bearer tokens (off when empty)")
	fs.StringVar(&a.issuer, "auth-jwt-issuer", "", "the iss a JWT must have (any when empty)")
	fs.StringVar(&a.audience, "auth-jwt-audience", "", "an aud a JWT must have (any when empty)")
	fs.Var(&a.reflection, "reflection", "serve gRPC reflection (default: on without authentication, off with it)")
	fs.StringVar(&a.hosts, "allowed-hosts", "", "comma-separated Host `names` served, \"*\" for any (default: the loopback names on a loopback --addr, else any)")
	fs.StringVar(&a.origins, "allowed-origins", "", "comma-separated browser `origins` served with CORS, \"*\" for any (default: http(s)://localhost|127.0.0.1|[::1] on any port on a loopback --addr, else none)")
	fs.BoolVar(&a.debugAllowRemote, "debug-allow-remote", false, "let --debug-addr listen on a non-loopback address (pprof has no authentication)")
	fs.StringVar(&a.peerSecret, "peer-secret-file", "", "`file` of the secret the replicas share to vouch for the identity of a client certificate's call they forward (default: none; such calls are not forwarded)")
	fs.Var(&a.grants, "worker-grant", "`WORKFLOW=WHO[,WHO...]`: let subjects (or group:ROLE, every holder of the role) serve a worker-defined workflow that belongs to another subject; repeatable")
	fs.fromEnv("peer-secret-file", "auth-tokens", "auth-jwks", "auth-jwt-issuer", "auth-jwt-audience", "reflection", "allowed-hosts", "allowed-origins", "debug-allow-remote")
}

// prepare checks the flags and builds the authenticator (reading the
// token file and the JWKS) and the Host and Origin lists for a server
// listening on addr, with pprof on debugAddr.
func (a *authFlags) prepare(ctx context.Context, log *slog.Logger, addr, debugAddr string, clientCerts bool) error {
	if err := a.access(addr, debugAddr); err != nil {
		return err
	}
	if (a.issuer != "" || a.audience != "") && a.jwks == "" {
		return usageErrorf("--auth-jwt-issuer and --auth-jwt-audience need --auth-jwks")
	}
	// With --tls-client-ca TLS verifies client certificates; when
	// authentication is on, their subjects are identities too (with the
	// roles the token file's certificates section gives them). Alone,
	// mTLS only decides who may connect.
	authOn := a.tokens != "" || a.jwks != ""
	if len(a.grants) > 0 && !authOn {
		return usageErrorf("--worker-grant needs --auth-tokens or --auth-jwks: without authentication workflows have no owners")
	}
	if a.peerSecret != "" && !authOn {
		return usageErrorf("--peer-secret-file needs --auth-tokens or --auth-jwks: without authentication there is no identity to vouch for")
	}
	authn, err := auth.New(ctx, auth.Config{TokensFile: a.tokens, JWKS: a.jwks, Issuer: a.issuer, Audience: a.audience,
		ClientCertificates: clientCerts && authOn, Logger: log, PeerSecretFile: a.peerSecret})
	if err != nil {
		return fmt.Errorf("authentication: %w", err)
	}
	if a.jwks != "" && a.audience == "" {
		log.Warn("--auth-jwks without --auth-jwt-audience: a JWT the issuer made for any other service is accepted here")
	}
	if authn != nil {
		a.authn = authn
		log.Info("authentication on", "tokens", a.tokens, "jwks", a.jwks)
	}
	return nil
}

// access works out the allowed hosts and origins, and refuses pprof on a
// non-loopback address unless asked.
func (a *authFlags) access(addr, debugAddr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErrorf("--addr %q: %v", addr, err)
	}
	if server.IsLoopback(host) {
		a.allowedHosts, a.allowedOrigins = server.LoopbackDefaults(host)
	} else {
		a.allowedHosts, a.allowedOrigins = nil, []string{}
	}
	if a.hosts != "" {
		a.allowedHosts = splitList(a.hosts)
	}
	if a.origins != "" {
		a.allowedOrigins = splitList(a.origins)
	}
	if debugAddr != "" && !a.debugAllowRemote {
		h, _, err := net.SplitHostPort(debugAddr)
		if err != nil {
			return usageErrorf("--debug-addr %q: %v", debugAddr, err)
		}
		if !server.IsLoopback(h) {
			return usageErrorf("--debug-addr %q is not a loopback address: pprof has no authentication (--debug-allow-remote to serve it anyway)", debugAddr)
		}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// apply sets the server's Auth, Reflection and allowed hosts and origins.
func (a *authFlags) apply(o *server.Options) {
	o.AllowedHosts, o.AllowedOrigins = a.allowedHosts, a.allowedOrigins
	o.Auth = a.authn
	o.WorkerGrants = a.grants
	if a.reflection.set {
		o.Reflection = &a.reflection.v
	}
}

// optionalBool is a boolean flag that knows whether it was given.
type optionalBool struct{ set, v bool }

func (b *optionalBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.v)
}

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.set, b.v = true, v
	return nil
}

func (b *optionalBool) IsBoolFlag() bool { return true }

// workerGrants is the repeatable --worker-grant WORKFLOW=WHO[,WHO...].
type workerGrants map[string][]string

func (g *workerGrants) String() string {
	if g == nil {
		return ""
	}
	var parts []string
	for name, who := range *g {
		parts = append(parts, name+"="+strings.Join(who, ","))
	}
	return strings.Join(parts, " ")
}

func (g *workerGrants) Set(s string) error {
	name, who, ok := strings.Cut(s, "=")
	list := splitList(who)
	if !ok || strings.TrimSpace(name) == "" || len(list) == 0 {
		return fmt.Errorf("%q is not WORKFLOW=WHO[,WHO...]", s)
	}
	if *g == nil {
		*g = workerGrants{}
	}
	name = strings.TrimSpace(name)
	(*g)[name] = append((*g)[name], list...)
	return nil
}
