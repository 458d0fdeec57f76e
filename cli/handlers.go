package cli

import (
	"context"
	"fmt"
	"strings"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

// maxPageSize is the largest page the server returns.
const maxPageSize = 1000

func getCommand() *command {
	return &command{
		name:    "get",
		args:    "HANDLER [--at SEQ]",
		summary: "show a handler (or look back at it as it stood at a record)",
		detail: `Shows the handler now. With --at SEQ, shows it as its stream shows it at
record SEQ (wfd stream --internal numbers them): its status, what it
waited for then, each step's runs, and the events written so far. Read
from the stream, not re-executed; finished and released handlers too.`,
		minArgs: 1, maxArgs: 1,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			atSeq := fs.Uint64("at", 0, "look back at record `SEQ` of the handler's stream")
			return func(ctx context.Context, e *env, args []string) error {
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					if *atSeq != 0 {
						_, at, err := c.GetAt(cctx, args[0], *atSeq)
						if err != nil {
							return err
						}
						p := cf.printer(e)
						if p.json {
							return p.message(at)
						}
						return p.fields(handlerAtFields(at))
					}
					h, err := c.Get(cctx, args[0])
					if err != nil {
						return err
					}
					return cf.printer(e).handlerDetails(h)
				})
			}
		},
	}
}

func handlersCommand() *command {
	return &command{
		name:    "handlers",
		args:    "[--workflow W] [--version V] [--status S,...] [--idle] [--idle-for D] [--residency active|released] [--where QUERY] [--limit N]",
		summary: "list handlers, newest first",
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			var o client.ListOptions
			fs.StringVar(&o.Workflow, "workflow", "", "only handlers of this `workflow`")
			fs.StringVar(&o.WorkflowVersion, "version", "", "only handlers of this `version` of --workflow")
			fs.Func("status", "only handlers with one of these `statuses`: running, queued, completed, failed, cancelled (comma-separated)", func(s string) error {
				st, err := parseStatuses(s)
				o.Statuses = st
				return err
			})
			fs.BoolVar(&o.IdleOnly, "idle", false, "only idle handlers")
			fs.DurationVar(&o.IdleFor, "idle-for", 0, "only handlers idle for at least this `duration` (implies --idle)")
			residency := choice{choices: []string{"", "active", "released"}}
			fs.Var(&residency, "residency", "only handlers with this `residency`: active (in memory) or released")
			fs.StringVar(&o.Where, "where", "", "only handlers this `query` matches, in its order: "+
				`customer = "acme" and amount > 100 order by amount desc (attributes need --workflow)`)
			limit := fs.Int("limit", 100, "print at most `N` handlers (0: all)")
			return func(ctx context.Context, e *env, _ []string) error {
				if *limit < 0 || o.IdleFor < 0 {
					return usageErrorf("--limit and --idle-for must not be negative")
				}
				if o.WorkflowVersion != "" && o.Workflow == "" {
					return usageErrorf("--version needs --workflow")
				}
				switch residency.value {
				case "active":
					o.Residency = wfdv1.Residency_RESIDENCY_ACTIVE
				case "released":
					o.Residency = wfdv1.Residency_RESIDENCY_RELEASED
				}
				if *limit > 0 {
					o.PageSize = min(*limit, maxPageSize)
				}
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					var hs []*wfdv1.Handler
					for h, err := range c.ListAll(cctx, o) {
						if err != nil {
							return err
						}
						hs = append(hs, h)
						if len(hs) == *limit {
							break
						}
					}
					return cf.printer(e).handlers(hs)
				})
			}
		},
	}
}

// parseStatuses parses "running,completed".
func parseStatuses(s string) ([]wfdv1.HandlerStatus, error) {
	var out []wfdv1.HandlerStatus
	for name := range strings.SplitSeq(s, ",") {
		v, ok := wfdv1.HandlerStatus_value["HANDLER_STATUS_"+strings.ToUpper(strings.TrimSpace(name))]
		if !ok || v == int32(wfdv1.HandlerStatus_HANDLER_STATUS_UNSPECIFIED) {
			return nil, fmt.Errorf("unknown status %q (want running, queued, completed, failed or cancelled)", name)
		}
		out = append(out, wfdv1.HandlerStatus(v))
	}
	return out, nil
}

// anyOwner reports whether some handler of hs is owned by a replica: only
// then does the handlers table have an OWNER column (a single process has
// no owners).
func anyOwner(hs []*wfdv1.Handler) bool {
	for _, h := range hs {
		if h.GetOwner() != "" {
			return true
		}
	}
	return false
}

// ownerColumn is the OWNER cell (or heading) v, none if v is "", and its
// separator; nothing without the column.
func ownerColumn(on bool, v, none string) string {
	switch {
	case !on:
		return ""
	case v == "":
		return none + "\t"
	}
	return v + "\t"
}
