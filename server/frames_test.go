package server_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
)

// frame is a gRPC (and gRPC-Web, Connect streaming) envelope: a flags
// byte, a 4-byte big-endian length, then the message. size < 0 means the
// length of msg.
func frame(flags byte, size int, msg []byte) []byte {
	if size < 0 {
		size = len(msg)
	}
	out := []byte{flags, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(size))
	return append(out, msg...)
}

// malformedCall posts body to procedure with contentType (and the headers a
// client of that protocol sends) and returns the call's status as a
// connect.Code: from the grpc-status header or trailer (gRPC), from the
// headers or the trailers frame of the body (gRPC-Web), from the error's
// JSON (Connect unary) or the end-of-stream message (Connect streaming).
//
// closes says whether the answer came over HTTP/1.x with
// "Connection: close".
func malformedCall(t *testing.T, hc *http.Client, url, procedure, protocol string, body io.Reader) (code connect.Code, msg string, closes bool) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, url+procedure, body)
	if err != nil {
		t.Fatal(err)
	}
	switch protocol {
	case "grpc":
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Te", "trailers")
	case "grpcweb":
		req.Header.Set("Content-Type", "application/grpc-web+proto")
	case "connect-unary":
		req.Header.Set("Content-Type", "application/proto")
		req.Header.Set("Connect-Protocol-Version", "1")
	case "connect-stream":
		req.Header.Set("Content-Type", "application/connect+proto")
		req.Header.Set("Connect-Protocol-Version", "1")
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", protocol, procedure, err)
	}
	defer func() { _ = res.Body.Close() }()
	closes = res.ProtoMajor < 2 && res.Close
	code, msg = answerCode(t, res, protocol, procedure)
	return code, msg, closes
}

// answerCode reads the code and message of a malformedCall's answer.
func answerCode(t *testing.T, res *http.Response, protocol, procedure string) (connect.Code, string) {
	t.Helper()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", protocol, procedure, err)
	}
	switch protocol {
	case "grpc":
		s, msg := res.Header.Get("Grpc-Status"), res.Header.Get("Grpc-Message")
		if s == "" {
			s, msg = res.Trailer.Get("Grpc-Status"), res.Trailer.Get("Grpc-Message")
		}
		return grpcCode(t, s), msg
	case "grpcweb":
		if s := res.Header.Get("Grpc-Status"); s != "" {
			return grpcCode(t, s), res.Header.Get("Grpc-Message")
		}
		// The trailers are the body's last frame (flag 0x80), in HTTP/1 header form.
		for len(data) >= 5 {
			n := int(binary.BigEndian.Uint32(data[1:5]))
			if len(data) < 5+n {
				t.Fatalf("grpcweb: truncated frame in the answer %q", data)
			}
			if data[0]&0x80 != 0 {
				var s, msg string
				for _, line := range strings.Split(string(data[5:5+n]), "\r\n") {
					k, v, _ := strings.Cut(line, ":")
					switch strings.ToLower(strings.TrimSpace(k)) {
					case "grpc-status":
						s = strings.TrimSpace(v)
					case "grpc-message":
						msg = strings.TrimSpace(v)
					}
				}
				return grpcCode(t, s), msg
			}
			data = data[5+n:]
		}
		t.Fatalf("grpcweb: no status in the answer (HTTP %d)", res.StatusCode)
	case "connect-unary":
		if res.StatusCode == http.StatusOK {
			return 0, ""
		}
		return connectCode(t, data)
	case "connect-stream":
		for len(data) >= 5 {
			n := int(binary.BigEndian.Uint32(data[1:5]))
			if len(data) < 5+n {
				t.Fatalf("connect: truncated frame in the answer %q", data)
			}
			if data[0]&0x02 != 0 {
				var end struct {
					Error json.RawMessage `json:"error"`
				}
				if err := json.Unmarshal(data[5:5+n], &end); err != nil {
					t.Fatalf("connect: end of stream %q: %v", data[5:5+n], err)
				}
				if len(end.Error) == 0 {
					return 0, ""
				}
				return connectCode(t, end.Error)
			}
			data = data[5+n:]
		}
		t.Fatalf("connect: no end of stream in the answer (HTTP %d)", res.StatusCode)
	}
	t.Fatalf("unknown protocol %q", protocol)
	return 0, ""
}

func grpcCode(t *testing.T, s string) connect.Code {
	t.Helper()
	var n uint32
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("grpc-status %q: %v", s, err)
	}
	return connect.Code(n)
}

func connectCode(t *testing.T, data []byte) (connect.Code, string) {
	t.Helper()
	var e struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatalf("connect error %q: %v", data, err)
	}
	var code connect.Code
	if err := code.UnmarshalText([]byte(e.Code)); err != nil {
		t.Fatalf("connect error %q: %v", data, err)
	}
	return code, e.Message
}

// TestMalformedFramesInvalidArgument: a request whose framing or message
// is malformed is the client's fault, so it is InvalidArgument (never
// Internal, which says the server failed), over gRPC (HTTP/2), gRPC-Web
// and Connect, for unary and streaming procedures: a message whose
// protobuf does not decode, a frame flagged compressed when no
// compression was negotiated, a length prefix longer than the body, a
// prefix cut short, flags no client sends; over gRPC also with the body
// sent a byte at a time (the server reads the frames in pieces). The
// server goes on serving, on the same connections.
func TestMalformedFramesInvalidArgument(t *testing.T) {
	ts := startServer(t, serverConfig{})
	url := "http://" + ts.addr
	h1 := &http.Client{} // HTTP/1.1: gRPC-Web and Connect as a browser sends them

	good, err := proto.Marshal(&wfdv1.GetHandlerRequest{HandlerId: "no-such-handler"})
	if err != nil {
		t.Fatal(err)
	}
	goodStream, err := proto.Marshal(&wfdv1.StreamEventsRequest{HandlerId: "no-such-handler"})
	if err != nil {
		t.Fatal(err)
	}
	finish, err := proto.Marshal(&wfdv1.FinishRunRequest{RunId: "no-such-run"})
	if err != nil {
		t.Fatal(err)
	}
	finishes, err := proto.Marshal(&wfdv1.FinishRunsRequest{Runs: []*wfdv1.FinishRunRequest{{RunId: "no-such-run"}}})
	if err != nil {
		t.Fatal(err)
	}
	// Field 1 (a string) says 5 bytes follow; 1 does.
	badProto := []byte{0x0a, 0x05, 'a'}
	bodies := []struct {
		name string
		body func(msg []byte) []byte
		// unary Connect has no frames: only the message is sent.
		framed bool
	}{
		{"protobuf that does not decode", func([]byte) []byte { return frame(0, -1, badProto) }, false},
		{"compressed flag without compression", func(msg []byte) []byte { return frame(1, -1, msg) }, true},
		{"length prefix longer than the body", func(msg []byte) []byte { return frame(0, len(msg)+100, msg) }, true},
		{"prefix cut short", func([]byte) []byte { return []byte{0, 0, 0} }, true},
		{"unknown flags", func(msg []byte) []byte { return frame(0x40, -1, msg) }, true},
	}
	procs := []struct {
		procedure string
		msg       []byte
		streaming bool
	}{
		{wfdv1connect.WorkflowServiceGetHandlerProcedure, good, false},
		{wfdv1connect.WorkflowServiceStreamEventsProcedure, goodStream, true},
		{wfdv1connect.WorkerServiceFinishRunProcedure, finish, false}, // served with the run message limit
		{wfdv1connect.WorkerServiceFinishRunsProcedure, finishes, false},
	}
	for _, p := range procs {
		for _, protocol := range []string{"grpc", "grpcweb", "connect"} {
			for _, b := range bodies {
				name := fmt.Sprintf("%s/%s/%s", p.procedure, protocol, b.name)
				hc, wire := ts.http, protocol
				switch {
				case protocol == "grpcweb":
					hc = h1
				case protocol == "connect" && p.streaming:
					wire = "connect-stream"
				case protocol == "connect":
					if b.framed {
						continue // Connect unary has no frames
					}
					hc, wire = h1, "connect-unary"
				}
				body := b.body(p.msg)
				if wire == "connect-unary" {
					body = badProto
				}
				code, msg, closes := malformedCall(t, hc, url, p.procedure, wire, bytes.NewReader(body))
				if code != connect.CodeInvalidArgument {
					t.Errorf("%s: %v (%q), want %v", name, code, msg, connect.CodeInvalidArgument)
				}
				// Over HTTP/1.1 the rest of a malformed body is not read,
				// so the connection closes: the answer must say so, or
				// the client's next call may meet it closing.
				if hc == h1 && b.framed && !closes {
					t.Errorf("%s: answered over HTTP/1.1 without Connection: close", name)
				}
				if wire == "grpc" {
					code, msg, _ := malformedCall(t, hc, url, p.procedure, wire, iotest.OneByteReader(bytes.NewReader(body)))
					if code != connect.CodeInvalidArgument {
						t.Errorf("%s, a byte at a time: %v (%q), want %v", name, code, msg, connect.CodeInvalidArgument)
					}
				}
			}
		}
	}

	// Well-formed frames pass, in pieces too: the handler's answer.
	if code, msg, _ := malformedCall(t, ts.http, url, wfdv1connect.WorkflowServiceGetHandlerProcedure, "grpc",
		iotest.OneByteReader(bytes.NewReader(frame(0, -1, good)))); code != connect.CodeNotFound {
		t.Errorf("a well-formed frame a byte at a time: %v (%q), want %v", code, msg, connect.CodeNotFound)
	}

	// Still serving, on the connections that carried the malformed calls
	// and on new ones.
	for _, hc := range []*http.Client{ts.http, h1} {
		for _, p := range protocols {
			c := wfdv1connect.NewWorkflowServiceClient(hc, url, p.opts...)
			if p.name == "grpc" && hc == h1 {
				continue // gRPC needs HTTP/2
			}
			if _, err := c.ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{}); err != nil {
				t.Errorf("%s after the malformed calls: %v", p.name, err)
			}
			_, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: "no-such-handler"})
			wantCode(t, err, connect.CodeNotFound, "")
			// Frames flagged compressed on a call that negotiated it.
			gz := wfdv1connect.NewWorkflowServiceClient(hc, url, append(slices.Clip(p.opts), connect.WithSendGzip())...)
			_, err = gz.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: "no-such-handler"})
			wantCode(t, err, connect.CodeNotFound, "")
		}
	}
}
