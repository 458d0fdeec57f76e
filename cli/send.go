package cli

import (
	"context"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	client "github.com/wfd-dev/wfd/clients/go"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

func sendCommand() *command {
	return &command{
		name:    "send",
		args:    "HANDLER TYPE [JSON] [--wait DURATION] [--key KEY] [--start WORKFLOW [--input JSON] [--version V]]",
		summary: "send an event to a handler",
		detail: `The event's data is the JSON object (default {}). The type must be one the
workflow accepts from outside or one the handler waits for. Prints the
handler once the event is durable; with --wait, once it finished or that
long has passed (exit status 1 unless it completed).
With --start, if no handler has the id yet, one of WORKFLOW is started
with --input and the event in the commit that creates it (a handler that
exists gets the event as without --start; one of another workflow is
refused). With --key a retried send delivers the event once.`,
		minArgs: 2, maxArgs: 3,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			var f sendFlags
			fs.DurationVar(&f.wait, "wait", 0, "once the event is durable, wait up to this `long` (at most 1h) for the handler to finish")
			fs.StringVar(&f.key, "key", "", "the idempotency `key` (default: a new UUIDv7)")
			fs.StringVar(&f.start, "start", "", "start a handler of this `workflow` with the event if none has the id")
			fs.StringVar(&f.input, "input", "", "with --start, the start event's data, a JSON `object` (default {})")
			fs.StringVar(&f.version, "version", "", "with --start, run this `version` of the workflow (default: the current one)")
			return func(ctx context.Context, e *env, args []string) error {
				opts, err := f.sendOptions(args)
				if err != nil {
					return err
				}
				return cf.callWaiting(ctx, f.wait, func(cctx context.Context, c *client.Client) error {
					var h *wfdv1.Handler
					var err error
					if f.start != "" {
						h, _, err = c.SendOrStart(cctx, args[0], f.start, nil, args[1], nil, opts...)
					} else {
						h, err = c.Send(cctx, args[0], args[1], nil, opts...)
					}
					if err != nil {
						return err
					}
					if f.wait > 0 {
						return printWaited(cf.printer(e), h)
					}
					return cf.printer(e).handler(h)
				})
			}
		},
	}
}

// sendFlags are send's own flags, beside the client's.
type sendFlags struct {
	wait                       time.Duration
	key, start, input, version string
}

// sendOptions checks the flags and the event's JSON (args[2]) and turns
// them into the Send (or SendOrStart) call's options.
func (f *sendFlags) sendOptions(args []string) ([]client.SendOption, error) {
	if f.wait < 0 {
		return nil, usageErrorf("--wait must not be negative")
	}
	if f.start == "" && (f.input != "" || f.version != "") {
		return nil, usageErrorf("--input and --version need --start")
	}
	raw := "{}"
	if len(args) == 3 {
		raw = args[2]
	}
	data, err := parseObject("JSON", raw)
	if err != nil {
		return nil, err
	}
	opts := []client.SendOption{client.WithDataStruct(data)}
	if f.wait > 0 {
		opts = append(opts, client.WithSendWait(f.wait))
	}
	if f.key != "" {
		opts = append(opts, client.WithIdempotencyKey(f.key))
	}
	if f.start != "" {
		in := &structpb.Struct{}
		if f.input != "" {
			if in, err = parseObject("--input", f.input); err != nil {
				return nil, err
			}
		}
		opts = append(opts, client.WithStartInput(in))
		if f.version != "" {
			opts = append(opts, client.WithStartVersion(f.version))
		}
	}
	return opts, nil
}

// parseObject parses a JSON object given as what.
func parseObject(what, s string) (*structpb.Struct, error) {
	var out structpb.Struct
	if err := protojson.Unmarshal([]byte(s), &out); err != nil {
		return nil, usageErrorf("%s is not a JSON object: %v", what, err)
	}
	return &out, nil
}
