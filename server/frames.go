package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"connectrpc.com/connect"
)

// Framing of enveloped messages (gRPC, gRPC-Web, Connect streaming): a
// flags byte, a 4-byte big-endian length, the message.
const (
	framePrefixBytes = 5
	// frameCompressed is the only flag a client may set, and only on a
	// call that negotiated compression.
	frameCompressed = 0x01
)

// checkFrames makes a request whose message framing is malformed fail
// with InvalidArgument, as a message whose protobuf does not decode does:
// connect-go answers Internal (which says the server failed) to a frame
// flagged compressed on a call with no compression, to flags no client
// sends, to a length prefix longer than what follows and to a prefix cut
// short. The request body of an enveloped protocol is read through a
// frameReader, which follows the frames as connect reads them and fails
// the read that meets such a frame with a *connect.Error, which connect
// returns as it is. A Connect unary call has no frames.
func checkFrames(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && r.Method == http.MethodPost {
			if compressed, ok := enveloped(r.Header); ok {
				// A copy of the request, as limitBodyStall does: net/http
				// looks at the original's body after the handler.
				r2 := *r
				fr := &frameReader{ReadCloser: r.Body, compressed: compressed}
				if r.ProtoMajor < 2 {
					// The rest of the body will not be read, so the
					// connection closes after the answer (guardBodies):
					// the answer says so, or a client may send its next
					// call on a connection being closed.
					fr.malformedSeen = func() { w.Header().Set("Connection", "close") }
				}
				r2.Body = fr
				r = &r2
			}
		}
		next.ServeHTTP(w, r)
	})
}

// enveloped says whether a request with header h carries enveloped
// messages (gRPC, gRPC-Web, Connect streaming), and whether it negotiated
// compression for them.
func enveloped(h http.Header) (compressed, ok bool) {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return false, false
	}
	encoding := ""
	switch {
	case mt == "application/grpc-web-text" || strings.HasPrefix(mt, "application/grpc-web-text+"):
		return false, false // base64 on the wire; connect does not serve it
	case mt == "application/grpc" || strings.HasPrefix(mt, "application/grpc+"),
		mt == "application/grpc-web" || strings.HasPrefix(mt, "application/grpc-web+"):
		encoding = h.Get("Grpc-Encoding")
	case strings.HasPrefix(mt, "application/connect+"):
		encoding = h.Get("Connect-Content-Encoding")
	default:
		return false, false
	}
	return encoding != "" && encoding != "identity", true
}

// frameReader is a request body of enveloped messages that checks their
// framing as it is read: a frame's flags when its prefix is complete, and
// at the end of the body that no frame is cut short. The first malformed
// frame fails that read and every later one with the same error.
type frameReader struct {
	io.ReadCloser
	compressed bool // compression was negotiated: frames may be flagged compressed

	prefix [framePrefixBytes]byte
	have   int    // bytes of the current frame's prefix read
	left   uint32 // bytes of the current frame's message still to come
	err    error  // the malformed frame met (sticky)
	// malformedSeen, if set, is called when the first malformed frame is
	// met, before the read that meets it returns (on the handler's
	// goroutine, before its answer).
	malformedSeen func()
}

// fail records the first malformed frame.
func (f *frameReader) fail(err error) {
	f.err = err
	if f.malformedSeen != nil {
		f.malformedSeen()
	}
}

func (f *frameReader) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.ReadCloser.Read(p)
	if at, bad := f.scan(p[:n]); bad != nil {
		f.fail(bad)
		if at > 0 {
			// What came before the malformed frame's prefix stands; the
			// next read fails.
			return at, nil
		}
		return 0, bad
	}
	if errors.Is(err, io.EOF) {
		switch {
		case f.have > 0:
			f.fail(malformed("the body ends %d bytes into a %d-byte frame prefix", f.have, framePrefixBytes))
		case f.left > 0:
			size := binaryLen(f.prefix)
			f.fail(malformed("a frame promises %d bytes and the body ends after %d", size, size-f.left))
		default:
			return n, err
		}
		return n, f.err
	}
	return n, err
}

// scan follows the frames through b, the next bytes of the body. It
// returns the error of a malformed frame prefix, with the offset in b
// where that prefix starts (0 if it started in an earlier read).
func (f *frameReader) scan(b []byte) (int, error) {
	for i := 0; i < len(b); {
		if f.have == 0 && f.left > 0 {
			k := min(uint32(len(b)-i), f.left)
			f.left -= k
			i += int(k)
			continue
		}
		start := i - f.have
		k := copy(f.prefix[f.have:], b[i:])
		f.have += k
		i += k
		if f.have < framePrefixBytes {
			continue
		}
		f.have, f.left = 0, binaryLen(f.prefix)
		switch flags := f.prefix[0]; {
		case flags == frameCompressed && !f.compressed:
			return max(start, 0), malformed("a frame is flagged compressed (flags %#02x) but the call negotiated no compression", flags)
		case flags&^frameCompressed != 0:
			return max(start, 0), malformed("a frame has flags %#02x; a client may set only %#02x (compressed)", flags, frameCompressed)
		}
	}
	return 0, nil
}

// binaryLen is the message length a frame prefix gives.
func binaryLen(prefix [framePrefixBytes]byte) uint32 { return binary.BigEndian.Uint32(prefix[1:]) }

func malformed(format string, args ...any) *connect.Error {
	return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("malformed request: "+format, args...))
}
