package shrink_test

import (
	"sync"
	"testing"

	"github.com/wfd-dev/wfd/internal/shrink"
)

func TestMap(t *testing.T) {
	for _, tc := range []struct {
		name       string
		peak, keep int
		rebuilt    bool
	}{
		{"small peak", shrink.MinPeak - 1, 0, false},
		{"still a quarter of the peak", 4000, 1000, false},
		{"fell below a quarter", 4000, 999, true},
		{"emptied", 4000, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[int]int{}
			for i := range tc.peak {
				m[i] = i
			}
			peak := len(m)
			for i := tc.keep; i < tc.peak; i++ {
				delete(m, i)
			}
			got, rebuilt := shrink.Map(m, &peak)
			if rebuilt != tc.rebuilt {
				t.Fatalf("rebuilt = %v, want %v", rebuilt, tc.rebuilt)
			}
			if len(got) != tc.keep {
				t.Fatalf("%d entries after, want %d", len(got), tc.keep)
			}
			for i := range tc.keep {
				if got[i] != i {
					t.Fatalf("entry %d = %d after the rebuild", i, got[i])
				}
			}
			if wantPeak := map[bool]int{true: tc.keep, false: tc.peak}[rebuilt]; peak != wantPeak {
				t.Errorf("peak = %d, want %d", peak, wantPeak)
			}
		})
	}
}

// TestLocked: the map is rebuilt in place under the lock it names, which is
// free again afterwards.
func TestLocked(t *testing.T) {
	var mu sync.Mutex
	m := map[int]int{}
	for i := range 4000 {
		m[i] = i
	}
	peak := len(m)
	for i := 10; i < 4000; i++ {
		delete(m, i)
	}
	before := m
	if !shrink.Locked(&mu, &m, &peak) {
		t.Fatal("not rebuilt")
	}
	if !mu.TryLock() {
		t.Fatal("the lock is still held")
	}
	mu.Unlock()
	before[-1] = -1 // the old map is no longer the owner's
	if len(m) != 10 || peak != 10 || m[9] != 9 || m[-1] != 0 {
		t.Fatalf("after the rebuild: %d entries %v, peak %d", len(m), m, peak)
	}
	if shrink.Locked(&mu, &m, &peak) {
		t.Fatal("rebuilt again at its peak")
	}
}
