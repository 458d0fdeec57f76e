package cli

import (
	"context"

	client "github.com/wfd-dev/wfd/clients/go"
)

func publishCommand() *command {
	return &command{
		name:    "publish",
		args:    "KEY [JSON] [--handler H] [--id ID]",
		summary: "publish an event under a key, waking the handlers that wait for it",
		detail: `Appends an event with the JSON object as its data (default {}) to the
server's event log under KEY, and wakes the handlers waiting for the key,
in memory or released (with --handler, only that one sees the event).
Prints the event's position in the log and how many handlers woke. With
--id the call is idempotent: the same id again publishes nothing.`,
		minArgs: 1, maxArgs: 2,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			handler := fs.String("handler", "", "publish for this `handler` only")
			id := fs.String("id", "", "the event's `id` (default: a new UUIDv7)")
			return func(ctx context.Context, e *env, args []string) error {
				raw := "{}"
				if len(args) == 2 {
					raw = args[1]
				}
				data, err := parseObject("JSON", raw)
				if err != nil {
					return err
				}
				opts := []client.PublishOption{client.WithPublishDataStruct(data)}
				if *handler != "" {
					opts = append(opts, client.WithPublishHandler(*handler))
				}
				if *id != "" {
					opts = append(opts, client.WithEventID(*id))
				}
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					res, err := c.Publish(cctx, args[0], nil, opts...)
					if err != nil {
						return err
					}
					return cf.printer(e).published(args[0], res)
				})
			}
		},
	}
}

func statsCommand() *command {
	return &command{
		name:    "stats",
		summary: "show the server's handler counts and counters",
		detail: `Active handlers are running ones in memory (busy or idle); released ones
are idle handlers written to the store and dropped from memory. The
counters (releases, rehydrations, commits) count since the server started.`,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			return func(ctx context.Context, e *env, _ []string) error {
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					s, err := c.Stats(cctx)
					if err != nil {
						return err
					}
					return cf.printer(e).stats(s)
				})
			}
		},
	}
}
