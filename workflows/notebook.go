package workflows

import (
	"context"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/flow"
)

// NoteEvent is the event type a notebook handler takes at any time. Its
// data must hold "text" (string); "last": true ends the notebook.
const NoteEvent = "note"

// NoteEventSchema is the JSON Schema of a NoteEvent's data.
func NoteEventSchema() []byte {
	return jsonSchema(obj(map[string]any{
		"text": map[string]any{"type": "string"},
		"last": map[string]any{"type": "boolean", "description": "true ends the notebook"},
	}, "text"))
}

// Notebook takes "note" events from outside at any time (an External type,
// unlike approval's answer, which its step waits for). Each note runs its
// step, which writes a "noted" event with the count so far; the note whose
// "last" is true completes the handler with {"notes": count}. Between
// notes the handler is idle and can be released.
func Notebook() flow.Workflow {
	return flow.Workflow{
		Name:        "notebook",
		Description: `Takes "note" events at any time and completes with their count on the last one.`,
		InputSchema: anyObject("ignored"),
		External:    []string{NoteEvent},
		Events: []flow.EventType{{
			Type:        NoteEvent,
			Description: `A note: {"text": "...", "last": true|false}; accepted at any time.`,
			Schema:      NoteEventSchema(),
		}},
		Steps: []flow.Step{{
			// The start event needs a step; there is nothing to do.
			Name:    "open",
			Accepts: []string{flow.StartEvent},
			Run:     func(context.Context, *flow.StepContext, flow.Event) error { return nil },
		}, {
			Name:    "note",
			Accepts: []string{NoteEvent},
			Emits:   []string{flow.StopEvent},
			Run:     note,
		}},
	}
}

func note(_ context.Context, sc *flow.StepContext, in flow.Event) error {
	n := 1.0
	if v, ok := sc.Get("notes"); ok {
		n += v.GetNumberValue()
	}
	if err := sc.Set("notes", structpb.NewNumberValue(n)); err != nil {
		return err
	}
	f := in.Data.GetFields()
	sc.Write("noted", &structpb.Struct{Fields: map[string]*structpb.Value{
		"n":    structpb.NewNumberValue(n),
		"text": structpb.NewStringValue(f["text"].GetStringValue()),
	}})
	if !f["last"].GetBoolValue() {
		return nil
	}
	return sc.Send(flow.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"notes": structpb.NewNumberValue(n)}})
}
