package client

import (
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// NewAttributes converts search attributes to their wire form, for
// [WithAttributes] and [WithStartAttributes]: strings, bools, numbers (an
// int attribute takes a whole number), time.Time (sent as RFC 3339, kept
// by the server to the microsecond in UTC), []string for a keyword_list,
// and nil to delete one (in an update). The server checks names and types
// against the workflow's declarations.
func NewAttributes(m map[string]any) (*structpb.Struct, error) {
	conv := make(map[string]any, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case time.Time:
			conv[k] = v.UTC().Format(time.RFC3339Nano)
		case []string:
			items := make([]any, len(v))
			for i, s := range v {
				items[i] = s
			}
			conv[k] = items
		default:
			conv[k] = v
		}
	}
	s, err := structpb.NewStruct(conv)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "client: attributes: %v", err)
	}
	return s, nil
}

// WithAttributes gives the new handler search attributes ([NewAttributes]
// makes them from a map). Each must be one the workflow declares, of its
// type: codes.InvalidArgument naming it otherwise, and nothing is created.
func WithAttributes(s *structpb.Struct) RunOption {
	return func(r *wfdv1.RunWorkflowRequest) { r.Attributes = s }
}

// WithStartAttributes gives the handler [Client.SendOrStart] starts
// search attributes, as [WithAttributes] does for Run.
func WithStartAttributes(s *structpb.Struct) SendOption {
	return func(r *wfdv1.SendEventRequest) {
		if r.Start != nil {
			r.Start.Attributes = s
		}
	}
}

// Attributes returns a handler's search attributes as Go values: string,
// float64 for int and double (ints within ±2^53 are exact), bool, an RFC
// 3339 string for a time, and []any of strings for a keyword_list. It is
// nil for a handler without any.
func Attributes(h *wfdv1.Handler) map[string]any {
	if len(h.GetAttributes().GetFields()) == 0 {
		return nil
	}
	return h.GetAttributes().AsMap()
}
