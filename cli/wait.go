package cli

import (
	"context"
	"fmt"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

// errStillRunning ends a command that waited for a handler that had not
// finished when the wait ended; the handler has been printed already.
var errStillRunning = fmt.Errorf("%w: it is still running", errHandlerUnsuccessful)

func waitCommand() *command {
	return &command{
		name:    "wait",
		args:    "HANDLER [--wait DURATION] [--idle [--after-seq N]]",
		summary: "wait for a handler to finish (or become idle) and print it",
		detail: `Waits until the handler finishes or --wait has passed (or the server
shuts down), then prints it. Exit status 0 if it completed, 1 if it failed,
was cancelled or is still running. Waiting does not load a released
handler: it ends when whatever wakes the handler brings it to its end.
With --idle it also ends once the handler is idle, waiting for outside
input (exit status 0, and what it waits for is printed): at or after the
record --after-seq (the last seq a send printed with --json), or at once
if it is idle now.`,
		minArgs: 1, maxArgs: 1,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			wait := fs.Duration("wait", time.Minute, "wait at most this `long` (at most 1h)")
			idle := fs.Bool("idle", false, "also end once the handler is idle (waits for outside input)")
			afterSeq := fs.Uint64("after-seq", 0, "with --idle, an idleness after this record `seq` only")
			return func(ctx context.Context, e *env, args []string) error {
				if *wait <= 0 {
					return usageErrorf("--wait must be positive")
				}
				if *afterSeq != 0 && !*idle {
					return usageErrorf("--after-seq needs --idle")
				}
				return cf.callWaiting(ctx, *wait, func(cctx context.Context, c *client.Client) error {
					if *idle {
						h, err := c.WaitIdle(cctx, args[0], *afterSeq, *wait)
						if err != nil {
							return err
						}
						if st := h.GetStatus(); (st == wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING || st == wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED) && h.GetIdle() != nil {
							return cf.printer(e).handler(h)
						}
						return printWaited(cf.printer(e), h)
					}
					h, err := c.Wait(cctx, args[0], *wait)
					if err != nil {
						return err
					}
					return printWaited(cf.printer(e), h)
				})
			}
		},
	}
}

// printWaited prints a handler a command waited for and says how it ended.
func printWaited(p *printer, h *wfdv1.Handler) error {
	if err := p.handler(h); err != nil {
		return err
	}
	switch h.GetStatus() {
	case wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED:
		return nil
	case wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING, wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED:
		return errStillRunning
	}
	return errHandlerUnsuccessful
}

// callWaiting is call for a command whose call waits up to wait on the
// server: --timeout bounds what the call takes besides the wait.
func (f *clientFlags) callWaiting(ctx context.Context, wait time.Duration, fn func(context.Context, *client.Client) error) error {
	if f.timeout <= 0 {
		return f.call(ctx, fn)
	}
	saved := f.timeout
	f.timeout += wait
	defer func() { f.timeout = saved }()
	return f.call(ctx, fn)
}
