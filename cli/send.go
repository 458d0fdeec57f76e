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
		args:    "HANDLER TYPE [JSON]",
		summary: "send an event to a handler",
		detail: `The event's data is the JSON object (default {}). The type must be one the
workflow accepts from outside or one the handler waits for. Prints the
handler once the event is durable.`,
		minArgs: 2, maxArgs: 3,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			return func(ctx context.Context, e *env, args []string) error {
				raw := "{}"
				if len(args) == 3 {
					raw = args[2]
				}
				data, err := parseObject("JSON", raw)
				if err != nil {
					return err
				}
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					h, err := c.Send(cctx, args[0], args[1], nil, client.WithDataStruct(data))
					if err != nil {
						return err
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
