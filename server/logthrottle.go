package server

import (
	"sync"
	"time"
)

// logThrottle lets one log line through per interval and counts the ones it
// holds back, so that a failure repeated thousands of times a second (every
// checkpoint while the disk is full) costs a line per interval, not a line
// per failure, and the count still says how often it happened.
type logThrottle struct {
	every time.Duration
	now   func() time.Time

	mu         sync.Mutex
	next       time.Time // when the next line may go out
	suppressed int       // lines held back since the last one let through
}

func newLogThrottle(every time.Duration, now func() time.Time) *logThrottle {
	return &logThrottle{every: every, now: now}
}

// allow reports whether a line may be logged now and, if so, how many
// were held back since the last one (to log with it).
func (t *logThrottle) allow() (ok bool, suppressed int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if now.Before(t.next) {
		t.suppressed++
		return false, 0
	}
	return true, t.letThroughLocked(now)
}

// flush lets a line through that reports the lines held back, when there
// are some and the interval is over: the condition being logged has ended,
// and no line of its own would report them.
func (t *logThrottle) flush() (ok bool, suppressed int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if t.suppressed == 0 || now.Before(t.next) {
		return false, 0
	}
	return true, t.letThroughLocked(now)
}

// letThroughLocked starts a new interval at now with a line let through,
// and returns how many lines were held back before it.
func (t *logThrottle) letThroughLocked(now time.Time) (suppressed int) {
	t.next = now.Add(t.every)
	suppressed, t.suppressed = t.suppressed, 0
	return suppressed
}
