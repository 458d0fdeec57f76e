package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

func deleteCommand() *command {
	return &command{
		name:    "delete",
		args:    "HANDLER",
		summary: "delete a finished handler with its stream and tasks",
		detail: `Removes a completed, failed or cancelled handler from the store: its
metadata, stream, checkpoint and tasks, in one commit. A running handler
is refused (cancel it first), and so is a finished child whose parent
still runs. Events published for it stay in the event log. The id may be
used again afterwards.`,
		minArgs: 1, maxArgs: 1,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			return func(ctx context.Context, e *env, args []string) error {
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					if err := c.Delete(cctx, args[0]); err != nil {
						return err
					}
					p := cf.printer(e)
					if p.json {
						return p.message(&wfdv1.DeleteHandlerResponse{})
					}
					return p.line("deleted " + args[0])
				})
			}
		},
	}
}

func eventsCommand() *command {
	return &command{
		name:    "events",
		args:    "[KEY] [--since TIME|DURATION] [--handler H] [--limit N]",
		summary: "list the published-event log, latest first",
		detail: `Lists the events published under KEY (default: every key), latest first.
--since keeps those published at or after a time (RFC 3339, as
2026-11-24T10:00:00Z) or within a duration before now (as 1h); --handler
those published for that handler alone.`,
		maxArgs: 1,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			var o client.PublishedOptions
			since := fs.String("since", "", "only events published at or after this `time` (RFC 3339) or this long ago (a duration)")
			fs.StringVar(&o.HandlerID, "handler", "", "only events published for this `handler` alone")
			limit := fs.Int("limit", 100, "print at most `N` events (0: all)")
			return func(ctx context.Context, e *env, args []string) error {
				if *limit < 0 {
					return usageErrorf("--limit must not be negative")
				}
				if len(args) == 1 {
					o.Key = args[0]
				}
				if *since != "" {
					t, err := parseSince(*since, time.Now())
					if err != nil {
						return err
					}
					o.Since = t
				}
				if *limit > 0 {
					o.PageSize = min(*limit, maxPageSize)
				}
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					var evs []*wfdv1.PublishedEvent
					for ev, err := range c.PublishedEventsAll(cctx, o) {
						if err != nil {
							return err
						}
						evs = append(evs, ev)
						if len(evs) == *limit {
							break
						}
					}
					return cf.printer(e).publishedEvents(evs)
				})
			}
		},
	}
}

// parseSince reads --since: an RFC 3339 time, or a duration before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, usageErrorf("--since %q: want an RFC 3339 time (2026-11-24T10:00:00Z) or a duration (1h)", s)
	}
	return now.Add(-d), nil
}

// publishedEvents prints log entries as a table (JSON: one per line).
func (p *printer) publishedEvents(evs []*wfdv1.PublishedEvent) error {
	if p.json {
		for _, ev := range evs {
			if err := p.message(ev); err != nil {
				return err
			}
		}
		return nil
	}
	if len(evs) == 0 {
		return p.line("no events")
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tPUBLISHED\tKEY\tHANDLER\tBY\tDATA")
	for _, ev := range evs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", ev.GetSeq(), ev.GetPublishedAt().AsTime().Format(time.RFC3339),
			ev.GetKey(), dash(ev.GetHandlerId()), dash(ev.GetPublishedBy()), jsonText(ev.GetData()))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
