package postgres

// The sending half of the commit feed (feed.go): a Write of a shared store
// tells every listener which handlers' records it committed, with
// pg_notify in the same transaction, so a notification is delivered only
// if and once the Write commits, in commit order.

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/persistence"
)

// commitsChannel is the LISTEN/NOTIFY channel of the commit feed.
const commitsChannel = "wfd_commits"

// maxNotice bounds a notification's payload: PostgreSQL refuses 8000
// bytes or more (with the default block size).
const maxNotice = 7900

const sqlNotify = `SELECT pg_notify('` + commitsChannel + `', p) FROM unnest($1::text[]) AS p`

// commitNotice is one notification's payload (JSON): the handlers whose
// records a Write committed, fenced by replica R ("" unfenced). A child
// whose terminal commit the Write holds is in E with its parent, not in
// H, so that its parent's owner learns of its end without reading it.
type commitNotice struct {
	R string      `json:"r,omitempty"`
	H []string    `json:"h,omitempty"`
	E [][2]string `json:"e,omitempty"` // [child, parent]
}

// shared reports whether the store shares its database with other
// processes (Options.Shared): only then does a Write notify.
func (s *Store) shared() bool { return s.lock == nil }

// queueNotices adds to b, before its final COMMIT, the notifications of
// the handlers whose records w commits: one statement, as few payloads as
// maxNotice allows.
func queueNotices(b *pgx.Batch, changes []persistence.Change, w *writeSet) {
	payloads := notices(changes, w)
	if len(payloads) == 0 {
		return
	}
	q := &pgx.QueuedQuery{SQL: sqlNotify, Arguments: []any{payloads}}
	b.QueuedQueries = slices.Insert(b.QueuedQueries, len(b.QueuedQueries)-1, q)
}

// notices are the payloads of w's notifications.
func notices(changes []persistence.Change, w *writeSet) []string {
	var replica map[string]string // handler id -> fencing replica
	for i := range changes {
		if f := changes[i].Fence; !f.IsZero() {
			if replica == nil {
				replica = map[string]string{}
			}
			replica[changes[i].Handler.ID] = f.Replica
		}
	}
	var (
		out  []string
		open = map[string]*noticeBuf{} // by replica
	)
	for _, id := range w.ids {
		h := w.handlers[id]
		if len(h.records) == 0 || h.final == nil {
			continue
		}
		r := replica[id]
		nb := open[r]
		if nb == nil {
			nb = newNoticeBuf(r)
			open[r] = nb
		}
		qid := quote(id)
		var qparent []byte
		if ended(h) {
			qparent = quote(h.final.Parent)
		}
		if !nb.fits(qid, qparent) {
			out = append(out, nb.String())
			nb = newNoticeBuf(r)
			open[r] = nb
		}
		nb.add(qid, qparent)
	}
	for _, r := range slices.Sorted(maps.Keys(open)) {
		out = append(out, open[r].String())
	}
	return out
}

// ended reports whether h is a child whose end this Write commits.
func ended(h *handlerState) bool {
	if h.final.Parent == "" || h.final.Status == persistence.StatusRunning {
		return false
	}
	return !h.stored || h.oldErr != nil || h.old.Status == persistence.StatusRunning
}

// noticeBuf builds one payload; its size is known as it grows.
type noticeBuf struct {
	r    []byte
	h, e [][]byte
	size int
}

func newNoticeBuf(replica string) *noticeBuf {
	nb := &noticeBuf{size: len(`{"r":,"h":[],"e":[]}`)}
	if replica != "" {
		nb.r = quote(replica)
		nb.size += len(nb.r)
	}
	return nb
}

func (nb *noticeBuf) cost(qid, qparent []byte) int {
	if qparent == nil {
		return len(qid) + 1
	}
	return len(qid) + len(qparent) + 4 // [a,b],
}

// fits reports whether an entry fits; an empty payload takes any (ids are
// far shorter than maxNotice).
func (nb *noticeBuf) fits(qid, qparent []byte) bool {
	return len(nb.h)+len(nb.e) == 0 || nb.size+nb.cost(qid, qparent) <= maxNotice
}

func (nb *noticeBuf) add(qid, qparent []byte) {
	nb.size += nb.cost(qid, qparent)
	if qparent == nil {
		nb.h = append(nb.h, qid)
	} else {
		nb.e = append(nb.e, qid, qparent)
	}
}

func (nb *noticeBuf) String() string {
	b := make([]byte, 0, nb.size)
	b = append(b, '{')
	if nb.r != nil {
		b = append(append(b, `"r":`...), nb.r...)
	}
	if len(nb.h) > 0 {
		if nb.r != nil {
			b = append(b, ',')
		}
		b = append(b, `"h":[`...)
		for i, q := range nb.h {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, q...)
		}
		b = append(b, ']')
	}
	if len(nb.e) > 0 {
		if nb.r != nil || len(nb.h) > 0 {
			b = append(b, ',')
		}
		b = append(b, `"e":[`...)
		for i := 0; i < len(nb.e); i += 2 {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(append(append(append(append(b, '['), nb.e[i]...), ','), nb.e[i+1]...), ']')
		}
		b = append(b, ']')
	}
	return string(append(b, '}'))
}

// quote is s as a JSON string.
func quote(s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return q
}
