package flow

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
)

// Concurrency limits how many handlers of a workflow run at once, and how
// fast they start, per key: the value of a field of their input (a
// customer's id, say). A start over the limit waits in the key's queue,
// in order, until a handler of the key ends (or the rate lets it in), or
// is refused if Refuse is set. A handler holds its slot from its start to
// its end, idle and released included.
//
// The limit that applies is the current version's; a handler's key is
// taken from its input by the version it starts on. A changed limit is
// not a new version (DefinitionHash leaves it out): it applies to every
// key of the workflow from the next change of the key on.
type Concurrency struct {
	// Key is the input field whose value names the handler's key: a name,
	// or a dotted path into nested objects ("order.customer"). Its value
	// must be a string, a number or a boolean. "" puts every handler of
	// the workflow in one key.
	Key string
	// Max is how many handlers of one key may run at once; 0: no maximum.
	Max int
	// Rate is how many handlers of one key may start within any Per; 0:
	// no rate limit.
	Rate int
	Per  time.Duration
	// Refuse refuses a start over the limit (the engine's ErrLimited)
	// instead of queueing it.
	Refuse bool
}

// Limits of a Concurrency.
const (
	MaxConcurrencyMax  = 100000
	MaxConcurrencyRate = 10000
	// MinConcurrencyPer is the shortest rate interval: a finer rate is a
	// maximum in disguise.
	MinConcurrencyPer = time.Millisecond
	maxKeyLen         = 256
)

// ErrNoConcurrencyKey is the error of KeyOf for an input that does not
// give a key.
var ErrNoConcurrencyKey = errors.New("the input gives no concurrency key")

// Limited reports whether c limits anything.
func (c *Concurrency) Limited() bool { return c != nil && (c.Max > 0 || c.Rate > 0) }

// Validate reports what is wrong with c (nil: nothing).
func (c *Concurrency) Validate() error {
	var bad []string
	switch {
	case c.Max < 0 || c.Max > MaxConcurrencyMax:
		bad = append(bad, fmt.Sprintf("max %d: want 0 to %d", c.Max, MaxConcurrencyMax))
	case c.Rate < 0 || c.Rate > MaxConcurrencyRate:
		bad = append(bad, fmt.Sprintf("rate %d: want 0 to %d", c.Rate, MaxConcurrencyRate))
	case c.Rate > 0 && c.Per < MinConcurrencyPer:
		bad = append(bad, fmt.Sprintf("rate %d per %v: want an interval of at least %v", c.Rate, c.Per, MinConcurrencyPer))
	case c.Rate == 0 && c.Per != 0:
		bad = append(bad, fmt.Sprintf("an interval (%v) without a rate", c.Per))
	case !c.Limited() && (c.Key != "" || c.Refuse):
		bad = append(bad, "a key or refuse without a max or a rate")
	}
	if c.Key != "" {
		for _, part := range strings.Split(c.Key, ".") {
			if part == "" {
				bad = append(bad, fmt.Sprintf("key %q: an empty field name", c.Key))
				break
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return errors.New(strings.Join(bad, "; "))
}

// KeyOf returns the key of a handler with input. A number is written as
// an integer when it is one (42, not 42.0). An input without the field,
// or with a value of another kind (null, object, list), is
// ErrNoConcurrencyKey.
func (c *Concurrency) KeyOf(input *structpb.Struct) (string, error) {
	if c.Key == "" {
		return "", nil
	}
	parts := strings.Split(c.Key, ".")
	v := structpb.NewStructValue(input)
	for _, p := range parts {
		f := v.GetStructValue().GetFields()
		if f == nil || f[p] == nil {
			return "", fmt.Errorf("%w: no field %q", ErrNoConcurrencyKey, c.Key)
		}
		v = f[p]
	}
	var key string
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		key = k.StringValue
	case *structpb.Value_BoolValue:
		key = strconv.FormatBool(k.BoolValue)
	case *structpb.Value_NumberValue:
		n := k.NumberValue
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			key = strconv.FormatInt(int64(n), 10)
		} else {
			key = strconv.FormatFloat(n, 'g', -1, 64)
		}
	default:
		return "", fmt.Errorf("%w: field %q is not a string, a number or a boolean", ErrNoConcurrencyKey, c.Key)
	}
	if len(key) > maxKeyLen || strings.ContainsRune(key, 0) {
		return "", fmt.Errorf("%w: field %q: longer than %d bytes, or a NUL", ErrNoConcurrencyKey, c.Key, maxKeyLen)
	}
	return key, nil
}
