package postgres

import "time"

// Times are stored as timestamptz, which keeps microseconds, plus the
// nanoseconds below the microsecond in a smallint column beside it. The
// pair orders exactly as the time does and round-trips nanoseconds.
// pgx encodes a time.Time as floor(microseconds), so the remainder is
// t.Nanosecond() % 1000 whatever the sign of the Unix time.

// nsOf returns the nanoseconds of t below its microsecond.
func nsOf(t time.Time) int16 { return int16(t.Nanosecond() % 1000) }

// fromParts rebuilds a time from its column pair, in UTC.
func fromParts(t time.Time, ns int16) time.Time { return t.UTC().Add(time.Duration(ns)) }

// optTime returns t and its nanoseconds as column values, NULL for the
// zero time.
func optTime(t time.Time) (*time.Time, *int16) {
	if t.IsZero() {
		return nil, nil
	}
	ns := nsOf(t)
	return &t, &ns
}

// Record sequence numbers are uint64 and bigint is signed: a sequence
// number is stored with its top bit flipped, which maps the uint64 order
// onto the int64 order (0 → MinInt64, MaxUint64 → MaxInt64).
func seqToDB(seq uint64) int64 { return int64(seq ^ 1<<63) }
func seqFromDB(v int64) uint64 { return uint64(v) ^ 1<<63 }
