package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// answerOnce waits for one "answer" and completes with it.
func answerOnce() engine.Workflow {
	return engine.Workflow{
		Name: "once",
		Steps: []engine.Step{{
			Name: "ask", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
			Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				ev, err := sc.WaitFor("answer", engine.WaitOptions{})
				if err != nil {
					return err
				}
				return sc.Send(engine.StopEvent, ev.Data)
			},
		}},
	}
}

// TestRefusalWaitsForDurableState: a second answer to a handler whose
// first answer is not durable yet is refused (no step waits for it any
// more) only once the first one's change has committed; if that commit
// fails, the second answer's caller gets the journal's error, not a
// refusal that blames it for what the store could not keep.
func TestRefusalWaitsForDurableState(t *testing.T) {
	for _, tc := range []struct {
		name   string
		commit error // what the journal says of the first answer's change
		want   func(error) bool
	}{
		// Refused: no step waits for it, or the handler has finished
		// (the first answer's run may have ended it meanwhile).
		{"committed", nil, func(err error) bool {
			var refused *engine.EventRefusedError
			return errors.As(err, &refused) || errors.Is(err, engine.ErrHandlerDone)
		}},
		{"failed", errDisk, func(err error) bool { return errors.Is(err, errDisk) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var holding atomic.Bool
			j := newFaultyJournal(func(c *engine.Change) verdict {
				if holding.Load() {
					return hold
				}
				return ack
			})
			e := faultyEngine(t, j, answerOnce())
			h := start(t, e, "once", nil)
			// Hold changes only once the one that made the handler idle
			// is in the journal (and acknowledged): Info says idle before
			// that, and holding it would make it the change taken below
			// for the first answer's.
			j.idleAppended(t)
			holding.Store(true)
			first := make(chan error, 1)
			go func() {
				first <- h.SendEvent(ctx, engine.Event{Type: "answer", Data: &structpb.Struct{}}, engine.SendOptions{})
			}()
			c := j.next(t) // the first answer's change, held
			second := make(chan error, 1)
			go func() {
				second <- h.SendEvent(ctx, engine.Event{Type: "answer", Data: &structpb.Struct{}}, engine.SendOptions{})
			}()
			testwait.For(t, "the second answer's refusal to wait", func() bool { return engine.WaitingRefusals(h) == 1 })
			select {
			case err := <-second:
				t.Fatalf("the second answer was answered (%v) before the first one's change committed", err)
			default:
			}
			c.Done(tc.commit)
			if err := received(t, first, "the first answer's answer"); !errors.Is(err, tc.commit) {
				t.Fatalf("first answer: %v, want %v", err, tc.commit)
			}
			// The changes the first answer led to (its run, the end) are
			// acknowledged too, as the journal would: the refusal waits
			// for all that was in the journal when it was decided.
			holding.Store(false)
			for {
				select {
				case err := <-second:
					if !tc.want(err) {
						t.Fatalf("second answer: %v", err)
					}
					return
				case c := <-j.held:
					c.Done(tc.commit)
				case <-time.After(testwait.Timeout):
					t.Fatal("gave up waiting for the second answer's answer")
				}
			}
		})
	}
}
