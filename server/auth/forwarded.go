package auth

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// ForwardedIdentityHeader carries the identity of a call that a replica
// forwards to the handler's owner for a caller it authenticated by its
// client certificate (which the owner cannot see: it sees the forwarding
// replica's). Its value is a JWT signed (HS256) with the replicas' shared
// peer secret (Config.PeerSecretFile) over the identity, the procedure and
// the time, so only a replica can make one: a request that carries the
// header is authenticated by it alone, and refused (ErrBadCredentials) if
// it does not verify, so that a client setting it never gains an identity.
const ForwardedIdentityHeader = "Wfd-Forwarded-Identity"

// ForwardedValidity is how far a forwarded identity's time may be from
// the owner's clock: the forwarding takes milliseconds, the rest is
// clock skew between replicas. It bounds the replay of a captured header
// (to the same procedure), which TLS between replicas prevents anyway.
const ForwardedValidity = 30 * time.Second

// ErrNoPeerSecret: a forwarded identity cannot be signed or verified
// without Config.PeerSecretFile.
var ErrNoPeerSecret = errors.New("no peer secret (--peer-secret-file): replicas cannot vouch for an identity to each other")

// minPeerSecret is the shortest secret accepted, in bytes.
const minPeerSecret = 32

// readPeerSecrets reads the peer secret file: one secret per non-empty
// line, each at least minPeerSecret bytes. The first signs; all verify,
// so that a secret is rotated by adding the new one on a second line,
// restarting every replica, then moving it first, restarting, and
// dropping the old one.
func readPeerSecrets(file string) ([][]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("auth: peer secret: %w", err)
	}
	var keys [][]byte
	for line := range strings.Lines(string(b)) {
		s := strings.TrimSpace(line)
		if s == "" {
			continue
		}
		if len(s) < minPeerSecret {
			return nil, fmt.Errorf("auth: peer secret file %s: a secret is shorter than %d bytes (make one with: openssl rand -base64 48)", file, minPeerSecret)
		}
		keys = append(keys, []byte(s))
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("auth: peer secret file %s holds no secret", file)
	}
	return keys, nil
}

// forwardedType is the JWS "typ" of a forwarded identity: a token signed
// with a peer secret is never taken for anything else.
const forwardedType = "wfd-forwarded+jwt"

// forwardedClaims are what a forwarded identity signs: the caller (sub,
// roles), the procedure it may be used for (aud) and when it was made
// (iat; exp is the same instant, and the verifier's leeway of
// ForwardedValidity makes it valid that long either side of it).
type forwardedClaims struct {
	jwt.Claims
	Roles []string `json:"roles,omitempty"`
}

// SignForwarded returns the ForwardedIdentityHeader value that vouches
// for id calling procedure ("/wfd.v1.WorkflowService/CompleteTask") now:
// a JWT signed (HS256) with the first peer secret. It fails with
// ErrNoPeerSecret without a peer secret.
func (a *Authenticator) SignForwarded(id Identity, procedure string) (string, error) {
	if a == nil || len(a.peerKeys) == 0 {
		return "", ErrNoPeerSecret
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: a.peerKeys[0]},
		(&jose.SignerOptions{}).WithType(forwardedType))
	if err != nil {
		return "", fmt.Errorf("auth: forwarded identity: %w", err)
	}
	now := jwt.NewNumericDate(a.now())
	v, err := jwt.Signed(signer).Claims(forwardedClaims{
		Claims: jwt.Claims{Subject: id.Subject, Audience: jwt.Audience{procedure}, IssuedAt: now, Expiry: now},
		Roles:  id.Roles,
	}).Serialize()
	if err != nil {
		return "", fmt.Errorf("auth: forwarded identity: %w", err)
	}
	return v, nil
}

// CanForwardIdentities reports whether a peer secret is configured.
func (a *Authenticator) CanForwardIdentities() bool { return a != nil && len(a.peerKeys) > 0 }

// forwardedIdentity verifies r's ForwardedIdentityHeader.
func (a *Authenticator) forwardedIdentity(r *http.Request) (Identity, error) {
	vals := r.Header.Values(ForwardedIdentityHeader)
	if len(a.peerKeys) == 0 {
		return Identity{}, fmt.Errorf("%w: %s header: %w", ErrBadCredentials, ForwardedIdentityHeader, ErrNoPeerSecret)
	}
	bad := func(why string) (Identity, error) {
		return Identity{}, fmt.Errorf("%w: %s header: %s", ErrBadCredentials, ForwardedIdentityHeader, why)
	}
	if len(vals) != 1 {
		return bad("sent more than once")
	}
	tok, err := jwt.ParseSigned(vals[0], []jose.SignatureAlgorithm{jose.HS256})
	if err != nil || len(tok.Headers) != 1 || tok.Headers[0].ExtraHeaders[jose.HeaderType] != forwardedType {
		return bad("malformed")
	}
	var c forwardedClaims
	verified := false
	for _, k := range a.peerKeys {
		if tok.Claims(k, &c) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return bad("not signed with the peer secret")
	}
	err = c.ValidateWithLeeway(jwt.Expected{AnyAudience: jwt.Audience{r.URL.Path}, Time: a.now()}, ForwardedValidity)
	switch {
	case errors.Is(err, jwt.ErrInvalidAudience):
		return bad("signed for another procedure")
	case err != nil || c.IssuedAt == nil || c.Expiry == nil:
		return bad("expired (or the replicas' clocks are more than " + ForwardedValidity.String() + " apart)")
	case c.Subject == "":
		return bad("no subject")
	}
	return Identity{Subject: c.Subject, Roles: c.Roles}, nil
}
