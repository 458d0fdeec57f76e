package histcheck

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// Caller makes calls as a client behind a load balancer would: each
// attempt through a replica that is up, picked at random; an attempt that
// fails in a way that says nothing about the call (Unavailable,
// DeadlineExceeded, Canceled, a transport error) is tried again through
// another, with the same handler id or idempotency key, until it is
// answered or ctx ends. Every attempt of a start, answer or release is an
// Op of the history; every GetHandler answer an Observation. A Caller is
// used by one goroutine (its rand is not safe for concurrent use).
type Caller struct {
	c   *Cluster
	h   *History
	rng *rand.Rand
	// Timeout bounds each attempt.
	Timeout time.Duration
	// Stale is the probability that an attempt may go to a paused replica
	// too, as through a balancer that has not noticed yet.
	Stale float64
	// Avoid is a replica not to call (a probe's victim: "through another
	// replica"); Only, one to call alone (starting handlers it owns);
	// Prefer, one to make each call's first attempt through if it is up,
	// its retries going to the others (a call to an owner about to be
	// paused, retried elsewhere).
	Avoid, Only, Prefer string
	// via is the replica that answered the last call.
	via string
}

// Caller returns a Caller recording into h.
func (c *Cluster) Caller(h *History, rng *rand.Rand, timeout time.Duration) *Caller {
	return &Caller{c: c, h: h, rng: rng, Timeout: timeout}
}

// With returns a copy that avoids or only calls the given replicas.
func (k *Caller) With(avoid, only string) *Caller {
	c := *k
	c.Avoid, c.Only = avoid, only
	return &c
}

// pick returns a replica for an attempt: the preferred one for a first
// attempt, else one at random among those up (or paused, now and then),
// other than last (the one the previous attempt failed through) when
// there is another.
func (k *Caller) pick(first bool, last string) *Replica {
	if r := k.c.Replica(k.Prefer); first && r != nil && r.State() == Up {
		return r
	}
	states := []State{Up}
	if k.Stale > 0 && k.rng.Float64() < k.Stale {
		states = append(states, Paused)
	}
	var rs []*Replica
	for _, r := range k.c.InState(states...) {
		if r.ID != k.Avoid && r.ID != k.Prefer && (k.Only == "" || r.ID == k.Only) {
			rs = append(rs, r)
		}
	}
	if len(rs) > 1 {
		rs = slices.DeleteFunc(rs, func(r *Replica) bool { return r.ID == last })
	}
	if len(rs) == 0 {
		return nil
	}
	return rs[k.rng.IntN(len(rs))]
}

// do runs call through replicas until it is answered, its error is not
// one to retry, or ctx ends. kind "" records nothing.
func (k *Caller) do(ctx context.Context, kind OpKind, id string, call func(context.Context, *Replica) error) error {
	pause := 10 * time.Millisecond
	last := ""
	for attempt := 0; ; attempt++ {
		var err error
		if r := k.pick(attempt == 0, last); r == nil {
			err = connect.NewError(connect.CodeUnavailable, errors.New("histcheck: no replica up"))
		} else {
			cctx, cancel := context.WithTimeout(ctx, k.Timeout)
			o := Op{Kind: kind, Handler: id, Replica: r.ID, Start: time.Now(), Paused: r.State() == Paused}
			err = call(cctx, r)
			cancel()
			o.End = time.Now()
			if err != nil {
				o.Code, o.Err = connect.CodeOf(err).String(), err.Error()
				o.Finished = kind == OpAnswer && finishedErr(err)
			}
			if kind != "" {
				k.h.AddOp(o)
			}
			k.via, last = r.ID, r.ID
			if err == nil || o.Finished || !retriable(err) {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last attempt: %w)", ctx.Err(), err)
		case <-time.After(pause):
		}
		// Short: the takeover measurement is only as fine as this.
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// retriable: the attempt may or may not have taken effect, or did not,
// and the same call may succeed through another replica or later.
func retriable(err error) bool {
	switch connect.CodeOf(err) {
	case connect.CodeUnavailable, connect.CodeDeadlineExceeded, connect.CodeCanceled, connect.CodeAborted:
		return true
	case connect.CodeUnknown, connect.CodeInternal:
		return transportMsg(err.Error())
	}
	return false
}

// transportMsg says whether an Unknown or Internal error's message is
// the client's own about a connection cut mid-call (a replica killed or
// paused), not an answer of a server.
func transportMsg(msg string) bool {
	return slices.ContainsFunc([]string{"EOF", "connection reset", "broken pipe", "connection refused", "client connection lost", "stream error", "incomplete envelope"},
		func(s string) bool { return strings.Contains(msg, s) })
}

// finishedErr: an answer refused because the handler has finished.
func finishedErr(err error) bool {
	return connect.CodeOf(err) == connect.CodeFailedPrecondition && strings.Contains(err.Error(), "finished")
}

// Start starts handler id of workflow wf. RunWorkflow with a handler id is
// idempotent: a retry returns the handler an earlier attempt created.
func (k *Caller) Start(ctx context.Context, id, wf string, input map[string]any) error {
	in, err := structpb.NewStruct(input)
	if err != nil {
		return fmt.Errorf("histcheck: input: %w", err)
	}
	req := &wfdv1.RunWorkflowRequest{Workflow: wf, HandlerId: id, Input: in}
	err = k.do(ctx, OpStart, id, func(ctx context.Context, r *Replica) error {
		_, err := r.Client().RunWorkflow(ctx, req)
		return err
	})
	if err != nil {
		return fmt.Errorf("start %s: %w", id, err)
	}
	return nil
}

// AnswerKey is the idempotency key of handler id's one answer.
func AnswerKey(id string) string { return "answer-" + id }

// Answer sends handler id its one answer (planned in the history first).
// A refusal because it has finished ends the call: the checker holds the
// handler to having completed with this answer.
func (k *Caller) Answer(ctx context.Context, id string, a Answer) error {
	k.h.PlanAnswer(id, a)
	data, _ := structpb.NewStruct(map[string]any{"approved": a.Approved, "comment": a.Comment})
	req := &wfdv1.SendEventRequest{HandlerId: id, IdempotencyKey: AnswerKey(id), Event: &wfdv1.Event{Type: Approval, Data: data}}
	err := k.do(ctx, OpAnswer, id, func(ctx context.Context, r *Replica) error {
		_, err := r.Client().SendEvent(ctx, req)
		return err
	})
	if err != nil && !finishedErr(err) {
		return fmt.Errorf("answer %s: %w", id, err)
	}
	return nil
}

// Release asks for handler id to be written to the store and dropped from
// memory.
func (k *Caller) Release(ctx context.Context, id string) error {
	err := k.do(ctx, OpRelease, id, func(ctx context.Context, r *Replica) error {
		_, err := r.Client().ReleaseHandler(ctx, &wfdv1.ReleaseHandlerRequest{HandlerId: id})
		return err
	})
	if err != nil {
		return fmt.Errorf("release %s: %w", id, err)
	}
	return nil
}

// Get reads handler id through a replica and records the observation.
func (k *Caller) Get(ctx context.Context, id string) (*wfdv1.Handler, error) {
	h, _, err := k.get(ctx, id, true)
	return h, err
}

func (k *Caller) get(ctx context.Context, id string, observe bool) (*wfdv1.Handler, string, error) {
	var h *wfdv1.Handler
	var via string
	err := k.do(ctx, "", id, func(ctx context.Context, r *Replica) error {
		start := time.Now()
		res, err := r.Client().GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id})
		if err != nil {
			return err
		}
		h, via = res.GetHandler(), r.ID
		if observe {
			k.h.Observe(Observation{Handler: id, Replica: r.ID, Start: start, End: time.Now(),
				Status: h.GetStatus(), LastSeq: h.GetLastSeq(), Residency: h.GetResidency(), Owner: h.GetOwner()})
		}
		return nil
	})
	if err != nil {
		return nil, via, fmt.Errorf("get %s: %w", id, err)
	}
	return h, via, nil
}

// WaitParked polls handler id until it is idle, waiting for its answer.
// It fails if the handler finishes first.
func (k *Caller) WaitParked(ctx context.Context, id string) error {
	pause := 5 * time.Millisecond
	for {
		h, err := k.Get(ctx, id)
		switch {
		case err != nil:
			return err
		case h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING:
			return fmt.Errorf("%s finished before its answer: %s", id, short(h.GetStatus()))
		case h.GetIdle() != nil:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s never parked: %w", id, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}
