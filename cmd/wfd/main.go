// Command wfd is the durable workflow service's server and command line
// client; see the cli package, which holds all of it, or run "wfd help".
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/wfd-dev/wfd/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
