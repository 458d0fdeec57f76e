package attrs_test

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/attrs"
)

// keyValues are orderedValues plus values only a store's bytes hold: NUL
// in strings, and numbers beyond the limits. Keys must order them too.
func keyValues() []attrs.Value {
	vs := orderedValues()
	vs = append(vs,
		attrs.StringValue("\x00"), attrs.StringValue("\x00\x00"), attrs.StringValue("\x00\x01"), attrs.StringValue("a\x00"),
		attrs.StringValue("a\x00b"), attrs.StringValue("\xff"), attrs.KeywordListValue("a\x00"), attrs.KeywordListValue("\x00", "a"),
		attrs.IntValue(math.MinInt64), attrs.IntValue(math.MaxInt64), attrs.DoubleValue(math.Inf(-1)), attrs.DoubleValue(math.Inf(1)),
		attrs.TimeValue(time.Date(-5000, 1, 1, 0, 0, 0, 0, time.UTC)))
	return vs
}

// TestAppendKey: the keys' byte order is Value.Compare, and scalar keys
// keep it with anything appended (they are prefix-free).
func TestAppendKey(t *testing.T) {
	vs := keyValues()
	for _, v := range vs {
		kv := attrs.AppendKey([]byte("prefix"), v)[len("prefix"):]
		for _, w := range vs {
			kw := attrs.AppendKey(nil, w)
			if got, want := bytes.Compare(kv, kw), v.Compare(w); got != want {
				t.Errorf("keys of %v and %v compare %d, values %d (%x, %x)", v, w, got, want, kv, kw)
			}
			if v.Type() == attrs.KeywordList || v.Compare(w) >= 0 {
				continue
			}
			hi := append(bytes.Clone(kv), 0xff, 0xff)
			lo := append(bytes.Clone(kw), 0x00)
			if bytes.Compare(hi, lo) >= 0 {
				t.Errorf("%v < %v, but key+ff ff >= key+00 (%x, %x)", v, w, hi, lo)
			}
		}
	}
}
