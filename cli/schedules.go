package cli

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	client "github.com/wfd-dev/wfd/clients/go"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// scheduleActions are the words schedules takes before a schedule id.
func scheduleActions() []string {
	return []string{"create", "update", "pause", "resume", "trigger", "backfill", "delete"}
}

func schedulesCommand() *command {
	return &command{
		name:    "schedules",
		args:    "[ID] | create ID WORKFLOW (--cron EXPR [--tz ZONE] | --every D [--phase D]) [flags] | update ID [flags] | pause ID [--note N] | resume ID | trigger ID | backfill ID --from T --to T | delete ID",
		summary: "list the schedules, show one with its next ticks and recent runs, or manage them",
		detail: `Without arguments lists the schedules: their spec, workflow, state, next
tick and counts. With an ID shows that one: spec, action, policy, its next
ticks, the handlers it started that may still run and its recent
outcomes (started, skipped, missed, failed with the reason, ...).

  create ID WORKFLOW   a schedule that starts WORKFLOW on --cron EXPR (five
      fields or @daily and the like, read in --tz, default UTC) or --every
      D (a fixed interval, shifted by --phase). --input JSON, --version V,
      --overlap skip|buffer_one|allow|cancel_previous (what a tick does
      while an earlier run still runs; default skip), --catchup D (ticks
      older than this after downtime are missed; default 1m), --start T
      and --end T (RFC 3339) bound the ticks, --paused, --note TEXT.
  update ID            changes what the flags given say, keeps the rest.
  pause ID, resume ID  a paused schedule starts nothing; the ticks of the
      pause are not caught up.
  trigger ID           starts a run now.
  backfill ID --from T --to T
      starts the ticks of that past range (at most 1,000); a tick that ran
      already is not run again.
  delete ID            removes the schedule; its handlers go on.

Each tick's handler is named sched:ID:<tick, UTC, YYYYMMDDThhmmssZ>, so a
tick starts one handler whichever replica fires it.`,
		maxArgs: 3, argWords: scheduleActions(),
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			sf := addScheduleFlags(fs)
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 && slices.Contains(scheduleActions(), args[0]) {
					return sf.act(ctx, e, cf, args)
				}
				if len(args) > 1 {
					return usageErrorf("schedules: %q is not an action (there are %s)", args[0], strings.Join(scheduleActions(), ", "))
				}
				if err := sf.unused(fs); err != nil {
					return err
				}
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					p := cf.printer(e)
					if len(args) == 1 {
						s, err := c.GetSchedule(cctx, args[0])
						if err != nil {
							return err
						}
						return p.scheduleDetails(s)
					}
					var all []*wfdv1.Schedule
					for s, err := range c.AllSchedules(cctx) {
						if err != nil {
							return err
						}
						all = append(all, s)
					}
					return p.schedules(all)
				})
			}
		},
	}
}

// scheduleFlags are the flags of schedules' actions.
type scheduleFlags struct {
	cron, tz, input, version, overlap, note, start, end, from, to string
	every, phase, catchup                                         time.Duration
	paused                                                        bool
}

func addScheduleFlags(fs *flagSet) *scheduleFlags {
	f := &scheduleFlags{}
	fs.StringVar(&f.cron, "cron", "", "create, update: fire on this cron `expression` (5 fields, or @daily and the like)")
	fs.StringVar(&f.tz, "tz", "", "create, update: the IANA time `zone` --cron is read in (default UTC)")
	fs.DurationVar(&f.every, "every", 0, "create, update: fire every `interval` (whole seconds) instead of --cron")
	fs.DurationVar(&f.phase, "phase", 0, "create, update: shift --every's ticks by this `long`")
	fs.StringVar(&f.input, "input", "", "create, update: the runs' start event data, a JSON `object`")
	fs.StringVar(&f.version, "version", "", "create, update: run this `version` of the workflow")
	fs.StringVar(&f.overlap, "overlap", "", "create, update: `policy` while a run still runs: skip, buffer_one, allow or cancel_previous")
	fs.DurationVar(&f.catchup, "catchup", 0, "create, update: ticks older than this `window` after downtime are missed (default 1m)")
	fs.StringVar(&f.start, "start", "", "create, update: no tick before this RFC 3339 `time`")
	fs.StringVar(&f.end, "end", "", "create, update: no tick after this RFC 3339 `time`")
	fs.BoolVar(&f.paused, "paused", false, "create: create it paused")
	fs.StringVar(&f.note, "note", "", "create, update, pause: a `note` for people")
	fs.StringVar(&f.from, "from", "", "backfill: the range's first `time` (RFC 3339)")
	fs.StringVar(&f.to, "to", "", "backfill: the range's last `time` (RFC 3339)")
	return f
}

// unused refuses action flags given without an action.
func (f *scheduleFlags) unused(fs *flagSet) error {
	var set []string
	fs.Visit(func(fl *flag.Flag) {
		if slices.Contains([]string{"cron", "tz", "every", "phase", "input", "version", "overlap", "catchup", "start", "end", "paused", "note", "from", "to"}, fl.Name) {
			set = append(set, "--"+fl.Name)
		}
	})
	if len(set) > 0 {
		return usageErrorf("schedules: %s need an action (%s)", strings.Join(set, ", "), strings.Join(scheduleActions(), ", "))
	}
	return nil
}

// act runs an action: args[0] the action, args[1] the schedule id.
func (f *scheduleFlags) act(ctx context.Context, e *env, cf *clientFlags, args []string) error {
	verb := args[0]
	want := map[string]int{"create": 3}[verb]
	if want == 0 {
		want = 2
	}
	if len(args) != want {
		return usageErrorf("schedules %s: wrong number of arguments\nUsage: wfd schedules %s", verb,
			map[bool]string{true: "create ID WORKFLOW (--cron EXPR | --every D) [flags]", false: verb + " ID"}[verb == "create"])
	}
	id := args[1]
	return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
		p := cf.printer(e)
		var s *wfdv1.Schedule
		var err error
		switch verb {
		case "create":
			s = &wfdv1.Schedule{ScheduleId: id, Action: &wfdv1.ScheduleAction{Workflow: args[2]}, Spec: &wfdv1.ScheduleSpec{}, Policy: &wfdv1.SchedulePolicy{}, Paused: f.paused}
			if err := f.apply(s); err != nil {
				return err
			}
			s, err = c.CreateSchedule(cctx, s)
		case "update":
			if s, err = c.GetSchedule(cctx, id); err != nil {
				return err
			}
			if err := f.apply(s); err != nil {
				return err
			}
			s, err = c.UpdateSchedule(cctx, s, s.GetRevision())
		case "pause":
			s, err = c.PauseSchedule(cctx, id, f.note)
		case "resume":
			s, err = c.ResumeSchedule(cctx, id)
		case "trigger", "backfill":
			return f.trigger(cctx, p, c, verb, id)
		case "delete":
			if err := c.DeleteSchedule(cctx, id); err != nil {
				return err
			}
			return p.line("deleted schedule " + id)
		}
		if err != nil {
			return err
		}
		return p.scheduleDetails(s)
	})
}

func (f *scheduleFlags) trigger(ctx context.Context, p *printer, c *client.Client, verb, id string) error {
	var res *wfdv1.TriggerScheduleResponse
	var err error
	if verb == "trigger" {
		res, err = c.TriggerSchedule(ctx, id)
	} else {
		from, ferr := parseTime("--from", f.from)
		to, terr := parseTime("--to", f.to)
		if ferr != nil || terr != nil || from.IsZero() || to.IsZero() {
			return usageErrorf("schedules backfill needs --from and --to (RFC 3339 times)")
		}
		res, err = c.BackfillSchedule(ctx, id, from, to)
	}
	if err != nil {
		return err
	}
	if p.json {
		return p.message(res)
	}
	if len(res.GetStarted()) == 0 {
		return p.line("started nothing (see the schedule's recent outcomes: wfd schedules " + id + ")")
	}
	for _, h := range res.GetStarted() {
		if err := p.line("started " + h); err != nil {
			return err
		}
	}
	return nil
}

// apply sets on s what the flags given say.
func (f *scheduleFlags) apply(s *wfdv1.Schedule) error {
	if s.Spec == nil {
		s.Spec = &wfdv1.ScheduleSpec{}
	}
	if s.Policy == nil {
		s.Policy = &wfdv1.SchedulePolicy{}
	}
	switch {
	case f.cron != "" && f.every != 0:
		return usageErrorf("--cron and --every exclude each other")
	case f.cron != "":
		s.Spec.Cron, s.Spec.Interval, s.Spec.Phase = f.cron, nil, nil
	case f.every != 0:
		s.Spec.Cron, s.Spec.TimeZone, s.Spec.Interval = "", "", durationpb.New(f.every)
	}
	if f.tz != "" {
		s.Spec.TimeZone = f.tz
	}
	if f.phase != 0 {
		s.Spec.Phase = durationpb.New(f.phase)
	}
	for _, t := range []struct {
		flag, val string
		set       **timestamppb.Timestamp
	}{{"--start", f.start, &s.Spec.StartAt}, {"--end", f.end, &s.Spec.EndAt}} {
		if t.val != "" {
			v, err := parseTime(t.flag, t.val)
			if err != nil {
				return err
			}
			*t.set = timestamppb.New(v)
		}
	}
	if f.input != "" {
		in, err := parseObject("--input", f.input)
		if err != nil {
			return err
		}
		s.Action.Input = in
	}
	if f.version != "" {
		s.Action.Version = f.version
	}
	if f.overlap != "" {
		v, ok := wfdv1.OverlapPolicy_value["OVERLAP_POLICY_"+strings.ToUpper(f.overlap)]
		if !ok {
			return usageErrorf("--overlap %q: use skip, buffer_one, allow or cancel_previous", f.overlap)
		}
		s.Policy.Overlap = wfdv1.OverlapPolicy(v)
	}
	if f.catchup != 0 {
		s.Policy.CatchupWindow = durationpb.New(f.catchup)
	}
	if f.note != "" {
		s.Note = f.note
	}
	return nil
}

func parseTime(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usageErrorf("%s %q is not an RFC 3339 time (2026-11-28T12:00:00Z)", flag, s)
	}
	return t, nil
}

// scheduleSpec describes a schedule's spec in a few words.
func scheduleSpec(s *wfdv1.Schedule) string {
	sp := s.GetSpec()
	if sp.GetCron() != "" {
		return fmt.Sprintf("cron %q %s", sp.GetCron(), sp.GetTimeZone())
	}
	out := "every " + sp.GetInterval().AsDuration().String()
	if ph := sp.GetPhase().AsDuration(); ph > 0 {
		out += " +" + ph.String()
	}
	return out
}
