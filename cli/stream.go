package cli

import (
	"context"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

func streamCommand() *command {
	return &command{
		name:    "stream",
		args:    "HANDLER [--after N | --from-head] [--internal]",
		summary: "print a handler's records until it ends",
		detail: `Prints the records after --after (or, with --from-head, only those made
from now on), then new ones as they happen, one per line, and returns after
the terminal one (exit status 1 if the handler failed or was cancelled).
By default it prints the events the steps write and the end; --internal
adds the internal records: step runs, idle periods, releases and restores,
runs waiting for a worker, upgrades to another version of the workflow. A dropped connection is resumed where it broke,
with the same choices.`,
		minArgs: 1, maxArgs: 1,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			after := fs.Uint64("after", 0, "print records after this sequence `number`")
			fromHead := fs.Bool("from-head", false, "print only records made from now on (not with --after)")
			internal := fs.Bool("internal", false, "print the internal records too (step runs, idle, release, restore, upgrade)")
			return func(ctx context.Context, e *env, args []string) error {
				if *fromHead && *after != 0 {
					return usageErrorf("--from-head and --after exclude each other")
				}
				var opts []client.StreamOption
				if *fromHead {
					opts = append(opts, client.StreamFromHead())
				}
				if *internal {
					opts = append(opts, client.StreamInternal())
				}
				c, err := cf.dial()
				if err != nil {
					return err
				}
				defer func() { _ = c.Close() }()
				return follow(ctx, c, cf.printer(e), args[0], *after, opts...)
			}
		},
	}
}

// follow prints the handler's records until the terminal one, and fails
// with errHandlerUnsuccessful if it is not completed.
func follow(ctx context.Context, c *client.Client, p *printer, id string, after uint64, opts ...client.StreamOption) error {
	for rec, err := range c.Stream(ctx, id, after, opts...) {
		if err != nil {
			return err
		}
		if err := p.record(rec); err != nil {
			return err
		}
		if f := rec.GetHandlerFinished(); f != nil && f.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
			return errHandlerUnsuccessful
		}
	}
	return nil
}
