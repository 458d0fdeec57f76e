package attrs_test

import (
	"testing"

	"github.com/wfd-dev/wfd/attrs"
)

// BenchmarkMatch: one checked query on one handler, as a store's scan
// evaluates it.
func BenchmarkMatch(b *testing.B) {
	q, err := attrs.Parse(`customer = "acme" and amount > 100 and status = running and tags contains "eu" and due < "2026-01-01T00:00:00Z"`)
	if err != nil {
		b.Fatal(err)
	}
	if err := q.Check(testSchema); err != nil {
		b.Fatal(err)
	}
	h := testHandlers[0]
	b.ReportAllocs()
	for b.Loop() {
		if !q.Match(h.b, h.s) {
			b.Fatal("no match")
		}
	}
}
