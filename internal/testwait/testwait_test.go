package testwait_test

import (
	"errors"
	"testing"

	"github.com/wfd-dev/wfd/internal/testwait"
)

func TestForReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	testwait.For(t, "three polls", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("polled %d times, want 3", n)
	}
}

func TestUntilStopsAtNil(t *testing.T) {
	n := 0
	testwait.Until(t, func() error {
		if n++; n < 2 {
			return errors.New("first poll")
		}
		return nil
	})
	if n != 2 {
		t.Fatalf("polled %d times, want 2", n)
	}
}
