package cli

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	client "github.com/wfd-dev/wfd/clients/go"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

func runCommand() *command {
	return &command{
		name:    "run",
		args:    "WORKFLOW [--input JSON] [--event TYPE[=JSON]]... [--attrs JSON] [--id ID] [--follow [--internal] | --wait DURATION] [--version V]",
		summary: "start a handler",
		detail: `Prints the new handler; with --follow, then its records until it ends
(exit status 1 if it fails or is cancelled): the events its steps write
and its end, and with --internal its step runs, idle periods, releases and
restores too. With --wait the call itself waits up to that long for the
handler to finish and prints it then (exit status 1 unless it completed).
With --id the call is idempotent: the same id and workflow return the
existing handler. With --version the handler runs that version of the
workflow ('wfd workflows WORKFLOW' lists them) rather than the current one.
Each --event is delivered after the start event, in order, in the commit
that creates the handler: TYPE=JSON, or TYPE alone for {} (a type the
workflow accepts from outside; a repeat with the same --id delivers none
again). --attrs gives the handler search attributes, a JSON object of
attributes the workflow declares ('wfd workflows WORKFLOW' lists them),
e.g. {"customer": "acme", "amount": 120, "tags": ["eu"]}.`,
		minArgs: 1, maxArgs: 1, argWorkflows: true,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			var f runFlags
			fs.StringVar(&f.input, "input", "{}", "the start event's data, a JSON `object`")
			fs.StringVar(&f.id, "id", "", "the handler's `id` (default: a new UUIDv7)")
			fs.StringVar(&f.version, "version", "", "run this `version` of the workflow (default: the current one)")
			fs.StringVar(&f.attrs, "attrs", "", "the handler's search attributes, a JSON `object`")
			fs.Var(&f.events, "event", "`TYPE[=JSON]`: deliver this event with the start, in the same commit; repeatable")
			fs.BoolVar(&f.follow, "follow", false, "stream the handler's records until it ends")
			fs.BoolVar(&f.internal, "internal", false, "with --follow, print the internal records too")
			fs.DurationVar(&f.wait, "wait", 0, "wait up to this `long` (at most 1h) for the handler to finish")
			return func(ctx context.Context, e *env, args []string) error {
				opts, err := f.runOptions()
				if err != nil {
					return err
				}
				return cf.callWaiting(ctx, f.wait, func(cctx context.Context, c *client.Client) error {
					h, err := c.Run(cctx, args[0], nil, opts...)
					if err != nil {
						return err
					}
					return f.print(ctx, c, cf.printer(e), h)
				})
			}
		},
	}
}

// runFlags are run's own flags, beside the client's.
type runFlags struct {
	input, id        string
	version, attrs   string
	events           eventsFlag
	follow, internal bool
	wait             time.Duration
}

// runOptions checks the flags against each other and turns them into the
// Run call's options.
func (f *runFlags) runOptions() ([]client.RunOption, error) {
	if f.wait < 0 {
		return nil, usageErrorf("--wait must not be negative")
	}
	if f.wait > 0 && f.follow {
		return nil, usageErrorf("--wait and --follow exclude each other")
	}
	if f.internal && !f.follow {
		return nil, usageErrorf("--internal needs --follow")
	}
	in, err := parseObject("--input", f.input)
	if err != nil {
		return nil, err
	}
	opts := []client.RunOption{client.WithInputStruct(in)}
	if f.id != "" {
		opts = append(opts, client.WithHandlerID(f.id))
	}
	if f.version != "" {
		opts = append(opts, client.WithVersion(f.version))
	}
	if f.wait > 0 {
		opts = append(opts, client.WithWait(f.wait))
	}
	if len(f.events) > 0 {
		opts = append(opts, client.WithEvents(f.events...))
	}
	if f.attrs != "" {
		a, err := parseObject("--attrs", f.attrs)
		if err != nil {
			return nil, err
		}
		opts = append(opts, client.WithAttributes(a))
	}
	return opts, nil
}

// eventsFlag is a repeatable --event TYPE[=JSON].
type eventsFlag []*wfdv1.Event

func (f *eventsFlag) String() string { return "" }

func (f *eventsFlag) Set(v string) error {
	typ, raw, hasData := strings.Cut(v, "=")
	if typ == "" {
		return errors.New("want TYPE or TYPE=JSON")
	}
	if !hasData {
		raw = "{}"
	}
	data, err := parseObject("the data of event "+strconv.Quote(typ), raw)
	if err != nil {
		return err
	}
	*f = append(*f, &wfdv1.Event{Type: typ, Data: data})
	return nil
}

// print prints the handler Run returned: as it finished with --wait, else
// as started, then with --follow its records until it ends (on ctx, not
// bound by --timeout).
func (f *runFlags) print(ctx context.Context, c *client.Client, p *printer, h *wfdv1.Handler) error {
	if f.wait > 0 {
		return printWaited(p, h)
	}
	if err := p.handler(h); err != nil {
		return err
	}
	if !f.follow {
		return nil
	}
	var sopts []client.StreamOption
	if f.internal {
		sopts = append(sopts, client.StreamInternal())
	}
	return follow(ctx, c, p, h.GetHandlerId(), 0, sopts...)
}
