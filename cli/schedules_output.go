package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// schedules prints schedules as a table.
func (p *printer) schedules(ss []*wfdv1.Schedule) error {
	if p.json {
		for _, s := range ss {
			if err := p.message(s); err != nil {
				return err
			}
		}
		return nil
	}
	if len(ss) == 0 {
		return p.line("no schedules")
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSPEC\tWORKFLOW\tSTATE\tNEXT\tSTARTED\tSKIPPED\tMISSED\tFAILED")
	for _, s := range ss {
		in := s.GetInfo()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", s.GetScheduleId(), scheduleSpec(s), s.GetAction().GetWorkflow(),
			scheduleState(s), nextTick(in), in.GetStarted(), in.GetSkipped(), in.GetMissed(), in.GetFailed())
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

func scheduleState(s *wfdv1.Schedule) string {
	if s.GetPaused() {
		return "paused"
	}
	return "active"
}

func nextTick(in *wfdv1.ScheduleInfo) string {
	if len(in.GetNextTicks()) == 0 {
		return "-"
	}
	return in.GetNextTicks()[0].AsTime().Format(time.RFC3339)
}

// scheduleDetails prints everything about one schedule.
func (p *printer) scheduleDetails(s *wfdv1.Schedule) error {
	if p.json {
		return p.message(s)
	}
	in := s.GetInfo()
	a := s.GetAction()
	wf := a.GetWorkflow()
	if a.GetVersion() != "" {
		wf += " (version " + a.GetVersion() + ")"
	}
	overlap := strings.ToLower(strings.TrimPrefix(s.GetPolicy().GetOverlap().String(), "OVERLAP_POLICY_"))
	if overlap == "unspecified" {
		overlap = "skip"
	}
	catchup := "1m0s"
	if d := s.GetPolicy().GetCatchupWindow(); d != nil {
		catchup = d.AsDuration().String()
	}
	fs := [][2]string{
		{"schedule", s.GetScheduleId()},
		{"spec", scheduleSpec(s)},
		{"workflow", wf},
		{"state", scheduleState(s)},
		{"overlap", overlap},
		{"catch-up window", catchup},
		{"counts", fmt.Sprintf("%d started, %d skipped, %d missed, %d failed", in.GetStarted(), in.GetSkipped(), in.GetMissed(), in.GetFailed())},
	}
	if s.GetNote() != "" {
		fs = append(fs, [2]string{"note", s.GetNote()})
	}
	if len(a.GetInput().GetFields()) > 0 {
		fs = append(fs, [2]string{"input", jsonText(a.GetInput())})
	}
	for i, t := range in.GetNextTicks() {
		fs = append(fs, [2]string{map[bool]string{true: "next ticks"}[i == 0], t.AsTime().Format(time.RFC3339)})
	}
	for i, h := range in.GetRunning() {
		fs = append(fs, [2]string{map[bool]string{true: "running"}[i == 0], h})
	}
	for i, o := range in.GetRecent() {
		line := fmt.Sprintf("%s %s", o.GetTick().AsTime().Format(time.RFC3339),
			strings.ToLower(strings.TrimPrefix(o.GetKind().String(), "SCHEDULE_OUTCOME_KIND_")))
		if o.GetHandlerId() != "" {
			line += " " + o.GetHandlerId()
		}
		if o.GetReason() != "" {
			line += ": " + o.GetReason()
		}
		fs = append(fs, [2]string{map[bool]string{true: "recent"}[i == 0], line})
	}
	return p.fields(fs)
}
