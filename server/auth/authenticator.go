package auth

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// ErrNoCredentials: the request carries neither a bearer token nor a
// verified client certificate.
var ErrNoCredentials = errors.New("no credentials: send a bearer token or a client certificate")

// ErrBadCredentials: the request's credentials are not valid (an unknown
// token, a JWT that fails verification or has expired).
var ErrBadCredentials = errors.New("invalid credentials")

// Config says where identities come from. Any combination may be set;
// with none, New returns nil (authentication is off).
type Config struct {
	// TokensFile is the --auth-tokens file (see File): static tokens, and
	// the roles of client certificates. It is read again when it changes.
	TokensFile string
	// Logger reports a token file that changed but does not read
	// (default slog.Default()).
	Logger *slog.Logger
	// JWKS is a file or an http(s) URL holding the keys that sign JWTs.
	JWKS string
	// Issuer and Audience, if set, must match the JWT's iss and one of its aud.
	Issuer   string
	Audience string
	// RolesClaims are the JWT claims whose string lists give roles
	// (default "roles", "wfd_roles" and "groups"; roles from all are kept).
	RolesClaims []string
	// JWKSRefresh is how long fetched keys are used before being fetched
	// again (default 5 minutes).
	JWKSRefresh time.Duration
	// HTTPClient fetches a JWKS URL (default: one with a 10 s timeout).
	HTTPClient *http.Client
	// Now is the clock (default time.Now).
	Now func() time.Time
	// ClientCertificates: trust client certificates (TLS must verify them
	// against a client CA). Without a mapping in TokensFile a certificate
	// identity has no roles.
	ClientCertificates bool
	// PeerSecretFile holds the secret the replicas share to vouch for the
	// identity of a call one forwards to another (ForwardedIdentity): one per
	// line, the first signs. Read once; it alone enables nothing.
	PeerSecretFile string
}

// Enabled reports whether c configures any way to authenticate.
func (c *Config) Enabled() bool {
	return c.TokensFile != "" || c.JWKS != "" || c.ClientCertificates
}

// Authenticator turns a request's credentials into an Identity.
type Authenticator struct {
	now         func() time.Time
	tokens      *tokenFile
	certs       bool
	keys        *keySet
	issuer      string
	audience    string
	rolesClaims []string
	peerKeys    [][]byte
}

// New builds an Authenticator; nil (and no error) when c configures none.
func New(ctx context.Context, c Config) (*Authenticator, error) {
	if !c.Enabled() {
		return nil, nil
	}
	a := &Authenticator{now: c.Now, certs: c.ClientCertificates,
		issuer: c.Issuer, audience: c.Audience, rolesClaims: c.RolesClaims}
	if a.now == nil {
		a.now = time.Now
	}
	if len(a.rolesClaims) == 0 {
		a.rolesClaims = []string{"roles", "wfd_roles", "groups"}
	}
	if c.PeerSecretFile != "" {
		var err error
		if a.peerKeys, err = readPeerSecrets(c.PeerSecretFile); err != nil {
			return nil, err
		}
	}
	if c.TokensFile != "" {
		log := c.Logger
		if log == nil {
			log = slog.Default()
		}
		var err error
		if a.tokens, err = openTokenFile(c.TokensFile, a.now, log); err != nil {
			return nil, err
		}
	}
	if c.JWKS != "" {
		client := c.HTTPClient
		if client == nil {
			client = &http.Client{Timeout: 10 * time.Second}
		}
		refresh := c.JWKSRefresh
		if refresh <= 0 {
			refresh = 5 * time.Minute
		}
		var err error
		if a.keys, err = newKeySet(ctx, c.JWKS, client, a.now, refresh); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Authenticate returns the identity of r's caller. A bearer token (the
// Authorization header) is used if present, else a client certificate
// the TLS handshake verified. The error wraps ErrNoCredentials or
// ErrBadCredentials. A call forwarded by another replica with a
// ForwardedIdentityHeader is authenticated by that header alone.
func (a *Authenticator) Authenticate(r *http.Request) (Identity, error) {
	if _, ok := r.Header[ForwardedIdentityHeader]; ok {
		return a.forwardedIdentity(r)
	}
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			return Identity{}, fmt.Errorf("%w: the Authorization header must be \"Bearer <token>\"", ErrBadCredentials)
		}
		return a.bearer(r.Context(), strings.TrimSpace(token))
	}
	if a.certs && r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		return a.certificate(r.TLS.VerifiedChains[0][0])
	}
	return Identity{}, ErrNoCredentials
}

func (a *Authenticator) bearer(ctx context.Context, token string) (Identity, error) {
	if a.tokens != nil {
		if tokens, _ := a.tokens.current(); tokens != nil {
			if id, ok := tokens.lookup(token); ok {
				return id, nil
			}
		}
	}
	if a.keys != nil && strings.Count(token, ".") == 2 {
		return a.jwt(ctx, token)
	}
	return Identity{}, fmt.Errorf("%w: unknown token", ErrBadCredentials)
}

// Asymmetric algorithms only: a JWKS holds public keys.
var jwtAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

func (a *Authenticator) jwt(ctx context.Context, raw string) (Identity, error) {
	tok, err := jwt.ParseSigned(raw, jwtAlgorithms)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrBadCredentials, err)
	}
	kid := ""
	if len(tok.Headers) > 0 {
		kid = tok.Headers[0].KeyID
	}
	var claims jwt.Claims
	extra := map[string]any{}
	verified := false
	for _, k := range a.keys.key(ctx, kid) {
		if tok.Claims(k.Key, &claims, &extra) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return Identity{}, fmt.Errorf("%w: the JWT's signature does not verify with the JWKS", ErrBadCredentials)
	}
	if claims.Expiry == nil {
		return Identity{}, fmt.Errorf("%w: the JWT has no exp", ErrBadCredentials)
	}
	exp := jwt.Expected{Issuer: a.issuer, Time: a.now()}
	if a.audience != "" {
		exp.AnyAudience = jwt.Audience{a.audience}
	}
	if err := claims.ValidateWithLeeway(exp, time.Minute); err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrBadCredentials, err)
	}
	if claims.Subject == "" {
		return Identity{}, fmt.Errorf("%w: the JWT has no sub", ErrBadCredentials)
	}
	id := Identity{Subject: claims.Subject}
	for _, name := range a.rolesClaims {
		switch v := extra[name].(type) {
		case []any:
			for _, r := range v {
				if s, ok := r.(string); ok && !slices.Contains(id.Roles, s) {
					id.Roles = append(id.Roles, s)
				}
			}
		case string: // some issuers send a space-separated list
			for _, s := range strings.Fields(v) {
				if !slices.Contains(id.Roles, s) {
					id.Roles = append(id.Roles, s)
				}
			}
		}
	}
	return id, nil
}

// certificate maps a verified client certificate to an identity: its
// subject is the first URI SAN (a SPIFFE id, say), else the subject's
// common name, else the first DNS SAN; its roles come from the token
// file's certificates section.
func (a *Authenticator) certificate(c *x509.Certificate) (Identity, error) {
	var subject string
	switch {
	case len(c.URIs) > 0:
		subject = c.URIs[0].String()
	case c.Subject.CommonName != "":
		subject = c.Subject.CommonName
	case len(c.DNSNames) > 0:
		subject = c.DNSNames[0]
	default:
		return Identity{}, fmt.Errorf("%w: the client certificate names no subject (no URI SAN, common name or DNS SAN)", ErrBadCredentials)
	}
	id := Identity{Subject: subject}
	if a.tokens != nil {
		_, roles := a.tokens.current()
		id.Roles = slices.Clone(roles[subject])
	}
	return id, nil
}
