package status_test

import (
	"testing"

	"github.com/wfd-dev/wfd/internal/status"
)

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		s               status.Status
		valid, terminal bool
		str             string
	}{
		{0, false, false, "unspecified"},
		{status.Running, true, false, "running"},
		{status.Completed, true, true, "completed"},
		{status.Failed, true, true, "failed"},
		{status.Cancelled, true, true, "cancelled"},
		{status.Cancelled + 1, false, false, "Status(5)"},
		{-1, false, false, "Status(-1)"},
	} {
		if got := tc.s.Valid(); got != tc.valid {
			t.Errorf("%v.Valid() = %v, want %v", tc.s, got, tc.valid)
		}
		if got := tc.s.Terminal(); got != tc.terminal {
			t.Errorf("%v.Terminal() = %v, want %v", tc.s, got, tc.terminal)
		}
		if got := tc.s.String(); got != tc.str {
			t.Errorf("String() = %q, want %q", got, tc.str)
		}
	}
	all := status.All()
	for i, s := range all {
		if !s.Valid() || (i > 0 && s <= all[i-1]) {
			t.Fatalf("All() = %v: not the valid statuses in order", all)
		}
	}
	if len(all) != int(status.Cancelled) {
		t.Fatalf("All() = %v, want %d statuses", all, status.Cancelled)
	}
}
