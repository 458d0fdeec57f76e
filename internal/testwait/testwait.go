// Package testwait lets tests wait for the condition they mean instead of
// for an amount of time. A test that sleeps and then asserts fails when the
// machine is crowded; one that polls a condition only takes longer.
package testwait

import (
	"testing"
	"time"
)

// Timeout bounds every wait. It is far above what any condition takes on
// an idle machine: it exists only so that a condition that never holds
// fails the test instead of hanging it, and a machine crowded by other
// processes (CI may be one) must never reach it.
const Timeout = 2 * time.Minute

// For polls cond until it returns true, and fails t with what (and the
// time it waited) if Timeout passes first.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Until(t, func() error {
		if cond() {
			return nil
		}
		return errNotYet(what)
	})
}

// Until polls cond until it returns nil, and fails t with the last error
// it returned if Timeout passes first.
func Until(t testing.TB, cond func() error) {
	t.Helper()
	start := time.Now()
	pause := time.Millisecond
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Since(start) > Timeout {
			t.Fatalf("waited %v: %v", time.Since(start).Round(time.Millisecond), err)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

type errNotYet string

func (e errNotYet) Error() string { return "not yet: " + string(e) }
