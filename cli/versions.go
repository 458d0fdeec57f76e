package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

// versionActions are the first arguments of `wfd workflows` that, with
// more arguments after them, act on a workflow's versions.
func versionActions() []string { return []string{"upgrade", "promote", "delete-version"} }

// upgradeFlags are `wfd workflows upgrade`'s own flags.
type upgradeFlags struct {
	fs       *flagSet
	from     string
	opts     client.UpgradeOptions
	pageSize int
}

// upgradeFlagNames are the flags only upgrade takes.
var upgradeFlagNames = []string{"from", "to", "handler", "dry-run", "page-size"}

func addUpgradeFlags(fs *flagSet) *upgradeFlags {
	f := &upgradeFlags{fs: fs}
	fs.StringVar(&f.from, "from", "", "upgrade: move the handlers of this `version`")
	fs.StringVar(&f.opts.To, "to", "", "upgrade: move them to this `version` (default: the current one)")
	fs.Func("handler", "upgrade: move only this handler `id` (repeatable)", func(s string) error {
		f.opts.HandlerIDs = append(f.opts.HandlerIDs, s)
		return nil
	})
	fs.BoolVar(&f.opts.DryRun, "dry-run", false, "upgrade: report which handlers can move; move none")
	fs.IntVar(&f.pageSize, "page-size", 0, "upgrade: move `N` handlers per call, at most 1000 (0: the server's 100)")
	return f
}

// unused fails with a usage error if one of upgrade's flags was given to
// what (not an upgrade).
func (f *upgradeFlags) unused(what string) error {
	var set []string
	f.fs.Visit(func(fl *flag.Flag) {
		for _, n := range upgradeFlagNames {
			if fl.Name == n {
				set = append(set, "--"+n)
			}
		}
	})
	if len(set) > 0 {
		return usageErrorf("%s does not take %s (only 'wfd workflows upgrade' does)", what, strings.Join(set, ", "))
	}
	return nil
}

// versionAction runs `wfd workflows ACTION WORKFLOW ...`.
func versionAction(ctx context.Context, e *env, cf *clientFlags, up *upgradeFlags, args []string) error {
	name, rest := args[0], args[1:]
	want, usage := 2, "wfd workflows "+name+" WORKFLOW VERSION"
	if name == "upgrade" {
		want, usage = 1, "wfd workflows upgrade WORKFLOW --from V [--to V] [--handler ID]... [--dry-run] [--page-size N]"
	}
	if len(rest) != want {
		return usageErrorf("workflows %s: wrong number of arguments\nUsage: %s", name, usage)
	}
	switch name {
	case "upgrade":
		if up.from == "" {
			return usageErrorf("workflows upgrade: --from is required\nUsage: %s", usage)
		}
		return upgrade(ctx, e, cf, up, rest[0])
	case "promote":
		if err := up.unused("workflows " + name); err != nil {
			return err
		}
		return promote(ctx, e, cf, rest[0], rest[1])
	default: // delete-version
		if err := up.unused("workflows " + name); err != nil {
			return err
		}
		return deleteVersion(ctx, e, cf, rest[0], rest[1])
	}
}

// upgrade moves (or with --dry-run checks) the handlers of --from, prints
// each outcome and the counts, and fails if a real upgrade left some.
func upgrade(ctx context.Context, e *env, cf *clientFlags, up *upgradeFlags, workflow string) error {
	if up.pageSize < 0 || up.pageSize > maxPageSize {
		return usageErrorf("--page-size must be between 0 and %d", maxPageSize)
	}
	up.opts.PageSize = int32(up.pageSize)
	p := cf.printer(e)
	return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
		hs, err := c.Upgrade(cctx, workflow, up.from, up.opts)
		if err != nil {
			// What the pages before the error did.
			if len(hs) > 0 {
				_ = p.upgrades(hs)
			}
			return err
		}
		if err := p.upgrades(hs); err != nil {
			return err
		}
		return upgradeError(hs, up.opts.DryRun)
	})
}

// promote makes version current and prints the workflow's current version.
func promote(ctx context.Context, e *env, cf *clientFlags, workflow, version string) error {
	return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
		w, err := c.SetCurrentVersion(cctx, workflow, version)
		if err != nil {
			return err
		}
		p := cf.printer(e)
		if p.json {
			return p.message(w)
		}
		return p.line(fmt.Sprintf("%s: current version %s", w.GetName(), w.GetVersion()))
	})
}

// deleteVersion deletes an unused version of a worker-defined workflow.
func deleteVersion(ctx context.Context, e *env, cf *clientFlags, workflow, version string) error {
	return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
		if err := c.DeleteVersion(cctx, workflow, version); err != nil {
			return err
		}
		p := cf.printer(e)
		if p.json {
			return p.message(&wfdv1.DeleteWorkflowVersionResponse{})
		}
		return p.line("deleted " + workflow + "@" + version)
	})
}

// errNotAllUpgraded ends a real upgrade that left handlers where they
// were (the summary says how many): exit status 1.
var errNotAllUpgraded = errors.New("not every handler moved")

// upgradeError is an error naming the counts if a real upgrade refused a
// handler or found one busy; a dry run only reports.
func upgradeError(hs []*wfdv1.HandlerUpgrade, dryRun bool) error {
	if dryRun {
		return nil
	}
	n := upgradeCounts(hs)
	refused, busy := n[wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_REFUSED], n[wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_BUSY]
	if refused+busy == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d refused, %d busy", errNotAllUpgraded, refused, busy)
}

// upgradeOutcomes is the order the summary counts outcomes in.
var upgradeOutcomes = []wfdv1.UpgradeOutcome{
	wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_CAN_MOVE,
	wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_MOVED,
	wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_REFUSED,
	wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_BUSY,
}

// outcomeText is an upgrade outcome for people: can move, moved, refused,
// busy.
func outcomeText(o wfdv1.UpgradeOutcome) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(o.String(), "UPGRADE_OUTCOME_")), "_", " ")
}

func upgradeCounts(hs []*wfdv1.HandlerUpgrade) map[wfdv1.UpgradeOutcome]int {
	n := map[wfdv1.UpgradeOutcome]int{}
	for _, h := range hs {
		n[h.GetOutcome()]++
	}
	return n
}

// upgradeSummary counts the outcomes: "812 can move, 100 refused", "812
// moved, 100 refused, 3 busy: retry those once they are idle".
func upgradeSummary(hs []*wfdv1.HandlerUpgrade) string {
	if len(hs) == 0 {
		return "no running handlers of that version"
	}
	n := upgradeCounts(hs)
	var parts []string
	for _, o := range upgradeOutcomes {
		if n[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[o], outcomeText(o)))
		}
	}
	s := strings.Join(parts, ", ")
	if n[wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_BUSY] > 0 {
		s += ": retry those once they are idle"
	}
	return s
}

// upgrades prints what an upgrade did to each handler, then the counts.
func (p *printer) upgrades(hs []*wfdv1.HandlerUpgrade) error {
	if p.json {
		for _, h := range hs {
			if err := p.message(h); err != nil {
				return err
			}
		}
		return nil
	}
	if len(hs) > 0 {
		tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "HANDLER\tOUTCOME\tREASON")
		for _, h := range hs {
			reason := h.GetReason()
			if reason == "" {
				reason = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", h.GetHandlerId(), outcomeText(h.GetOutcome()), reason)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	return p.line(upgradeSummary(hs))
}

// versions prints a workflow's versions as a table.
func (p *printer) versions(vs []*wfdv1.WorkflowVersion) error {
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tCURRENT\tSOURCE\tWORKERS\tRUNNING\tRELEASED\tFINISHED\tCREATED")
	for _, v := range vs {
		current := "-"
		if v.GetCurrent() {
			current = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", v.GetVersion(), current, versionSourceText(v), versionWorkersText(v),
			v.GetRunning(), v.GetReleased(), v.GetFinished(), timeText(v.GetCreatedAt()))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// versionSourceText is who made a version: "built in", or the worker that
// registered it.
func versionSourceText(v *wfdv1.WorkflowVersion) string {
	switch {
	case v.GetBuiltIn():
		return "built in"
	case v.GetSource() == "":
		return "-"
	}
	return v.GetSource()
}

// maxWorkerNames is how many workers' names the versions table spells
// out; more are counted.
const maxWorkerNames = 3

// versionWorkersText is the connected workers serving a version: their
// names, "5 workers", or "-".
func versionWorkersText(v *wfdv1.WorkflowVersion) string {
	n := max(int(v.GetWorkersConnected()), len(v.GetWorkers()))
	switch {
	case n == 0:
		return "-"
	case len(v.GetWorkers()) == n && n <= maxWorkerNames:
		return strings.Join(v.GetWorkers(), ",")
	}
	return fmt.Sprintf("%d %s", n, plural(n, "worker", "workers"))
}
