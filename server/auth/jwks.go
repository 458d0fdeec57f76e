package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// keySet caches a JWKS read from a file or fetched from a URL. It is
// refreshed when older than refresh, and when a token names a key it does
// not hold (at most once per minRefresh, so unknown key ids cannot make
// it hammer the issuer). A failed refresh keeps the keys it had.
type keySet struct {
	source     string
	client     *http.Client
	now        func() time.Time
	refresh    time.Duration
	minRefresh time.Duration

	mu      sync.Mutex
	keys    jose.JSONWebKeySet
	fetched time.Time // last attempt
}

func newKeySet(ctx context.Context, source string, client *http.Client, now func() time.Time, refresh time.Duration) (*keySet, error) {
	ks := &keySet{source: source, client: client, now: now, refresh: refresh, minRefresh: 30 * time.Second}
	keys, err := ks.load(ctx)
	if err != nil {
		return nil, err
	}
	ks.keys, ks.fetched = keys, now()
	return ks, nil
}

func (ks *keySet) isURL() bool {
	return strings.HasPrefix(ks.source, "https://") || strings.HasPrefix(ks.source, "http://")
}

func (ks *keySet) load(ctx context.Context) (jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	var b []byte
	if ks.isURL() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.source, nil)
		if err != nil {
			return set, fmt.Errorf("auth: jwks: %w", err)
		}
		resp, err := ks.client.Do(req)
		if err != nil {
			return set, fmt.Errorf("auth: jwks: %w", err)
		}
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode != http.StatusOK {
			return set, fmt.Errorf("auth: jwks: GET %s: %s", ks.source, resp.Status)
		}
		if b, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20)); err != nil {
			return set, fmt.Errorf("auth: jwks: %w", err)
		}
	} else {
		var err error
		if b, err = os.ReadFile(ks.source); err != nil {
			return set, fmt.Errorf("auth: jwks: %w", err)
		}
	}
	if err := json.Unmarshal(b, &set); err != nil {
		return set, fmt.Errorf("auth: jwks %s: %w", ks.source, err)
	}
	for i := range set.Keys {
		if !set.Keys[i].IsPublic() {
			return set, fmt.Errorf("auth: jwks %s: key %q is not a public key", ks.source, set.Keys[i].KeyID)
		}
	}
	return set, nil
}

// key returns the verification keys for kid ("": every key). A kid it
// does not hold makes it fetch the set at once (rate-limited); a set
// that is merely old is fetched again in the background, so calls do not
// wait for the issuer.
func (ks *keySet) key(ctx context.Context, kid string) []jose.JSONWebKey {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	found := ks.find(kid)
	since := ks.now().Sub(ks.fetched)
	switch {
	case len(found) == 0 && since >= ks.minRefresh:
		ks.fetched = ks.now()
		if keys, err := ks.load(ctx); err == nil {
			ks.keys = keys
			found = ks.find(kid)
		}
	case since >= ks.refresh:
		ks.fetched = ks.now()
		go ks.reload()
	}
	return found
}

func (ks *keySet) reload() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	keys, err := ks.load(ctx)
	if err != nil {
		return
	}
	ks.mu.Lock()
	ks.keys = keys
	ks.mu.Unlock()
}

func (ks *keySet) find(kid string) []jose.JSONWebKey {
	if kid == "" {
		return ks.keys.Keys
	}
	return ks.keys.Key(kid)
}
