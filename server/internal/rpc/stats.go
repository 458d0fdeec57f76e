package rpc

import (
	"context"

	"google.golang.org/protobuf/types/known/durationpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/persistence"
)

func (v *Service) GetStats(ctx context.Context, _ *wfdv1.GetStatsRequest) (*wfdv1.GetStatsResponse, error) {
	s := v
	snap, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	p50, p99, d50, d99 := snap.RehydrateP50, snap.RehydrateP99, snap.DispatchP50, snap.DispatchP99
	out := &wfdv1.GetStatsResponse{
		HandlersActive:       snap.InMemory,
		HandlersIdleInMemory: snap.IdleInMemory,
		HandlersReleased:     snap.Counts.ByResidency[persistence.ResidencyReleased],
		HandlersByStatus:     map[string]int64{},
		ReleasesTotal:        snap.Releases,
		RehydrationsTotal:    snap.Rehydrations,
		RehydrateLatencyP50:  durationpb.New(p50),
		RehydrateLatencyP99:  durationpb.New(p99),
		Streams:              snap.Streams,
		CommitsTotal:         snap.Commits,
		ChangesTotal:         snap.Changes,
		WorkersConnected:     snap.Workers,
		DispatchesTotal:      snap.Dispatches,
		RedispatchesTotal:    snap.Redispatches,
		DispatchLatencyP50:   durationpb.New(d50),
		DispatchLatencyP99:   durationpb.New(d99),
		TasksPending:         snap.TasksPending,
	}
	for st, n := range snap.Counts.ByStatus {
		out.HandlersByStatus[st.String()] = n
	}
	return out, nil
}
