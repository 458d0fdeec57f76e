// Package goldenwf holds the workflows of the golden store files in
// server/testdata (see ../README.md): the generators that wrote the files
// and the tests that read them must register the same definitions, or a
// stored checkpoint would not restore.
package goldenwf

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
)

// NotesTimeout is the notes workflow's whole-run timeout.
const NotesTimeout = 24 * time.Hour

// Notes counts "note" events sent from outside and completes with
// {"notes": n} on one whose data holds "last": true. Between notes it is
// idle with nothing but its outside event types and its run deadline to
// wake it: what older stores kept as pseudo-waiters.
func Notes() engine.Workflow {
	return engine.Workflow{
		Name:     "notes",
		External: []string{"note"},
		Timeout:  NotesTimeout,
		Steps: []engine.Step{{
			Name:    "collect",
			Accepts: []string{engine.StartEvent, "note"},
			Emits:   []string{engine.StopEvent},
			Run:     collect,
		}},
	}
}

func collect(_ context.Context, sc *engine.StepContext, in engine.Event) error {
	if in.Type == engine.StartEvent {
		return nil
	}
	n := 1.0
	if v, ok := sc.Get("notes"); ok {
		n += v.GetNumberValue()
	}
	if err := sc.Set("notes", structpb.NewNumberValue(n)); err != nil {
		return err
	}
	if !in.Data.GetFields()["last"].GetBoolValue() {
		return nil
	}
	return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"notes": structpb.NewNumberValue(n)}})
}
