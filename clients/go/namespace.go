package client

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/namespace"
)

// WithNamespace makes every call of the client, and of a worker on its
// connection (Conn), name namespace ns: the client sees that namespace's
// handlers, workflows, tasks, published events and schedules, and a
// worker serves its workflows there. The default is "default". Dial
// refuses a name that is not a namespace's (lower-case letters, digits
// and hyphens, starting with a letter).
func WithNamespace(ns string) Option {
	return func(o *options) { o.namespace = ns }
}

// Namespace returns the namespace the client's calls name.
func (c *Client) Namespace() string { return namespace.Of(c.opts.namespace) }

// namespaceInterceptors put the namespace in every call's metadata.
func namespaceInterceptors(ns string) []grpc.DialOption {
	if ns == "" || ns == namespace.Default {
		return nil
	}
	key := strings.ToLower(namespace.Header)
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(metadata.AppendToOutgoingContext(ctx, key, ns), method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return streamer(metadata.AppendToOutgoingContext(ctx, key, ns), desc, cc, method, opts...)
		}),
	}
}

// ListNamespaces lists the namespaces the server serves where the caller
// holds a role (every one when the server does not authenticate).
func (c *Client) ListNamespaces(ctx context.Context) ([]*wfdv1.Namespace, error) {
	res, err := c.svc.ListNamespaces(ctx, &wfdv1.ListNamespacesRequest{})
	if err != nil {
		return nil, err
	}
	return res.GetNamespaces(), nil
}
