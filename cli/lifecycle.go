package cli

import (
	"context"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

func cancelCommand() *command {
	return handlerCommand("cancel", "cancel a running handler", (*client.Client).Cancel)
}

func releaseCommand() *command {
	return handlerCommand("release", "write an idle handler to the store and drop it from memory", (*client.Client).Release)
}

// handlerCommand is a command that calls fn on one handler and prints it.
func handlerCommand(name, summary string, fn func(*client.Client, context.Context, string) (*wfdv1.Handler, error)) *command {
	return &command{
		name:    name,
		args:    "HANDLER",
		summary: summary,
		minArgs: 1, maxArgs: 1,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			return func(ctx context.Context, e *env, args []string) error {
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					h, err := fn(c, cctx, args[0])
					if err != nil {
						return err
					}
					return cf.printer(e).handler(h)
				})
			}
		},
	}
}
