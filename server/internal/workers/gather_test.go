package workers

import (
	"testing"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// TestGather: the dispatches queued behind a dispatch go with it, in
// order, in one Dispatches; a message of another kind ends the batch and
// is held for after it; anything else is sent as it is.
func TestGather(t *testing.T) {
	dispatch := func(id string) *wfdv1.ConnectResponse {
		return &wfdv1.ConnectResponse{Kind: &wfdv1.ConnectResponse_Dispatch{Dispatch: &wfdv1.Dispatch{RunId: id}}}
	}
	cancel := &wfdv1.ConnectResponse{Kind: &wfdv1.ConnectResponse_CancelRunId{CancelRunId: "c"}}
	tests := []struct {
		name      string
		first     *wfdv1.ConnectResponse
		queued    []*wfdv1.ConnectResponse
		wantRuns  []string // nil: first is sent as it is
		wantHeld  bool
		wantRests int
	}{
		{"alone", dispatch("a"), nil, nil, false, 0},
		{"three", dispatch("a"), []*wfdv1.ConnectResponse{dispatch("b"), dispatch("c")}, []string{"a", "b", "c"}, false, 0},
		{"cancel ends the batch", dispatch("a"), []*wfdv1.ConnectResponse{dispatch("b"), cancel, dispatch("d")}, []string{"a", "b"}, true, 1},
		{"cancel right behind", dispatch("a"), []*wfdv1.ConnectResponse{cancel}, nil, true, 0},
		{"not a dispatch", cancel, []*wfdv1.ConnectResponse{dispatch("b")}, nil, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := make(chan *wfdv1.ConnectResponse, len(tt.queued))
			for _, m := range tt.queued {
				q <- m
			}
			batch, held := gather(tt.first, q)
			if tt.wantRuns == nil {
				if batch != tt.first {
					t.Fatalf("sent %v, want the first message as it is", batch)
				}
			} else {
				var got []string
				for _, d := range batch.GetDispatches().GetDispatches() {
					got = append(got, d.GetRunId())
				}
				if len(got) != len(tt.wantRuns) {
					t.Fatalf("batch of %v, want %v", got, tt.wantRuns)
				}
				for i := range got {
					if got[i] != tt.wantRuns[i] {
						t.Fatalf("batch of %v, want %v", got, tt.wantRuns)
					}
				}
			}
			if (held != nil) != tt.wantHeld || (held != nil && held != cancel) {
				t.Fatalf("held %v, want held: %v", held, tt.wantHeld)
			}
			if len(q) != tt.wantRests {
				t.Fatalf("%d left in the queue, want %d", len(q), tt.wantRests)
			}
		})
	}
}

// TestGatherBounded: a batch stops at maxBatch runs.
func TestGatherBounded(t *testing.T) {
	q := make(chan *wfdv1.ConnectResponse, maxBatch+10)
	for range maxBatch + 10 {
		q <- &wfdv1.ConnectResponse{Kind: &wfdv1.ConnectResponse_Dispatch{Dispatch: &wfdv1.Dispatch{}}}
	}
	batch, _ := gather(<-q, q)
	if n := len(batch.GetDispatches().GetDispatches()); n != maxBatch {
		t.Fatalf("a batch of %d, want %d", n, maxBatch)
	}
	if len(q) != 10 {
		t.Fatalf("%d left, want 10", len(q))
	}
}
