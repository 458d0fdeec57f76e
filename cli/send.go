package cli

import (
	"context"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	client "github.com/wfd-dev/wfd/clients/go"
)

func sendCommand() *command {
	return &command{
		name:    "send",
		args:    "HANDLER TYPE [JSON] [--wait DURATION]",
		summary: "send an event to a handler",
		detail: `The event's data is the JSON object (default {}). The type must be one the
workflow accepts from outside or one the handler waits for. Prints the
handler once the event is durable; with --wait, once it finished or that
long has passed (exit status 1 unless it completed).`,
		minArgs: 2, maxArgs: 3,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			wait := fs.Duration("wait", 0, "once the event is durable, wait up to this `long` (at most 1h) for the handler to finish")
			return func(ctx context.Context, e *env, args []string) error {
				if *wait < 0 {
					return usageErrorf("--wait must not be negative")
				}
				raw := "{}"
				if len(args) == 3 {
					raw = args[2]
				}
				data, err := parseObject("JSON", raw)
				if err != nil {
					return err
				}
				opts := []client.SendOption{client.WithDataStruct(data)}
				if *wait > 0 {
					opts = append(opts, client.WithSendWait(*wait))
				}
				return cf.callWaiting(ctx, *wait, func(cctx context.Context, c *client.Client) error {
					h, err := c.Send(cctx, args[0], args[1], nil, opts...)
					if err != nil {
						return err
					}
					if *wait > 0 {
						return printWaited(cf.printer(e), h)
					}
					return cf.printer(e).handler(h)
				})
			}
		},
	}
}

// parseObject parses a JSON object given as what.
func parseObject(what, s string) (*structpb.Struct, error) {
	var out structpb.Struct
	if err := protojson.Unmarshal([]byte(s), &out); err != nil {
		return nil, usageErrorf("%s is not a JSON object: %v", what, err)
	}
	return &out, nil
}
