package namespace_test

import (
	"errors"
	"testing"

	"github.com/wfd-dev/wfd/namespace"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"default", true},
		{"acme", true},
		{"team-7", true},
		{"a", true},
		{"", false},
		{"Acme", false},
		{"7team", false},
		{"team-", false},
		{"a_b", false},
		{"a/b", false},
		{"a.b", false},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false}, // 49
	} {
		err := namespace.Check(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("Check(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, namespace.ErrInvalid) {
			t.Errorf("Check(%q) = %v, want ErrInvalid", tc.name, err)
		}
	}
	if namespace.Of("") != namespace.Default || namespace.Of("acme") != "acme" {
		t.Error("Of")
	}
}

func FuzzCheck(f *testing.F) {
	f.Add("acme")
	f.Add("a-")
	f.Fuzz(func(t *testing.T, s string) {
		if namespace.Check(s) != nil {
			return
		}
		for _, c := range s {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				t.Fatalf("Check accepted %q", s)
			}
		}
	})
}
