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

const sqlNotify = `SELECT pg_notify($2, p) FROM unnest($1::text[]) AS p`

// channelOf is the commit feed's channel of a store in schema ("": the
// default one): the stores of one database in different schemas hear
// only their own commits.
func channelOf(schema string) string {
	if schema == "" {
		return commitsChannel
	}
	return commitsChannel + "_" + schema
}

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
func queueNotices(b *pgx.Batch, channel string, changes []persistence.Change, w *writeSet) {
	payloads := notices(changes, w)
	if len(payloads) == 0 {
		return
	}
	q := &pgx.QueuedQuery{SQL: sqlNotify, Arguments: []any{payloads, channel}}
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
		parent := ""
		if ended(h) {
			parent = h.final.Parent
		}
		if !nb.fits(id, parent) {
			out = append(out, nb.String())
			nb = newNoticeBuf(r)
			open[r] = nb
		}
		nb.add(id, parent)
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

// noticeBuf builds one payload; its encoded size is bounded as it grows.
type noticeBuf struct {
	n    commitNotice
	size int
}

func newNoticeBuf(replica string) *noticeBuf {
	return &noticeBuf{n: commitNotice{R: replica}, size: len(`{"r":,"h":[],"e":[]}`) + quotedLen(replica)}
}

// cost is what an entry adds to the payload: a quoted id and a comma,
// or [child,parent] and a comma.
func cost(id, parent string) int {
	if parent == "" {
		return quotedLen(id) + 1
	}
	return quotedLen(id) + quotedLen(parent) + 4
}

// fits reports whether an entry fits; an empty payload takes any (ids are
// far shorter than maxNotice).
func (nb *noticeBuf) fits(id, parent string) bool {
	return len(nb.n.H)+len(nb.n.E) == 0 || nb.size+cost(id, parent) <= maxNotice
}

// add adds handler id, or child id's end with its parent.
func (nb *noticeBuf) add(id, parent string) {
	nb.size += cost(id, parent)
	if parent == "" {
		nb.n.H = append(nb.n.H, id)
	} else {
		nb.n.E = append(nb.n.E, [2]string{id, parent})
	}
}

func (nb *noticeBuf) String() string {
	b, _ := json.Marshal(nb.n) // strings and slices of them always marshal
	return string(b)
}

// quotedLen is the length of s as a JSON string.
func quotedLen(s string) int {
	q, _ := json.Marshal(s) // a string always marshals
	return len(q)
}
