package client

import (
	"context"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/timeout"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// backoffJitter is the fraction by which a pause varies either way, so
// that clients cut off together do not come back together.
const backoffJitter = 0.2

// backoffFunc is the pause before attempt (1 for the first retry).
func (p RetryPolicy) backoffFunc() retry.BackoffFunc {
	return retry.BackoffExponentialWithJitterBounded(p.InitialBackoff, backoffJitter, p.MaxBackoff)
}

// unaryInterceptors are the default timeout (outermost, so it bounds the
// retries too) and the retry of codes.Unavailable.
func unaryInterceptors(o *options) []grpc.UnaryClientInterceptor {
	var out []grpc.UnaryClientInterceptor
	if o.timeout > 0 {
		out = append(out, defaultTimeout(o.timeout))
	}
	if o.retry.MaxAttempts > 1 {
		out = append(out, retry.UnaryClientInterceptor(
			retry.WithMax(uint(o.retry.MaxAttempts)), // attempts in all, despite its name
			retry.WithBackoff(o.retry.backoffFunc()),
			retry.WithCodes(codes.Unavailable),
		))
	}
	return out
}

// defaultTimeout applies the middleware's timeout interceptor to calls
// whose context has no deadline, and leaves the caller's deadline alone.
func defaultTimeout(d time.Duration) grpc.UnaryClientInterceptor {
	withTimeout := timeout.UnaryClientInterceptor(d)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if _, ok := ctx.Deadline(); ok {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		return withTimeout(ctx, method, req, reply, cc, invoker, opts...)
	}
}
