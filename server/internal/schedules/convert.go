package schedules

import (
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/schedule"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// maxNoteLen bounds Schedule.note (the API's limit; the store's is
// larger).
const maxNoteLen = 1024

// nextTicks is how many coming ticks ScheduleInfo lists.
const nextTicks = 5

// overlaps maps the API's policies to the schedule package's.
var overlaps = map[wfdv1.OverlapPolicy]schedule.Overlap{
	wfdv1.OverlapPolicy_OVERLAP_POLICY_UNSPECIFIED:     schedule.OverlapSkip,
	wfdv1.OverlapPolicy_OVERLAP_POLICY_SKIP:            schedule.OverlapSkip,
	wfdv1.OverlapPolicy_OVERLAP_POLICY_BUFFER_ONE:      schedule.OverlapBufferOne,
	wfdv1.OverlapPolicy_OVERLAP_POLICY_ALLOW:           schedule.OverlapAllow,
	wfdv1.OverlapPolicy_OVERLAP_POLICY_CANCEL_PREVIOUS: schedule.OverlapCancelPrevious,
}

var outcomeKinds = map[schedule.OutcomeKind]wfdv1.ScheduleOutcomeKind{
	schedule.OutcomeStarted:           wfdv1.ScheduleOutcomeKind_SCHEDULE_OUTCOME_KIND_STARTED,
	schedule.OutcomeSkipped:           wfdv1.ScheduleOutcomeKind_SCHEDULE_OUTCOME_KIND_SKIPPED,
	schedule.OutcomeMissed:            wfdv1.ScheduleOutcomeKind_SCHEDULE_OUTCOME_KIND_MISSED,
	schedule.OutcomeFailed:            wfdv1.ScheduleOutcomeKind_SCHEDULE_OUTCOME_KIND_FAILED,
	schedule.OutcomeBuffered:          wfdv1.ScheduleOutcomeKind_SCHEDULE_OUTCOME_KIND_BUFFERED,
	schedule.OutcomeCancelledPrevious: wfdv1.ScheduleOutcomeKind_SCHEDULE_OUTCOME_KIND_CANCELLED_PREVIOUS,
}

// invalid wraps a schedule package refusal as the API's bad input.
func invalid(err error) error { return fmt.Errorf("%w: %w", apierr.ErrInvalid, err) }

// settable is what a client sets of a schedule, checked and converted:
// the spec parsed, the policy known, the input encoded.
type settable struct {
	spec   schedule.Spec
	policy schedule.Policy
	stored persistence.Schedule // the action and the note
}

// fromAPI checks the settable fields of pb (its workflow name and input
// payload are checked at the edge, rpc's validation).
func fromAPI(pb *wfdv1.Schedule) (settable, error) {
	var out settable
	if pb == nil {
		return out, fmt.Errorf("%w: schedule is required", apierr.ErrInvalid)
	}
	if err := schedule.ValidateID(pb.GetScheduleId()); err != nil {
		return out, invalid(err)
	}
	sp := pb.GetSpec()
	if sp.GetCron() == "" && sp.GetInterval() == nil {
		return out, fmt.Errorf("%w: spec needs a cron expression or an interval", apierr.ErrInvalid)
	}
	spec := schedule.Spec{Cron: sp.GetCron(), TimeZone: sp.GetTimeZone(), Interval: sp.GetInterval().AsDuration(), Phase: sp.GetPhase().AsDuration()}
	if sp.GetStartAt() != nil {
		spec.Start = sp.GetStartAt().AsTime()
	}
	if sp.GetEndAt() != nil {
		spec.End = sp.GetEndAt().AsTime()
	}
	spec, err := schedule.ParseSpec(spec)
	if err != nil {
		return out, invalid(err)
	}
	overlap, ok := overlaps[pb.GetPolicy().GetOverlap()]
	if !ok {
		return out, fmt.Errorf("%w: policy.overlap %d is not a policy", apierr.ErrInvalid, pb.GetPolicy().GetOverlap())
	}
	window := pb.GetPolicy().GetCatchupWindow().AsDuration()
	if window < 0 {
		return out, fmt.Errorf("%w: policy.catchup_window must not be negative", apierr.ErrInvalid)
	}
	if len(pb.GetNote()) > maxNoteLen {
		return out, fmt.Errorf("%w: note is longer than %d bytes", apierr.ErrInvalid, maxNoteLen)
	}
	if pb.GetAction().GetWorkflow() == "" {
		return out, fmt.Errorf("%w: action.workflow is required", apierr.ErrInvalid)
	}
	var input []byte
	if in := pb.GetAction().GetInput(); in != nil && len(in.GetFields()) > 0 {
		if input, err = protojson.Marshal(in); err != nil {
			return out, fmt.Errorf("%w: action.input: %w", apierr.ErrInvalid, err)
		}
	}
	out.spec = spec
	out.policy = schedule.Policy{Overlap: overlap, CatchupWindow: window}
	out.stored = persistence.Schedule{ID: pb.GetScheduleId(), Workflow: pb.GetAction().GetWorkflow(),
		WorkflowVersion: pb.GetAction().GetVersion(), Input: input, Note: pb.GetNote(), Paused: pb.GetPaused()}
	return out, nil
}

// toAPI is the API's view of a stored schedule at now.
func toAPI(p persistence.Schedule, now time.Time) (*wfdv1.Schedule, error) {
	sch, err := schedule.Load(p)
	if err != nil {
		return nil, err
	}
	in, err := decodeInput(p.Input)
	if err != nil {
		return nil, err
	}
	out := &wfdv1.Schedule{
		ScheduleId: p.ID,
		Spec:       &wfdv1.ScheduleSpec{Cron: p.Cron, TimeZone: p.TimeZone},
		Action:     &wfdv1.ScheduleAction{Workflow: p.Workflow, Version: p.WorkflowVersion, Input: in},
		Policy:     &wfdv1.SchedulePolicy{Overlap: overlapToAPI(sch.Policy.Overlap)},
		Paused:     p.Paused, Note: p.Note, Revision: p.Revision,
		CreatedAt: timestamppb.New(p.CreatedAt), UpdatedAt: timestamppb.New(p.UpdatedAt),
	}
	if p.Interval > 0 {
		out.Spec.Interval = durationpb.New(p.Interval)
		if p.Phase > 0 {
			out.Spec.Phase = durationpb.New(p.Phase)
		}
	}
	if !p.StartAt.IsZero() {
		out.Spec.StartAt = timestamppb.New(p.StartAt)
	}
	if !p.EndAt.IsZero() {
		out.Spec.EndAt = timestamppb.New(p.EndAt)
	}
	if p.CatchupWindow > 0 {
		out.Policy.CatchupWindow = durationpb.New(p.CatchupWindow)
	}
	st := sch.State
	info := &wfdv1.ScheduleInfo{Running: slices.Clone(st.Running), Started: st.Started, Skipped: st.Skipped, Missed: st.Missed, Failed: st.Failed}
	if !p.Paused {
		after := st.LastTick
		if after.Before(now) {
			after = now
		}
		for t := sch.Spec.Next(after); !t.IsZero() && len(info.NextTicks) < nextTicks; t = sch.Spec.Next(t) {
			info.NextTicks = append(info.NextTicks, timestamppb.New(t))
		}
	}
	for i := len(st.Recent) - 1; i >= 0; i-- {
		o := st.Recent[i]
		info.Recent = append(info.Recent, &wfdv1.ScheduleOutcome{Tick: timestamppb.New(o.Tick), HandlerId: o.HandlerID,
			Kind: outcomeKinds[o.Kind], Reason: o.Reason, At: timestamppb.New(o.At)})
	}
	out.Info = info
	return out, nil
}

func overlapToAPI(o schedule.Overlap) wfdv1.OverlapPolicy {
	for k, v := range overlaps {
		if v == o && k != wfdv1.OverlapPolicy_OVERLAP_POLICY_UNSPECIFIED {
			return k
		}
	}
	return wfdv1.OverlapPolicy_OVERLAP_POLICY_SKIP
}
