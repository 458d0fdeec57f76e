package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	client "github.com/wfd-dev/wfd/clients/go"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

func replicasCommand() *command {
	return &command{
		name:    "replicas",
		summary: "list the live replicas sharing the server's database",
		detail: `Lists the live replicas (wfd serve --replica-id) registered in the
server's PostgreSQL database: id, the address they advertise, when they
started and when their registration expires unless renewed. A server that
is not in replica mode lists none.`,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			return func(ctx context.Context, e *env, _ []string) error {
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					rs, err := c.Replicas(cctx)
					if err != nil {
						return err
					}
					return printReplicas(cf.printer(e), rs)
				})
			}
		},
	}
}

// printReplicas prints the replicas: one JSON object each with --json,
// else a table (or a line saying there are none).
func printReplicas(p *printer, rs []*wfdv1.Replica) error {
	if p.json {
		for _, r := range rs {
			if err := p.message(r); err != nil {
				return err
			}
		}
		return nil
	}
	if len(rs) == 0 {
		return p.line("no replicas (the server is not in replica mode)")
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tADDRESS\tSTARTED\tEXPIRES")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.GetId(), r.GetAddress(), timeText(r.GetStartedAt()), timeText(r.GetExpiresAt()))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
