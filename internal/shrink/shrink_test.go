package shrink_test

import (
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
