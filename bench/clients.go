package bench

import (
	"net"
	"net/http"
	"time"

	"connectrpc.com/connect"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
)

// clients are the benchmark's API clients: one per HTTP/2 connection
// (--conns), shared round-robin by the workers. HTTP/2 multiplexes every
// call of a connection on one TCP socket.
type clients struct {
	base  string
	conns []conn
}

type conn struct {
	http *http.Client
	api  wfdv1connect.WorkflowServiceClient
}

func newClients(addr string, cfg config) *clients {
	cl := &clients{base: "http://" + addr}
	var opts []connect.ClientOption
	if cfg.Protocol == "grpc" {
		opts = append(opts, connect.WithGRPC())
	}
	if !cfg.Gzip {
		// connect-go clients accept gzip by default, and a connect-go
		// server then compresses every response. Leave it out unless
		// asked: the benchmark measures the server, not gzip.
		opts = append(opts, connect.WithAcceptCompression("gzip", nil, nil))
	}
	for range cfg.Conns {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		// Each transport holds its own connection.
		tr := &http.Transport{
			Protocols:   &p,
			DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		}
		hc := &http.Client{Transport: tr}
		cl.conns = append(cl.conns, conn{http: hc, api: wfdv1connect.NewWorkflowServiceClient(hc, cl.base, opts...)})
	}
	return cl
}

// api returns the client worker i uses.
func (cl *clients) api(i int) wfdv1connect.WorkflowServiceClient {
	return cl.conns[i%len(cl.conns)].api
}

// close closes idle connections, so that a server shutting down does not
// wait for them.
func (cl *clients) close() {
	for _, c := range cl.conns {
		c.http.CloseIdleConnections()
	}
}
