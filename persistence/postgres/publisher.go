package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// maxPublishBatch is the most Publishes one transaction takes.
const maxPublishBatch = 1000

// publisher shares a transaction among concurrent Publishes, as bbolt's
// group commit does: Publishes that arrive while one transaction runs
// queue up and the next takes all of them, one lock of the sequence row
// and one commit. There is no goroutine of its own and no timer: the
// first caller to find it idle leads one transaction, then hands the lead
// to the oldest waiting caller, so a lone Publish never waits.
type publisher struct {
	s *Store

	mu   sync.Mutex
	busy bool
	q    []*publishCall
}

type publishCall struct {
	p    persistence.Published
	out  persistence.Published
	err  error
	done chan bool // true: lead the next transaction; false: out and err are set
}

func (pb *publisher) publish(p persistence.Published) (persistence.Published, error) {
	call := &publishCall{p: p, done: make(chan bool, 1)}
	pb.mu.Lock()
	pb.q = append(pb.q, call)
	if pb.busy {
		pb.mu.Unlock()
		if lead := <-call.done; !lead {
			return call.out, call.err
		}
		pb.mu.Lock()
	}
	pb.busy = true
	n := min(len(pb.q), maxPublishBatch)
	batch := pb.q[:n:n]
	pb.q = pb.q[n:]
	pb.mu.Unlock()

	pb.commit(batch)

	pb.mu.Lock()
	if len(pb.q) > 0 {
		pb.q[0].done <- true
	} else {
		pb.busy = false
		pb.q = nil
	}
	pb.mu.Unlock()
	return call.out, call.err
}

// commit publishes calls in one transaction and sets each one's result.
func (pb *publisher) commit(calls []*publishCall) {
	ctx, cancel := pb.s.commitContext(context.Background())
	defer cancel()
	err := pb.s.publishBatch(ctx, calls)
	for _, c := range calls {
		if err != nil {
			c.out, c.err = persistence.Published{}, err
		}
		c.done <- false
	}
}

// publishBatch locks the log's sequence row, reads the entries already
// published under the calls' ids (after the lock is granted, so that it
// sees every Publish that committed before), numbers the new ones in
// order and inserts them with one statement. An id given twice in the
// batch is published once; the later call gets the first one's entry.
func (s *Store) publishBatch(ctx context.Context, calls []*publishCall) error {
	return s.inTx(ctx, func(conn *pgxpool.Conn) error { return s.publishOn(ctx, conn, calls) })
}

// publishOn runs publishBatch's transaction on conn.
func (s *Store) publishOn(ctx context.Context, conn *pgxpool.Conn, calls []*publishCall) error {
	log, err := lockLog(ctx, conn, calls)
	if err != nil {
		return err
	}
	rows, err := log.number(calls)
	if err != nil {
		return err
	}
	if len(rows.seqs) == 0 {
		rollback(conn) // nothing new: let go of the lock
		return nil
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO wfd_published (seq, id, key, handler_id, at, at_ns, entry)
		SELECT * FROM unnest($1::int8[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::int2[], $7::bytea[])`,
		rows.seqs, rows.ids, rows.keys, rows.handlers, rows.at, rows.atNs, rows.entries)
	b.Queue(`UPDATE wfd_published_seq SET last = $1`, log.last)
	b.Queue("COMMIT")
	if err := commitBatch(ctx, conn, b); err != nil {
		if isStatementError(err) {
			return err
		}
		return s.commitOutcome(log.txid, log.serverStart, err) // see Write
	}
	return nil
}

// logState is the log as a publish transaction finds it once it holds
// the lock of the sequence row.
type logState struct {
	txid int64 // the transaction's (see Write)
	// serverStart is when the database server started (see Write).
	serverStart time.Time
	last        int64 // the last seq used
	// stored are the entries published under the calls' ids, and corrupt
	// why some of them cannot be read.
	stored  map[string]persistence.Published
	corrupt map[string]error
}

// lockLog begins the transaction, locks the sequence row and reads the
// entries published under the ids of calls, in one round trip.
func lockLog(ctx context.Context, conn *pgxpool.Conn, calls []*publishCall) (*logState, error) {
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.p.ID
	}
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(sqlTxID)
	b.Queue(`SELECT last FROM wfd_published_seq FOR UPDATE`)
	b.Queue(`SELECT id, seq, entry FROM wfd_published WHERE id = ANY($1)`, ids)
	br := conn.SendBatch(ctx, b)
	log, err := readLog(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return log, err
}

// readLog reads the results of lockLog's batch.
func readLog(br pgx.BatchResults) (*logState, error) {
	log := &logState{stored: map[string]persistence.Published{}, corrupt: map[string]error{}}
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	if err := br.QueryRow().Scan(&log.txid, &log.serverStart); err != nil {
		return nil, err
	}
	if err := br.QueryRow().Scan(&log.last); err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	var (
		id    string
		seq   int64
		entry []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &seq, &entry}, func() error {
		if p, err := decodePublished(seq, entry); err != nil {
			log.corrupt[id] = err
		} else {
			log.stored[id] = p
		}
		return nil
	})
	return log, err
}

// number sets the result of each call whose id is published already (the
// entry as stored, or why it cannot be read), gives the others the next
// seqs in order and returns their rows. A later call with the id of an
// earlier one gets the earlier one's entry.
func (log *logState) number(calls []*publishCall) (publishedRows, error) {
	var rows publishedRows
	for _, c := range calls {
		if e := log.corrupt[c.p.ID]; e != nil {
			c.err = e
			continue
		}
		if p, ok := log.stored[c.p.ID]; ok {
			c.out = p
			c.out.Data = append([]byte(nil), p.Data...) // each caller its own copy
			continue
		}
		log.last++
		c.out = c.p
		c.out.Seq = uint64(log.last)
		enc, err := codec.EncodePublished(&c.out)
		if err != nil {
			return publishedRows{}, err
		}
		rows.add(&c.out, enc)
		log.stored[c.p.ID] = c.out
	}
	return rows, nil
}

type publishedRows struct {
	seqs                []int64
	ids, keys, handlers []string
	at                  []time.Time
	atNs                []int16
	entries             [][]byte
}

func (r *publishedRows) add(p *persistence.Published, entry []byte) {
	r.seqs = append(r.seqs, int64(p.Seq))
	r.ids, r.keys, r.handlers = append(r.ids, p.ID), append(r.keys, p.Key), append(r.handlers, p.HandlerID)
	r.at, r.atNs = append(r.at, p.At), append(r.atNs, nsOf(p.At))
	r.entries = append(r.entries, entry)
}
