package client

import (
	"iter"
	"math"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// pageSize checks a page size option (0: the server's default).
func pageSize(n int) (int32, error) {
	if n < 0 || n > math.MaxInt32 {
		return 0, status.Errorf(codes.InvalidArgument, "client: page size %d out of range", n)
	}
	return int32(n), nil
}

// allPages yields every item of the pages that page returns, from token
// on, following next page tokens. It stops after the first error, which
// it yields.
func allPages[T any](token string, page func(token string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			items, next, err := page(token)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			token = next
		}
	}
}
