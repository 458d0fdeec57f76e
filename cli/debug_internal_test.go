package cli

import (
	"slices"
	"testing"
)

func TestRedactArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"wfd", "serve", "--store", "postgres://wfd:s3cret@db:5432/wfd?sslmode=disable"},
			[]string{"wfd", "serve", "--store", "postgres://wfd:xxxxx@db:5432/wfd?sslmode=disable"}},
		{[]string{"wfd", "serve", "--store=postgresql://u:p@h/d"}, []string{"wfd", "serve", "--store=postgresql://u:xxxxx@h/d"}},
		{[]string{"wfd", "serve", "--store", "postgres://wfd@db/wfd", "--addr", "127.0.0.1:7233"},
			[]string{"wfd", "serve", "--store", "postgres://wfd@db/wfd", "--addr", "127.0.0.1:7233"}},
		{[]string{"wfd", "serve", "--data", "/var/lib/wfd"}, []string{"wfd", "serve", "--data", "/var/lib/wfd"}},
	} {
		if got := redactArgs(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("redactArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
