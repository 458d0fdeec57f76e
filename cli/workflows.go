package cli

import "context"

func workflowsCommand() *command {
	return &command{
		name:    "workflows",
		summary: "list the workflows the server runs",
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			return func(ctx context.Context, e *env, _ []string) error {
				c, err := cf.dial()
				if err != nil {
					return err
				}
				defer c.Close()
				cctx, cancel := cf.bound(ctx)
				defer cancel()
				ws, err := c.Workflows(cctx)
				if err != nil {
					return err
				}
				return cf.printer(e).workflows(ws)
			}
		},
	}
}
