// Package auth authenticates wfd's callers (static bearer tokens, JWTs
// verified against a JWKS, mTLS client certificates) and decides which
// API methods their roles allow (Allowed).
package auth

import (
	"context"
	"slices"
	"strings"
)

// Identity is an authenticated caller: who it is and the roles it holds.
type Identity struct {
	Subject string
	Roles   []string
}

// HasRole reports whether the identity holds role.
func (id Identity) HasRole(role string) bool { return slices.Contains(id.Roles, role) }

type identityKey struct{}

// NewContext returns ctx carrying id.
func NewContext(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext returns the caller's identity; false when the call was not
// authenticated (authentication is off, or the call is one of the open
// ones: health checks, probes, metrics).
func FromContext(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// GroupPrefix marks a subject that stands for a group: "group:finance" is
// every caller holding the role "finance" (a JWT's groups claim counts).
// Tasks are assigned to groups so, and workflows granted to workers.
const GroupPrefix = "group:"

// Roles are granted in every namespace ("reader") or in one
// ("acme/reader": reader in namespace acme), in the tokens file, a JWT's
// roles claims and a certificate's entry alike.

// In returns the identity as it stands in namespace ns: its roles there,
// those granted everywhere and those granted in ns (without the prefix).
func (id Identity) In(ns string) Identity {
	out := Identity{Subject: id.Subject}
	for _, r := range id.Roles {
		name, role, scoped := strings.Cut(r, "/")
		switch {
		case !scoped:
			out.Roles = append(out.Roles, r)
		case name == ns && role != "" && !slices.Contains(out.Roles, role):
			out.Roles = append(out.Roles, role)
		}
	}
	return out
}
