package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/internal/names"
	pl "github.com/wfd-dev/wfd/internal/payload"
)

// ChildEvent is the type of the event that tells a parent a child ended;
// build it with ChildDoneEvent. A handler takes it at any time (its result
// is kept until a step asks), not only while it waits.
const ChildEvent = "wfd.child"

// Starter starts child handlers; the server implements it so that a start
// is idempotent by id across restarts. Without one the engine starts
// children itself.
type Starter interface {
	StartChild(ctx context.Context, parentID, childID, workflow string, input *structpb.Struct) error
}

// ChildDoneEvent is the event that tells a parent how child ended.
func ChildDoneEvent(child string, r ChildResult) Event {
	f := map[string]*structpb.Value{
		"child_id": structpb.NewStringValue(child),
		"status":   structpb.NewNumberValue(float64(r.Status)),
		"error":    structpb.NewStringValue(r.Error),
	}
	if r.Result != nil {
		f["result"] = structpb.NewStructValue(r.Result)
	}
	return Event{Type: ChildEvent, Data: &structpb.Struct{Fields: f}}
}

func childDone(ev Event) (string, ChildResult) {
	f := ev.Data.GetFields()
	return f["child_id"].GetStringValue(), ChildResult{
		Status: Status(f["status"].GetNumberValue()), Result: f["result"].GetStructValue(), Error: f["error"].GetStringValue(),
	}
}

// StartChild carries out flow.StepContext.StartChild.
func (sc *stepContext) StartChild(workflow string, input *structpb.Struct) (string, error) {
	x := sc.x
	err := names.Check("the workflow name", workflow, names.MaxNameBytes, true)
	if err == nil {
		err = pl.Check(x.h.e.lim.payload(), "input", input)
	}
	if err != nil {
		return "", sc.refuse(fmt.Errorf("step %q starts a child: %w", sc.Step(), err))
	}
	id := sc.HandlerID() + "." + x.item.ev.ID + "." + strconv.Itoa(x.childN)
	x.childN++
	if _, err := sc.roundTrip(msg{kind: msgAddChild, p: &payload{key: id}}); err != nil {
		if errors.Is(err, ErrLimit) {
			return "", sc.refuse(fmt.Errorf("step %q starts a child: %w", sc.Step(), err))
		}
		return "", err
	}
	e := x.h.e
	if e.opts.Starter != nil {
		err = e.opts.Starter.StartChild(x.ctx, sc.HandlerID(), id, workflow, input)
	} else {
		_, err = e.Start(x.ctx, workflow, input, StartOptions{HandlerID: id, Parent: sc.HandlerID()})
		if errors.Is(err, ErrHandlerExists) {
			err = nil
		}
	}
	if err != nil {
		return "", fmt.Errorf("starting child %s (%s): %w", id, workflow, err)
	}
	return id, nil
}

// WaitForChildren carries out flow.StepContext.WaitForChildren.
func (sc *stepContext) WaitForChildren(ids []string, timeout time.Duration) (Children, error) {
	id := sc.nextWaitID()
	r, err := sc.roundTrip(msg{kind: msgChildren})
	if err != nil {
		return Children{}, err
	}
	c := Children{Results: map[string]ChildResult{}}
	for _, child := range ids {
		res, done := r.children[child]
		switch {
		case !done:
			c.Pending = append(c.Pending, child)
			continue
		case res.Status == StatusCompleted:
			c.Completed = append(c.Completed, child)
		default:
			c.Failed = append(c.Failed, child)
		}
		c.Results[child] = res
	}
	if len(c.Pending) == 0 {
		return c, nil
	}
	// Resolved (no error) with a result missing cannot happen: the waiter
	// resolves only when every child has a result.
	_, err = sc.await(&waiter{eventType: ChildEvent, on: &waitOn{children: slices.Clone(ids)}}, id, timeout,
		func() string { return fmt.Sprintf("waiting for %d of %d children", len(c.Pending), len(ids)) })
	return c, err
}
