package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1grpc"

	client "github.com/wfd-dev/wfd/clients/go"
)

func workersCommand() *command {
	return &command{
		name:    "workers",
		summary: "list the connected step workers, their workflows and runs in progress",
		detail: `Step workers are processes that serve workflows to the server
(WorkerService; see docs/ARCHITECTURE.md "Step workers"). For each connected worker:
its id and name, the workflows it serves (each version as
workflow@version), how many runs it takes at once and has in progress, and
since when it is connected.`,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			return func(ctx context.Context, e *env, _ []string) error {
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					res, err := wfdv1grpc.NewWorkerServiceClient(c.Conn()).ListWorkers(cctx, &wfdv1.ListWorkersRequest{})
					if err != nil {
						return err
					}
					return cf.printer(e).workers(res.GetWorkers())
				})
			}
		},
	}
}

// workers prints the connected workers, one per line.
func (p *printer) workers(ws []*wfdv1.WorkerInfo) error {
	if p.json {
		for _, w := range ws {
			if err := p.message(w); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tWORKFLOWS\tRUNS\tCONNECTED")
	for _, w := range ws {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\n", w.GetWorkerId(), w.GetName(), workerWorkflowsText(w),
			len(w.GetRuns()), w.GetMaxRuns(), w.GetConnectedAt().AsTime().Local().Format(time.RFC3339))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// workerWorkflowsText is what a worker serves: its versions as
// workflow@version, or the workflows' names from a server that does not
// say.
func workerWorkflowsText(w *wfdv1.WorkerInfo) string {
	if len(w.GetVersions()) > 0 {
		return strings.Join(w.GetVersions(), ",")
	}
	return strings.Join(w.GetWorkflows(), ",")
}
