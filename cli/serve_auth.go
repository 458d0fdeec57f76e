package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/server/auth"
)

// authFlags are serve's authentication and authorization flags.
type authFlags struct {
	tokens, jwks, issuer, audience string
	reflection                     optionalBool

	authn *auth.Authenticator // built by prepare
}

func (a *authFlags) define(fs *flagSet) {
	fs.StringVar(&a.tokens, "auth-tokens", "", "YAML or JSON `file` of bearer tokens (subject, roles) and client certificate roles (off when empty)")
	fs.StringVar(&a.jwks, "auth-jwks", "", "JWKS `file or URL` whose keys verify JWT bearer tokens (off when empty)")
	fs.StringVar(&a.issuer, "auth-jwt-issuer", "", "the iss a JWT must have (any when empty)")
	fs.StringVar(&a.audience, "auth-jwt-audience", "", "an aud a JWT must have (any when empty)")
	fs.Var(&a.reflection, "reflection", "serve gRPC reflection (default: on without authentication, off with it)")
	fs.fromEnv("auth-tokens", "auth-jwks", "auth-jwt-issuer", "auth-jwt-audience", "reflection")
}

// prepare checks the flags and builds the authenticator (reading the
// token file and the JWKS).
func (a *authFlags) prepare(ctx context.Context, log *slog.Logger) error {
	if (a.issuer != "" || a.audience != "") && a.jwks == "" {
		return usageErrorf("--auth-jwt-issuer and --auth-jwt-audience need --auth-jwks")
	}
	authn, err := auth.New(ctx, auth.Config{TokensFile: a.tokens, JWKS: a.jwks, Issuer: a.issuer, Audience: a.audience})
	if err != nil {
		return fmt.Errorf("authentication: %w", err)
	}
	if authn != nil {
		a.authn = authn
		log.Info("authentication on", "tokens", a.tokens, "jwks", a.jwks)
	}
	return nil
}

// apply sets the server's Auth and Reflection.
func (a *authFlags) apply(o *server.Options) {
	o.Auth = a.authn
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
