package backend

import (
	"errors"
	"testing"

	"github.com/wfd-dev/wfd/persistence"
)

// TestCheckIfHash: every condition of a put and a delete against a stored
// definition (hash "h1"), none, and one that cannot be decoded.
func TestCheckIfHash(t *testing.T) {
	corrupt := errors.New("corrupt")
	stored := func() (string, error) { return "h1", nil }
	damaged := func() (string, error) { return "", corrupt }
	for _, c := range []struct {
		name         string
		ifHash       string
		del, exists  bool
		hash         func() (string, error)
		want         error // nil: the condition holds
		hashNotAsked bool
	}{
		{"put anything over one", "", false, true, damaged, nil, true},
		{"put anything over none", "", false, false, nil, nil, true},
		{"create over none", persistence.Absent, false, false, nil, nil, true},
		{"create over one", persistence.Absent, false, true, damaged, persistence.ErrExists, true},
		{"replace the same", "h1", false, true, stored, nil, false},
		{"replace another", "h2", false, true, stored, persistence.ErrConflict, false},
		{"replace none", "h1", false, false, nil, persistence.ErrNotFound, true},
		{"replace a damaged one", "h1", false, true, damaged, corrupt, false},
		{"delete anything", "", true, true, damaged, nil, true},
		{"delete none", "", true, false, nil, persistence.ErrNotFound, true},
		{"delete the same", "h1", true, true, stored, nil, false},
		{"delete another", "h2", true, true, stored, persistence.ErrConflict, false},
		{"delete a damaged one", "h1", true, true, damaged, corrupt, false},
	} {
		asked := false
		hash := func() (string, error) {
			asked = true
			return c.hash()
		}
		err := CheckIfHash("w", c.ifHash, c.del, c.exists, hash)
		switch {
		case c.want == nil && err != nil, c.want != nil && !errors.Is(err, c.want):
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		case asked && c.hashNotAsked:
			t.Errorf("%s: the stored hash was read, though the condition does not need it", c.name)
		}
	}
}
