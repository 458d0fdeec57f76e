package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
)

// --compare-stores URL runs the phases with the workflows in the server on
// bbolt and on PostgreSQL with each of --compare-replicas (0: one server
// not in replica mode; N: N replicas, replicas.go), one after another,
// --rounds times, every PostgreSQL run on a new database that it creates
// through URL and drops afterwards. Alternating the stores within a round
// spreads the machine's drift (other load, thermal, the page cache) over
// all of them rather than onto one; the table prints every run.

// compareRun is one run of a --compare-stores round.
type compareRun struct {
	Round    int    `json:"round"`
	Store    string `json:"store"`    // "bbolt" or "postgres"
	Replicas int    `json:"replicas"` // with postgres: 0 one server, N replicas
	modeResult
}

func (c *compareRun) label() string {
	switch {
	case c.Store == "bbolt":
		return "bbolt"
	case c.Replicas == 0:
		return "postgres"
	case c.Replicas == 1:
		return "postgres, 1 replica"
	}
	return fmt.Sprintf("postgres, %d replicas", c.Replicas)
}

// runCompare runs the rounds into res.Compare, logging progress to log.
func runCompare(ctx context.Context, cfg config, res *Result, log io.Writer) error {
	for round := 1; round <= cfg.Rounds; round++ {
		runs := []*compareRun{{Round: round, Store: "bbolt"}}
		for _, n := range cfg.CompareReplicas {
			runs = append(runs, &compareRun{Round: round, Store: "postgres", Replicas: n})
		}
		for _, r := range runs {
			fmt.Fprintf(log, "wfd bench: round %d of %d: %s\n", round, cfg.Rounds, r.label())
			res.Compare = append(res.Compare, r)
			rcfg := cfg
			rcfg.Store, rcfg.Replicas = "", r.Replicas
			var drop func() error
			if r.Store == "postgres" {
				db, d, err := createDatabase(ctx, cfg.Compare)
				if err != nil {
					return fmt.Errorf("--compare-stores: %w", err)
				}
				rcfg.Store, drop = db, d
			}
			err := runMode(ctx, rcfg, "", &r.modeResult, nil)
			if drop != nil {
				err = errors.Join(err, drop())
			}
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round, r.label(), err)
			}
		}
	}
	return nil
}

// createDatabase creates a new database through the server at admin (a
// postgres:// URL of a role that may CREATE DATABASE) and returns its URL
// and how to drop it.
func createDatabase(ctx context.Context, admin string) (string, func() error, error) {
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, fmt.Errorf("%q is not a postgres:// URL", admin)
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, err
	}
	defer func() { _ = conn.Close(ctx) }()
	name := fmt.Sprintf("wfd_bench_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("creating a database for the run: %w", err)
	}
	u.Path = "/" + name
	drop := func() error {
		// Its own context: the run's may have ended, the database must go.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return fmt.Errorf("dropping database %s: %w", name, err)
		}
		defer func() { _ = conn.Close(ctx) }()
		if _, err := conn.Exec(ctx, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("dropping database %s: %w", name, err)
		}
		return nil
	}
	return u.String(), drop, nil
}

// writeCompareTable prints one row per run of --compare-stores.
func writeCompareTable(w io.Writer, res *Result) {
	c := res.Config
	fmt.Fprintf(w, "wfd bench --compare-stores: n=%d c=%d echo=%d conns=%d client=%s protocol=%s fsync=%s route=%s, %d round(s)\n\n",
		c.N, c.C, c.Echo, c.Conns, c.Client, c.Protocol, c.Fsync, c.Route, c.Rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "round\tstore\tparks/s\tpark p99 ms\tresumes/s\tresume p99 ms\tcommits/s park, resume\tchanges/commit park, resume\twfd CPU µs/park, /resume\tPostgreSQL CPU µs/park, /resume\tresumes forwarded\tsteal %\t\n")
	for _, r := range res.Compare {
		p, q := r.Park, r.Resume
		if p == nil || q == nil {
			fmt.Fprintf(tw, "%d\t%s\t(incomplete)\t\t\t\t\t\t\t\t\t\t\n", r.Round, r.label())
			continue
		}
		fwd := "-"
		if r.Replicas > 1 {
			fwd = fmt.Sprintf("%d %%", 100*q.ThroughOtherReplica/max(q.Count, 1))
		}
		fmt.Fprintf(tw, "%d\t%s\t%.0f\t%.1f\t%.0f\t%.1f\t%s, %s\t%s, %s\t%s, %s\t%s, %s\t%s\t%s\t\n",
			r.Round, r.label(), p.PerSecond, p.Latency.P99, q.PerSecond, q.Latency.P99,
			commitRate(p), commitRate(q), perCommit(p), perCommit(q),
			cpu(p.ServerCPUSeconds, p.ServerCPUPerOp), cpu(q.ServerCPUSeconds, q.ServerCPUPerOp),
			cpu(p.PostgresCPUSeconds, p.PostgresCPUPerOp), cpu(q.PostgresCPUSeconds, q.PostgresCPUPerOp),
			fwd, stealOf(p, q))
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\nwfd CPU and the counters are summed over a run's replicas; PostgreSQL CPU is the whole server's (postmaster and backends).")
}

func commitRate(p *phaseResult) string {
	if p.Server == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(p.Server.Commits)/p.WallSeconds)
}

func perCommit(p *phaseResult) string {
	if p.Server == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", ratio(p.Server.Changes, p.Server.Commits))
}

// stealOf is the steal of each phase that measured it.
func stealOf(ps ...*phaseResult) string {
	var parts []string
	for _, p := range ps {
		if p.StealPercent != nil {
			parts = append(parts, fmt.Sprintf("%.0f", *p.StealPercent))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
