package postgres

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/pagetoken"
)

// A page token (persistence/internal/pagetoken) has the payload
// kind | position: kind tells the listings apart, position is where the
// previous page ended (the last entry's time and id, or time and seq),
// exclusive. Its check hashes the payload and the listing's filters.
const (
	tokenHandlers  byte = 'h'
	tokenTasks     byte = 't'
	tokenPublished byte = 'p'
)

// position is where a listing page ended: a time and an id (handlers,
// tasks) or a time and a sequence number (the published log).
type position struct {
	at  time.Time
	id  string
	seq int64
}

func (p position) encode(kind byte) []byte {
	b := appendUnixTime([]byte{kind}, p.at)
	if kind == tokenPublished {
		return binary.BigEndian.AppendUint64(b, uint64(p.seq))
	}
	return append(b, p.id...)
}

// appendUnixTime appends t's Unix seconds and nanoseconds (12 bytes).
func appendUnixTime(b []byte, t time.Time) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(t.Unix()))
	return binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
}

func packToken(kind byte, p position, filters []byte) string {
	b := p.encode(kind)
	return pagetoken.Seal(b, pagetoken.Check(b, filters))
}

// unpackToken returns the position of a token of kind issued for filters.
func unpackToken(token string, kind byte, filters []byte) (position, error) {
	payload, err := pagetoken.Open(token, kind, 1+12, func(payload []byte) uint64 { return pagetoken.Check(payload, filters) })
	if err != nil {
		return position{}, err
	}
	rest := payload[13:]
	p := position{at: time.Unix(int64(binary.BigEndian.Uint64(payload[1:])), int64(binary.BigEndian.Uint32(payload[9:]))).UTC()}
	if kind == tokenPublished {
		if len(rest) != 8 {
			return position{}, fmt.Errorf("%w: malformed page token", persistence.ErrInvalid)
		}
		p.seq = int64(binary.BigEndian.Uint64(rest))
	} else {
		p.id = string(rest)
	}
	return p, nil
}
