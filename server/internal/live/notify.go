package live

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
)

// A task's escalation may notify: an event published under its key. The
// journal publishes it before it commits the change that records the
// escalation (Publish is idempotent by id, the task's, so a change that
// fails and is made again publishes nothing twice), and wakes the
// handlers waiting for the key once the change is committed.

// escalationNotices are the publications the escalations recorded in c
// ask for.
func escalationNotices(c *engine.Change) ([]persistence.Published, error) {
	if len(c.ChangedTasks) == 0 {
		return nil, nil // an escalation changes a task: most changes skip the records
	}
	var out []persistence.Published
	for i := range c.Records {
		t := c.Records[i].Task
		if c.Records[i].Kind != engine.RecordTask || t == nil || t.Change != engine.TaskEscalated || t.Text == "" {
			continue
		}
		data, err := proto.Marshal(&structpb.Struct{Fields: map[string]*structpb.Value{
			"task_id":    structpb.NewStringValue(t.TaskID),
			"handler_id": structpb.NewStringValue(c.HandlerID),
			"workflow":   structpb.NewStringValue(c.Workflow),
			"title":      structpb.NewStringValue(t.Title),
			"assignee":   structpb.NewStringValue(t.Assignee),
			"reassigned": structpb.NewStringValue(t.To),
		}})
		if err != nil {
			return nil, err
		}
		out = append(out, persistence.Published{ID: t.TaskID + ":escalated", Key: t.Text, At: c.UpdatedAt, Data: data})
	}
	return out, nil
}

// publishNotices publishes what p's change notifies before it is
// committed; a failure fails the change (its handler is then lost and
// loaded again, and its escalation acts again).
func (j *Journal) publishNotices(p *pending) {
	for i, n := range p.notices {
		got, err := j.store.Publish(context.Background(), n)
		if err != nil {
			p.err = fmt.Errorf("publishing the escalation of %s: %w", n.ID, err)
			return
		}
		p.notices[i] = got
	}
}

// changesOf returns the changes of batch to commit, having published
// what they notify (a change whose publication fails is left out, failed).
func (j *Journal) changesOf(batch []*pending) []persistence.Change {
	changes := make([]persistence.Change, 0, len(batch))
	for _, p := range batch {
		if p.err == nil && len(p.notices) > 0 {
			j.publishNotices(p)
		}
		if p.err == nil {
			changes = append(changes, p.change)
		}
	}
	return changes
}

// published tells OnPublished of p's publications, its change committed.
func (j *Journal) published(p *pending) {
	if j.OnPublished == nil {
		return
	}
	for i := range p.notices {
		j.OnPublished(&p.notices[i])
	}
}
