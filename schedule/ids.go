package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Schedule ids are 1 to MaxIDLen characters of [A-Za-z0-9._-]: no ':',
// which separates the parts of the handler ids below, so a handler id
// names its schedule without ambiguity.
const MaxIDLen = 64

// ValidateID reports whether id may name a schedule. The error wraps
// ErrInvalid.
func ValidateID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: schedule id is required", ErrInvalid)
	}
	if len(id) > MaxIDLen {
		return fmt.Errorf("%w: schedule id is longer than %d characters", ErrInvalid, MaxIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w: schedule id %q: character %q not allowed (use A-Z a-z 0-9 . _ -)", ErrInvalid, id, c)
		}
	}
	return nil
}

// The handler ids of a schedule's runs. A tick's id is derived from the
// schedule and the tick alone, so every replica that plans the tick, and
// every retry of its start, names the same handler: the server's start is
// idempotent by handler id, so a tick can never start two handlers. Both
// forms match the API's handler ids, [A-Za-z0-9._:-]{1,128}, for every
// valid schedule id (at most 6+64+1+16 and 6+64+9+20 characters).
const (
	handlerPrefix = "sched:"
	tickLayout    = "20060102T150405Z" // UTC, to the second: ticks are whole seconds
	triggerPart   = ":trigger:"
)

// HandlerID returns the id of the handler a tick of the schedule
// scheduleID starts: "sched:<id>:<tick, UTC, YYYYMMDDThhmmssZ>", e.g.
// sched:nightly:20261128T120000Z. A backfilled tick has the id of the
// same tick when it came on time, so a tick that already ran is not run
// again by a backfill.
func HandlerID(scheduleID string, tick time.Time) string {
	return handlerPrefix + scheduleID + ":" + tick.UTC().Format(tickLayout)
}

// TriggerHandlerID returns the id of the handler a manual trigger of the
// schedule at the instant at starts: "sched:<id>:trigger:<Unix
// nanoseconds>". It cannot be the id of a tick, and two triggers have the
// same id only if the caller gives them the same instant, which is how a
// retried trigger request that carries its instant stays one run.
func TriggerHandlerID(scheduleID string, at time.Time) string {
	return handlerPrefix + scheduleID + triggerPart + strconv.FormatInt(at.UnixNano(), 10)
}

// ParseHandlerID returns the schedule and the tick (or trigger instant) a
// handler id of this package names; ok is false for any other id.
func ParseHandlerID(handlerID string) (scheduleID string, tick time.Time, trigger, ok bool) {
	rest, found := strings.CutPrefix(handlerID, handlerPrefix)
	if !found {
		return "", time.Time{}, false, false
	}
	if id, nanos, found := strings.Cut(rest, triggerPart); found {
		n, err := strconv.ParseInt(nanos, 10, 64)
		if err != nil || ValidateID(id) != nil || TriggerHandlerID(id, time.Unix(0, n)) != handlerID {
			return "", time.Time{}, false, false
		}
		return id, time.Unix(0, n).UTC(), true, true
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return "", time.Time{}, false, false
	}
	id := rest[:i]
	t, err := time.Parse(tickLayout, rest[i+1:])
	if err != nil || ValidateID(id) != nil || HandlerID(id, t) != handlerID {
		return "", time.Time{}, false, false
	}
	return id, t, false, true
}
