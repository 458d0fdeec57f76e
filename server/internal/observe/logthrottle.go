package observe

import (
	"sync"
	"time"
)

// FailureLogEvery is how often the journal (and the health check) log a failure while
// they keep failing; the line says how many it held back meanwhile.
const FailureLogEvery = 5 * time.Second

// LogThrottle lets one log line through per interval and counts the ones it
// holds back, so that a failure repeated thousands of times a second (every
// checkpoint while the disk is full) costs a line per interval, not a line
// per failure, and the count still says how often it happened.
type LogThrottle struct {
	every time.Duration
	now   func() time.Time

	mu         sync.Mutex
	next       time.Time // when the next line may go out
	suppressed int       // lines held back since the last one let through
}

func NewLogThrottle(every time.Duration, now func() time.Time) *LogThrottle {
	return &LogThrottle{every: every, now: now}
}

// Allow reports whether a line may be logged now and, if so, how many
// were held back since the last one (to log with it).
func (t *LogThrottle) Allow() (ok bool, suppressed int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if now.Before(t.next) {
		t.suppressed++
		return false, 0
	}
	return true, t.letThroughLocked(now)
}

// Flush lets a line through that reports the lines held back, when there
// are some and the interval is over: the condition being logged has ended,
// and no line of its own would report them.
func (t *LogThrottle) Flush() (ok bool, suppressed int) {
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
func (t *LogThrottle) letThroughLocked(now time.Time) (suppressed int) {
	t.next = now.Add(t.every)
	suppressed, t.suppressed = t.suppressed, 0
	return suppressed
}
