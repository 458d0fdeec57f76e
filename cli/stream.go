package cli

import (
	"context"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

func streamCommand() *command {
	return &command{
		name:    "stream",
		args:    "HANDLER [--after N]",
		summary: "print a handler's records until it ends",
		detail: `Prints the records after --after, then new ones as they happen, one per
line, and returns after the terminal one (exit status 1 if the handler
failed or was cancelled). A dropped connection is resumed where it broke.`,
		minArgs: 1, maxArgs: 1,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			after := fs.Uint64("after", 0, "print records after this sequence `number`")
			return func(ctx context.Context, e *env, args []string) error {
				c, err := cf.dial()
				if err != nil {
					return err
				}
				defer func() { _ = c.Close() }()
				return follow(ctx, c, cf.printer(e), args[0], *after)
			}
		},
	}
}

// follow prints the handler's records until the terminal one, and fails
// with errHandlerUnsuccessful if it is not completed.
func follow(ctx context.Context, c *client.Client, p *printer, id string, after uint64) error {
	for rec, err := range c.Stream(ctx, id, after) {
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
