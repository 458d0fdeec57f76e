package cli

import (
	"context"
	"fmt"
	"strings"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

func tasksCommand() *command {
	return &command{
		name:    "tasks",
		args:    "[--status S,...] [--assignee A | --mine] [--workflow W] [--handler H] [--limit N]",
		summary: "list human tasks (the inbox), newest first",
		detail: `Lists the tasks that steps asked people to answer, across handlers in
memory and released, with their status (pending, completed, expired or
cancelled), assignee, title, handler, age and deadline. Answer one with
'wfd complete TASK JSON'. --mine lists the tasks assigned to you (the
subject the server authenticated) or to "group:<role>" for one of your
roles; it needs a server with authentication.`,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			var o client.TaskOptions
			fs.Func("status", "only tasks with one of these `statuses`: pending, completed, expired, cancelled (comma-separated)", func(s string) error {
				st, err := parseTaskStatuses(s)
				o.Statuses = st
				return err
			})
			fs.StringVar(&o.Assignee, "assignee", "", "only tasks assigned to this `person` (or group:ROLE)")
			tf := addTaskFilterFlags(fs, &o)
			fs.BoolVar(&o.Mine, "mine", false, "only tasks assigned to you or your groups (needs authentication)")
			fs.StringVar(&o.Workflow, "workflow", "", "only tasks of this `workflow`'s handlers")
			fs.StringVar(&o.HandlerID, "handler", "", "only tasks of this `handler`")
			limit := fs.Int("limit", 100, "print at most `N` tasks (0: all)")
			return func(ctx context.Context, e *env, _ []string) error {
				if *limit < 0 {
					return usageErrorf("--limit must not be negative")
				}
				if err := tf.apply(&o); err != nil {
					return err
				}
				if *limit > 0 {
					o.PageSize = min(*limit, maxPageSize)
				}
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					var ts []*wfdv1.Task
					for t, err := range c.AllTasks(cctx, o) {
						if err != nil {
							return err
						}
						ts = append(ts, t)
						if len(ts) == *limit {
							break
						}
					}
					return cf.printer(e).tasks(ts)
				})
			}
		},
	}
}

func taskCommand() *command {
	return &command{
		name:    "task",
		args:    "TASK",
		summary: "show a human task, with its answer schema and answer",
		minArgs: 1, maxArgs: 1,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			return func(ctx context.Context, e *env, args []string) error {
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					t, err := c.Task(cctx, args[0])
					if err != nil {
						return err
					}
					return cf.printer(e).taskDetails(t)
				})
			}
		},
	}
}

func completeCommand() *command {
	return &command{
		name:    "complete",
		args:    "TASK JSON [--by NAME]",
		summary: "answer a pending human task",
		detail: `The answer is the JSON object; it must satisfy the task's answer schema
('wfd task TASK' shows it), else nothing changes and the error names the
failing fields. A task that is no longer pending is failed_precondition,
except that repeating the answer that completed it (same --by, same JSON)
succeeds. Prints the task once its handler has taken the answer.`,
		minArgs: 2, maxArgs: 2,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			by := fs.String("by", "", "who answers, recorded on the task (`name`)")
			fs.fromEnv("by")
			return func(ctx context.Context, e *env, args []string) error {
				answer, err := parseObject("JSON", args[1])
				if err != nil {
					return err
				}
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					t, err := c.CompleteTask(cctx, args[0], nil, *by, client.WithAnswerStruct(answer))
					if err != nil {
						return err
					}
					return cf.printer(e).task(t)
				})
			}
		},
	}
}

func cancelTaskCommand() *command {
	return &command{
		name:    "cancel-task",
		args:    "TASK --reason TEXT [--by NAME]",
		summary: "cancel a pending human task, with a reason",
		detail: `The step that waits for the task gets the cancellation as its answer
(cancelled, with the reason and who) and goes on; the task ends cancelled
with its reason. A task that is no longer pending is failed_precondition,
except that repeating the cancellation that ended it (same --reason, same
--by) succeeds. Prints the task once its handler has taken it.`,
		minArgs: 1, maxArgs: 1,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			reason := fs.String("reason", "", "why the task is cancelled (`text`, required)")
			by := fs.String("by", "", "who cancels it, recorded on the task (`name`)")
			fs.fromEnv("by")
			return func(ctx context.Context, e *env, args []string) error {
				if *reason == "" {
					return usageErrorf("cancel-task needs --reason")
				}
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					t, err := c.CancelTask(cctx, args[0], *reason, *by)
					if err != nil {
						return err
					}
					return cf.printer(e).task(t)
				})
			}
		},
	}
}

// parseTaskStatuses parses "pending,completed".
func parseTaskStatuses(s string) ([]wfdv1.TaskStatus, error) {
	var out []wfdv1.TaskStatus
	for name := range strings.SplitSeq(s, ",") {
		v, ok := wfdv1.TaskStatus_value["TASK_STATUS_"+strings.ToUpper(strings.TrimSpace(name))]
		if !ok || v == int32(wfdv1.TaskStatus_TASK_STATUS_UNSPECIFIED) {
			return nil, fmt.Errorf("unknown task status %q (want pending, completed, expired or cancelled)", name)
		}
		out = append(out, wfdv1.TaskStatus(v))
	}
	return out, nil
}

// taskFilterFlags are tasks' --group, --claimed, --unclaimed (--overdue
// sets its option directly).
type taskFilterFlags struct {
	group              *string
	claimed, unclaimed *bool
}

func addTaskFilterFlags(fs *flagSet, o *client.TaskOptions) taskFilterFlags {
	fs.BoolVar(&o.Overdue, "overdue", false, "only pending tasks past their due time (their escalation's)")
	return taskFilterFlags{
		group:     fs.String("group", "", "only tasks assigned to this `group` (the same as --assignee group:GROUP)"),
		claimed:   fs.Bool("claimed", false, "only tasks someone has claimed"),
		unclaimed: fs.Bool("unclaimed", false, "only tasks nobody has claimed"),
	}
}

// apply sets o from the flags, refusing those that exclude each other.
func (f taskFilterFlags) apply(o *client.TaskOptions) error {
	if *f.group != "" {
		if o.Assignee != "" {
			return usageErrorf("--group and --assignee exclude each other")
		}
		o.Assignee = "group:" + *f.group
	}
	if o.Mine && o.Assignee != "" {
		return usageErrorf("--mine and --assignee (or --group) exclude each other")
	}
	switch {
	case *f.claimed && *f.unclaimed:
		return usageErrorf("--claimed and --unclaimed exclude each other")
	case *f.claimed:
		o.Claim = wfdv1.TaskClaim_TASK_CLAIM_CLAIMED
	case *f.unclaimed:
		o.Claim = wfdv1.TaskClaim_TASK_CLAIM_UNCLAIMED
	}
	return nil
}
