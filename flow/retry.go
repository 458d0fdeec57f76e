package flow

import "time"

// RetryPolicy is exponential backoff with a cap.
type RetryPolicy struct {
	// MaxAttempts counts the first attempt: 0 and 1 both mean no retry.
	MaxAttempts int
	// InitialBackoff is the pause before the second attempt (default 100ms).
	InitialBackoff time.Duration
	// MaxBackoff caps the pause (default 10s).
	MaxBackoff time.Duration
	// Multiplier grows the pause after each attempt (default 2).
	Multiplier float64
}

// Backoff returns the pause before attempt (2 for the first retry).
func (p RetryPolicy) Backoff(attempt int) time.Duration {
	d := p.InitialBackoff
	if d <= 0 {
		d = 100 * time.Millisecond
	}
	maxd := p.MaxBackoff
	if maxd <= 0 {
		maxd = 10 * time.Second
	}
	m := p.Multiplier
	if m < 1 {
		m = 2
	}
	for i := 2; i < attempt && d < maxd; i++ {
		d = time.Duration(float64(d) * m)
	}
	return min(d, maxd)
}
