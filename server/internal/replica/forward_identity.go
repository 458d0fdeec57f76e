package replica

// Whose call a forwarded call is. The owner must apply its
// policy to the caller, and record the caller as completed_by and
// published_by, never the forwarding replica.
//
//   - A bearer token or JWT travels as is (the Authorization header), and
//     the owner authenticates it again: replicas share the auth settings.
//   - A client certificate cannot travel: the owner's TLS handshake sees
//     the forwarding replica's certificate. The forwarding replica sends
//     the identity it authenticated instead, in auth.ForwardedIdentityHeader,
//     as a JWT signed (HS256) with the secret the replicas share
//     (--peer-secret-file) over the subject, roles, procedure and time.
//     The owner authenticates a call that carries the header by the
//     header alone, and refuses it if it does not verify; so a client
//     that sets it gets Unauthenticated, never an identity.
//
// A shared secret rather than a rule on the forwarding replica's
// certificate ("a certificate for a registered replica's address may
// vouch for others"): such a rule would make every certificate the client
// CA issues for such a name a master key, and what names a CA issues to
// clients is rarely under wfd's operator's control; a secret depends on no
// CA policy, works the same over plaintext and TLS, and needs no database
// look-up per call. Without a peer secret, a call whose caller came with
// a certificate is not forwarded: it is refused naming the owner, as
// before forwarding existed, and the client retries there.

import (
	"context"
	"fmt"
	"net/http"

	"github.com/wfd-dev/wfd/namespace"
	"github.com/wfd-dev/wfd/server/auth"
)

// credentials sets on out, the headers of a call forwarded to another
// replica, what authenticates the caller of the call being handled (in
// its headers, in ctx its identity) there; procedure is the forwarded
// call's. An error means the call cannot be forwarded in the caller's
// name.
func (f *forwarder) credentials(ctx context.Context, in, out http.Header, procedure string) error {
	out.Set(forwardedHeader, f.id)
	// The owner serves the call in the same namespace.
	if ns := in.Get(namespace.Header); ns != "" {
		out.Set(namespace.Header, ns)
	}
	if a := in.Get("Authorization"); a != "" {
		out.Set("Authorization", a)
		return nil
	}
	id, ok := auth.FromContext(ctx)
	if f.auth == nil || !ok {
		return nil // authentication is off: there is no identity to carry
	}
	v, err := f.auth.SignForwarded(id, procedure)
	if err != nil {
		return fmt.Errorf("forwarding the call of %s (a client certificate): %w", id.Subject, err)
	}
	out.Set(auth.ForwardedIdentityHeader, v)
	return nil
}

// warnUnsigned logs, at most once a minute, that a call was not
// forwarded because its caller's identity cannot travel.
func (f *forwarder) warnUnsigned(msg string, args ...any) {
	if ok, n := f.unsigned.Allow(); ok {
		f.log.Warn(msg, append(args, "suppressed", n)...)
	}
}
