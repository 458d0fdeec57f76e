package cli

import (
	"context"

	client "github.com/wfd-dev/wfd/clients/go"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// taskLifeCommand is one of claim, unclaim, reassign and comment: TASK
// and maybe one more argument, --by, and the task printed after it.
func taskLifeCommand(name, args, summary, detail string, nargs int,
	call func(ctx context.Context, c *client.Client, args []string, by string) (*wfdv1.Task, error),
) *command {
	return &command{
		name: name, args: args + " [--by NAME]", summary: summary, detail: detail,
		minArgs: nargs, maxArgs: nargs,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			by := fs.String("by", "", "who acts, recorded on the task (`name`; required without authentication, where the server records the caller)")
			fs.fromEnv("by")
			return func(ctx context.Context, e *env, args []string) error {
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					t, err := call(cctx, c, args, *by)
					if err != nil {
						return err
					}
					return cf.printer(e).task(t)
				})
			}
		},
	}
}

func taskLifeCommands() []*command {
	return []*command{
		taskLifeCommand("claim", "TASK", "take a pending human task to work on it",
			`Only the one who holds a task may answer it (or someone who may answer
others' tasks: operator, admin). Claiming a task you hold changes nothing;
one someone else holds is failed_precondition, naming them.`, 1,
			func(ctx context.Context, c *client.Client, args []string, by string) (*wfdv1.Task, error) {
				return c.ClaimTask(ctx, args[0], by)
			}),
		taskLifeCommand("unclaim", "TASK", "let go of a claimed human task",
			`The one who holds it may; so may those who may answer others' tasks
(and anyone when the server does not authenticate).`, 1,
			func(ctx context.Context, c *client.Client, args []string, by string) (*wfdv1.Task, error) {
				return c.UnclaimTask(ctx, args[0], by)
			}),
		taskLifeCommand("reassign", "TASK ASSIGNEE", "give a pending human task to another person or group",
			`ASSIGNEE is a person, or a group as group:<role>. The task's claim ends.`, 2,
			func(ctx context.Context, c *client.Client, args []string, by string) (*wfdv1.Task, error) {
				return c.ReassignTask(ctx, args[0], args[1], by)
			}),
		taskLifeCommand("comment", "TASK TEXT", "add a comment to a pending human task",
			`A task keeps its comments (at most 100, each up to 4096 bytes) when it
ends; wfd task TASK shows them.`, 2,
			func(ctx context.Context, c *client.Client, args []string, by string) (*wfdv1.Task, error) {
				return c.CommentTask(ctx, args[0], args[1], by)
			}),
	}
}
