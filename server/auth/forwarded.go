package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// ForwardedIdentityHeader carries the identity of a call that a replica
// forwards to the handler's owner for a caller it authenticated by its
// client certificate (which the owner cannot see: it sees the forwarding
// replica's). Its value is signed with the replicas' shared peer secret
// (Config.PeerSecretFile) over the identity, the procedure and the time,
// so only a replica can make one: a request that carries the header is
// authenticated by it alone, and refused (ErrBadCredentials) if it does
// not verify, so that a client setting it never gains an identity.
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

// forwarded is the signed part of the header.
type forwarded struct {
	Subject   string   `json:"sub"`
	Roles     []string `json:"roles,omitempty"`
	Procedure string   `json:"proc"`
	IssuedAt  int64    `json:"iat"` // Unix milliseconds
}

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

func mac(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("wfd forwarded identity v1\n"))
	m.Write(payload)
	return m.Sum(nil)
}

// SignForwarded returns the ForwardedIdentityHeader value that vouches
// for id calling procedure ("/wfd.v1.WorkflowService/CompleteTask") now.
// It fails with ErrNoPeerSecret without a peer secret.
func (a *Authenticator) SignForwarded(id Identity, procedure string) (string, error) {
	if a == nil || len(a.peerKeys) == 0 {
		return "", ErrNoPeerSecret
	}
	payload, err := json.Marshal(forwarded{Subject: id.Subject, Roles: id.Roles, Procedure: procedure, IssuedAt: a.now().UnixMilli()})
	if err != nil {
		return "", fmt.Errorf("auth: %w", err)
	}
	enc := base64.RawURLEncoding
	return "v1." + enc.EncodeToString(payload) + "." + enc.EncodeToString(mac(a.peerKeys[0], payload)), nil
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
	parts := strings.Split(vals[0], ".")
	if len(parts) != 3 || parts[0] != "v1" {
		return bad("malformed")
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(parts[1])
	sig, err2 := enc.DecodeString(parts[2])
	if err1 != nil || err2 != nil {
		return bad("malformed")
	}
	ok := false
	for _, k := range a.peerKeys {
		ok = hmac.Equal(sig, mac(k, payload)) || ok
	}
	if !ok {
		return bad("not signed with the peer secret")
	}
	var f forwarded
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return bad("malformed")
	}
	if f.Procedure != r.URL.Path {
		return bad("signed for another procedure")
	}
	if d := a.now().Sub(time.UnixMilli(f.IssuedAt)); d > ForwardedValidity || d < -ForwardedValidity {
		return bad("expired (or the replicas' clocks are more than " + ForwardedValidity.String() + " apart)")
	}
	if f.Subject == "" {
		return bad("no subject")
	}
	return Identity{Subject: f.Subject, Roles: f.Roles}, nil
}
