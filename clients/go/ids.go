package client

import (
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// defaultID sets *id to a new UUIDv7 when it is empty: ids the client makes
// up (handler ids, idempotency keys, event ids) let a retry after a lost
// answer find the first call's effect instead of repeating it.
func defaultID(id *string, what string) error {
	if *id != "" {
		return nil
	}
	u, err := uuid.NewV7()
	if err != nil {
		return status.Errorf(codes.Internal, "client: %s: %v", what, err)
	}
	*id = u.String()
	return nil
}
