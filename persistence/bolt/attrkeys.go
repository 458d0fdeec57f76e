package bolt

import (
	"bytes"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/attrs"
	"github.com/wfd-dev/wfd/persistence"
)

// idx_attr keys are workflow|0|name|0|value|order: value is
// attrs.AppendKey of the attribute's value (order-preserving and
// prefix-free, type first), so one value's handlers are a prefix in
// creation order, and one type's values of an attribute a range in value
// order. A keyword_list has one entry per distinct item, whose value part
// is the KeywordList type byte and the item's string key: contains is a
// prefix, and never meets a string attribute's keys.

// attrPrefix is workflow|0|name|0.
func attrPrefix(workflow, name string) []byte {
	b := make([]byte, 0, len(workflow)+len(name)+2)
	b = append(append(b, workflow...), 0)
	return append(append(b, name...), 0)
}

// attrItemKey is the value part of a keyword_list item's entry.
func attrItemKey(dst []byte, item string) []byte {
	k := attrs.AppendKey(nil, attrs.StringValue(item))
	dst = append(dst, byte(attrs.KeywordList))
	return append(dst, k[1:]...)
}

// attrEntries returns h's idx_attr entries.
func attrEntries(h *persistence.Handler, order []byte) []entry {
	if len(h.Attributes) == 0 {
		return nil
	}
	var es []entry
	for name, v := range h.Attributes {
		prefix := attrPrefix(h.Workflow, name)
		if v.Type() != attrs.KeywordList {
			k := attrs.AppendKey(prefix, v)
			es = append(es, entry{bucketAttr, append(k, order...), []byte{}})
			continue
		}
		seen := map[string]bool{}
		for _, item := range v.AsList() {
			if seen[item] {
				continue
			}
			seen[item] = true
			k := attrItemKey(bytes.Clone(prefix), item)
			es = append(es, entry{bucketAttr, append(k, order...), []byte{}})
		}
	}
	return es
}

// attrKeyOrder returns the order key at the end of an idx_attr key.
func attrKeyOrder(k []byte) (order []byte, ok bool) {
	for range 2 { // workflow, name
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			return nil, false
		}
		k = k[i+1:]
	}
	n, ok := valueKeyLen(k)
	if !ok {
		return nil, false
	}
	order = k[n:]
	if _, ok := orderKeyID(order); !ok {
		return nil, false
	}
	return order, true
}

// valueKeyLen returns the length of the value key (attrs.AppendKey's, or
// a keyword item's) at the start of k.
func valueKeyLen(k []byte) (int, bool) {
	if len(k) == 0 {
		return 0, false
	}
	switch attrs.Type(k[0]) {
	case attrs.Int, attrs.Time, attrs.Double:
		return 9, len(k) >= 9
	case attrs.Bool:
		return 2, len(k) >= 2
	case attrs.String, attrs.KeywordList:
		// An escaped string ends at 0x00 0x01 (0x00 0xff is an escaped NUL).
		for i := 1; i+1 < len(k); i++ {
			if k[i] != 0 {
				continue
			}
			if k[i+1] == 1 {
				return i + 2, true
			}
			i++
		}
	}
	return 0, false
}

// scanAttrEntries finds handler id's idx_attr entries by a scan of the
// whole index (scanEntries: its metadata cannot be decoded).
func scanAttrEntries(tx *bolt.Tx, id string) []entry {
	var es []entry
	c := bucket(tx, bucketAttr).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if order, ok := attrKeyOrder(k); ok {
			if got, _ := orderKeyID(order); got == id {
				es = append(es, entry{bucketAttr, bytes.Clone(k), []byte{}})
			}
		}
	}
	return es
}
