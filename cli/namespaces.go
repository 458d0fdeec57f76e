package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	client "github.com/wfd-dev/wfd/clients/go"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

func namespacesCommand() *command {
	return &command{
		name:    "namespaces",
		summary: "list the namespaces the server serves where the caller holds a role",
		detail: `Lists the namespaces the server serves (wfd serve --namespace) where the
caller holds a role, with their retention and the caller's roles there.
Every command names its namespace with --namespace (or WFD_NAMESPACE);
without it, "default".`,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			return func(ctx context.Context, e *env, _ []string) error {
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					ns, err := c.ListNamespaces(cctx)
					if err != nil {
						return err
					}
					return printNamespaces(cf.printer(e), ns)
				})
			}
		},
	}
}

// printNamespaces prints ns as a table, or one protojson object each.
func printNamespaces(p *printer, ns []*wfdv1.Namespace) error {
	if p.json {
		for _, n := range ns {
			if err := p.message(n); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tRETENTION\tYOUR ROLES")
	for _, n := range ns {
		retention := "forever"
		if n.GetRetention() != nil {
			retention = n.GetRetention().AsDuration().String()
		}
		roles := strings.Join(n.GetRoles(), ", ")
		if roles == "" {
			roles = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n.GetName(), retention, roles)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
