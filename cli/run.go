package cli

import (
	"context"

	client "github.com/wfd-dev/wfd/clients/go"
)

func runCommand() *command {
	return &command{
		name:    "run",
		args:    "WORKFLOW [--input JSON] [--id ID] [--follow]",
		summary: "start a handler",
		detail: `Prints the new handler; with --follow, then its records until it ends
(exit status 1 if it fails or is cancelled). With --id the call is
idempotent: the same id and workflow return the existing handler.`,
		minArgs: 1, maxArgs: 1, argWorkflows: true,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			input := fs.String("input", "{}", "the start event's data, a JSON `object`")
			id := fs.String("id", "", "the handler's `id` (default: a new UUIDv7)")
			follows := fs.Bool("follow", false, "stream the handler's records until it ends")
			return func(ctx context.Context, e *env, args []string) error {
				in, err := parseObject("--input", *input)
				if err != nil {
					return err
				}
				opts := []client.RunOption{client.WithInputStruct(in)}
				if *id != "" {
					opts = append(opts, client.WithHandlerID(*id))
				}
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					h, err := c.Run(cctx, args[0], nil, opts...)
					if err != nil {
						return err
					}
					p := cf.printer(e)
					if err := p.handler(h); err != nil {
						return err
					}
					if !*follows {
						return nil
					}
					return follow(ctx, c, p, h.GetHandlerId(), 0)
				})
			}
		},
	}
}
