package workflows

import (
	"context"
	"errors"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/google/uuid"
	"github.com/wfd-dev/wfd/flow"
)

// Order waits for the payment of its input's "order_id": an event published
// with the key "payment:<order id>" (PublishEvent). A payment published
// after the order started is taken even if it came first. It completes with
// the payment's data and the reference it made once (a memo).
func Order() flow.Workflow {
	return flow.Workflow{
		Name:        "order",
		Description: `Waits for an event published under the key "payment:<order_id>".`,
		InputSchema: jsonSchema(obj(map[string]any{
			"order_id": nameSchema(`the order; its payment is published under "payment:<order_id>"`),
		}, "order_id")),
		CheckInput: func(in *structpb.Struct) error {
			_, err := orderID(in)
			return err
		},
		Steps: []flow.Step{{
			Name:    "await_payment",
			Accepts: []string{flow.StartEvent},
			Emits:   []string{flow.StopEvent},
			Run: func(_ context.Context, sc *flow.StepContext, in flow.Event) error {
				id, err := orderID(in.Data)
				if err != nil {
					return err
				}
				// The order's reference is made once: a re-run of the step
				// (after the payment arrives, or a restart) gets the same.
				ref, err := sc.Once("reference", func() (*structpb.Value, error) {
					return structpb.NewStringValue("ord-" + uuid.NewString()), nil
				})
				if err != nil {
					return err
				}
				p, err := sc.WaitForKey(PaymentKey(id), flow.KeyOptions{})
				if err != nil {
					return err
				}
				return sc.Send(flow.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
					"order_id":  structpb.NewStringValue(id),
					"reference": ref,
					"payment":   structpb.NewStructValue(p.Data),
					"paid_at":   structpb.NewStringValue(p.At.UTC().Format(time.RFC3339Nano)),
				}})
			},
		}},
	}
}

// PaymentKey is the key an order's payment is published under.
func PaymentKey(orderID string) string { return "payment:" + orderID }

// orderID reads the input's "order_id", which is required.
func orderID(in *structpb.Struct) (string, error) {
	id, ok, err := name(in.GetFields(), "order_id")
	if err == nil && !ok {
		err = errors.New(`input needs "order_id"`)
	}
	return id, err
}
