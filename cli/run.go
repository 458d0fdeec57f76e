package cli

import (
	"context"

	client "github.com/wfd-dev/wfd/clients/go"
)

func runCommand() *command {
	return &command{
		name:    "run",
		args:    "WORKFLOW [--input JSON] [--id ID] [--follow [--internal] | --wait DURATION]",
		summary: "start a handler",
		detail: `Prints the new handler; with --follow, then its records until it ends
(exit status 1 if it fails or is cancelled): the events its steps write
and its end, and with --internal its step runs, idle periods, releases and
restores too. With --wait the call itself waits up to that long for the
handler to finish and prints it then (exit status 1 unless it completed).
With --id the call is idempotent: the same id and workflow return the
existing handler.`,
		minArgs: 1, maxArgs: 1, argWorkflows: true,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			input := fs.String("input", "{}", "the start event's data, a JSON `object`")
			id := fs.String("id", "", "the handler's `id` (default: a new UUIDv7)")
			follows := fs.Bool("follow", false, "stream the handler's records until it ends")
			internal := fs.Bool("internal", false, "with --follow, print the internal records too")
			wait := fs.Duration("wait", 0, "wait up to this `long` (at most 1h) for the handler to finish")
			return func(ctx context.Context, e *env, args []string) error {
				if *wait < 0 {
					return usageErrorf("--wait must not be negative")
				}
				if *wait > 0 && *follows {
					return usageErrorf("--wait and --follow exclude each other")
				}
				if *internal && !*follows {
					return usageErrorf("--internal needs --follow")
				}
				in, err := parseObject("--input", *input)
				if err != nil {
					return err
				}
				opts := []client.RunOption{client.WithInputStruct(in)}
				if *id != "" {
					opts = append(opts, client.WithHandlerID(*id))
				}
				if *wait > 0 {
					opts = append(opts, client.WithWait(*wait))
				}
				return cf.callWaiting(ctx, *wait, func(cctx context.Context, c *client.Client) error {
					h, err := c.Run(cctx, args[0], nil, opts...)
					if err != nil {
						return err
					}
					p := cf.printer(e)
					if *wait > 0 {
						return printWaited(p, h)
					}
					if err := p.handler(h); err != nil {
						return err
					}
					if !*follows {
						return nil
					}
					var sopts []client.StreamOption
					if *internal {
						sopts = append(sopts, client.StreamInternal())
					}
					return follow(ctx, c, p, h.GetHandlerId(), 0, sopts...)
				})
			}
		},
	}
}
