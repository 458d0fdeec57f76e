package workflows

import (
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// Bounds on the example workflows' inputs. The engine bounds what any
// handler may do (engine.Limits); these make a bad input a clear
// InvalidArgument at RunWorkflow instead of a failed handler, or a server
// that allocates what the input asks for.
const (
	// BatchMaxJobs is the largest "n" batch takes.
	BatchMaxJobs = 1000
	// maxSeconds bounds the durations inputs give in seconds (a year).
	maxSeconds = 365 * 24 * 60 * 60
	// maxNameBytes bounds the names inputs give (an event type, an
	// assignee, an order id): they become store keys.
	maxNameBytes = 200
)

// number reads an optional number field: a whole number in [lo, hi] when
// whole is set. ok is false when the field is absent.
func number(f map[string]*structpb.Value, key string, lo, hi float64, whole bool) (v float64, ok bool, err error) {
	raw, ok := f[key]
	if !ok {
		return 0, false, nil
	}
	n, isNum := raw.GetKind().(*structpb.Value_NumberValue)
	kind := "a number"
	if whole {
		kind = "a whole number"
	}
	if !isNum || n.NumberValue < lo || n.NumberValue > hi || (whole && n.NumberValue != math.Trunc(n.NumberValue)) {
		return 0, true, fmt.Errorf("%q must be %s from %v to %v, got %s", key, kind, lo, hi, show(raw))
	}
	return n.NumberValue, true, nil
}

// name reads an optional string field that must be non-empty and short.
func name(f map[string]*structpb.Value, key string) (string, bool, error) {
	raw, ok := f[key]
	if !ok {
		return "", false, nil
	}
	s, isStr := raw.GetKind().(*structpb.Value_StringValue)
	if !isStr || s.StringValue == "" || len(s.StringValue) > maxNameBytes || !utf8.ValidString(s.StringValue) {
		return "", true, fmt.Errorf("%q must be a non-empty string of at most %d bytes, got %s", key, maxNameBytes, show(raw))
	}
	return s.StringValue, true, nil
}

// boolean reads an optional bool field.
func boolean(f map[string]*structpb.Value, key string) (bool, error) {
	raw, ok := f[key]
	if !ok {
		return false, nil
	}
	b, isBool := raw.GetKind().(*structpb.Value_BoolValue)
	if !isBool {
		return false, fmt.Errorf("%q must be true or false, got %s", key, show(raw))
	}
	return b.BoolValue, nil
}

// seconds reads an optional duration in seconds (0 when absent).
func seconds(f map[string]*structpb.Value, key string) (time.Duration, error) {
	s, _, err := number(f, key, 0, maxSeconds, false)
	return time.Duration(s * float64(time.Second)), err
}

// show renders a value for an error message, briefly.
func show(v *structpb.Value) string {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NumberValue:
		return fmt.Sprint(k.NumberValue)
	case *structpb.Value_StringValue:
		if len(k.StringValue) > 40 {
			return fmt.Sprintf("a string of %d bytes", len(k.StringValue))
		}
		return fmt.Sprintf("%q", k.StringValue)
	case *structpb.Value_BoolValue:
		return fmt.Sprint(k.BoolValue)
	case *structpb.Value_StructValue:
		return "an object"
	case *structpb.Value_ListValue:
		return "a list"
	}
	return "null"
}
