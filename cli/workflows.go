package cli

import (
	"context"

	client "github.com/wfd-dev/wfd/clients/go"
)

func workflowsCommand() *command {
	return &command{
		name:    "workflows",
		summary: "list the workflows the server runs",
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			return func(ctx context.Context, e *env, _ []string) error {
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					ws, err := c.Workflows(cctx)
					if err != nil {
						return err
					}
					return cf.printer(e).workflows(ws)
				})
			}
		},
	}
}
