package bench

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1grpc"
	"github.com/wfd-dev/wfd/namespace"
)

// The client libraries --client chooses between.
const (
	clientGRPCGo    = "grpc-go"    // google.golang.org/grpc, as wfd's Go client (clients/go)
	clientConnectGo = "connect-go" // connectrpc.com/connect, as the server
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
	grpc *grpc.ClientConn // with --client grpc-go
	api  wfdv1connect.WorkflowServiceClient
}

// With sec they speak TLS and send its token.
func newClients(addr string, cfg config, sec *security) *clients {
	cl := &clients{base: "http://" + addr}
	var opts []connect.ClientOption
	grpcOpts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if sec != nil {
		cl.base = "https://" + addr
		opts = append(opts, connect.WithInterceptors(headerInterceptor{"Authorization", "Bearer " + sec.token}))
		grpcOpts = sec.grpcOptions()
	}
	if cfg.Namespace != "" {
		opts = append(opts, connect.WithInterceptors(headerInterceptor{namespace.Header, cfg.Namespace}))
		grpcOpts = append(grpcOpts, grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(metadata.AppendToOutgoingContext(ctx, strings.ToLower(namespace.Header), cfg.Namespace), method, req, reply, cc, opts...)
		}))
	}
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
		// Each transport holds its own connection.
		tr := &http.Transport{
			Protocols:   &p,
			DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		}
		if sec != nil {
			p.SetHTTP2(true)
			tr.TLSClientConfig = sec.client.Clone()
		} else {
			p.SetUnencryptedHTTP2(true)
		}
		hc := &http.Client{Transport: tr}
		c := conn{http: hc, api: wfdv1connect.NewWorkflowServiceClient(hc, cl.base, opts...)}
		if cfg.Client == clientGRPCGo {
			// grpc.NewClient only fails on a malformed target or options;
			// addr is host:port, so a failure here is a bug.
			cc, err := grpc.NewClient(addr, grpcOpts...)
			if err != nil {
				panic(err)
			}
			c.grpc = cc
			c.api = &grpcAPI{WorkflowServiceClient: c.api, g: wfdv1grpc.NewWorkflowServiceClient(cc)}
		}
		cl.conns = append(cl.conns, c)
	}
	return cl
}

// grpcAPI makes the unary calls of the measured phases with grpc-go and
// leaves the rest (StreamEvents, whose connect-go type the phases read) to
// the embedded connect-go client.
type grpcAPI struct {
	wfdv1connect.WorkflowServiceClient
	g wfdv1grpc.WorkflowServiceClient
}

func (a *grpcAPI) RunWorkflow(ctx context.Context, req *wfdv1.RunWorkflowRequest) (*wfdv1.RunWorkflowResponse, error) {
	return a.g.RunWorkflow(ctx, req)
}

func (a *grpcAPI) SendEvent(ctx context.Context, req *wfdv1.SendEventRequest) (*wfdv1.SendEventResponse, error) {
	return a.g.SendEvent(ctx, req)
}

func (a *grpcAPI) ReleaseHandler(ctx context.Context, req *wfdv1.ReleaseHandlerRequest) (*wfdv1.ReleaseHandlerResponse, error) {
	return a.g.ReleaseHandler(ctx, req)
}

func (a *grpcAPI) GetHandler(ctx context.Context, req *wfdv1.GetHandlerRequest) (*wfdv1.GetHandlerResponse, error) {
	return a.g.GetHandler(ctx, req)
}

// api returns the client worker i uses.
func (cl *clients) api(i int) wfdv1connect.WorkflowServiceClient {
	return cl.conns[i%len(cl.conns)].api
}

// close closes the connections, so that a server shutting down does not
// wait for them.
func (cl *clients) close() {
	for _, c := range cl.conns {
		c.http.CloseIdleConnections()
		if c.grpc != nil {
			_ = c.grpc.Close()
		}
	}
}
