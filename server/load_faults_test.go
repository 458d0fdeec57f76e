package server_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/faultstore"
	"github.com/wfd-dev/wfd/server"
)

// spoilLoads makes the read that loads a released handler's checkpoint
// return what spoil makes of handler id's snapshot; other handlers load as
// stored. It is the one place that knows which store reads a load makes:
// one LoadHandler, which reads the metadata and the checkpoint together.
func spoilLoads(fs *faultstore.Store, id string, spoil func(snap []byte) ([]byte, error)) {
	fs.Update(func(f *faultstore.Funcs) {
		f.LoadHandlerFunc = func(ctx context.Context, hid string) (persistence.Handler, []byte, error) {
			h, snap, err := fs.Inner().LoadHandler(ctx, hid)
			if err != nil || hid != id {
				return h, snap, err
			}
			snap, err = spoil(snap)
			if err != nil {
				return persistence.Handler{}, nil, err
			}
			return h, snap, nil
		}
	})
}

// getHandler returns a handler through the API.
func getHandler(t *testing.T, c interface {
	GetHandler(context.Context, *wfdv1.GetHandlerRequest) (*wfdv1.GetHandlerResponse, error)
}, id string) *wfdv1.Handler {
	t.Helper()
	res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
	if err != nil {
		t.Fatalf("GetHandler(%s): %v", id, err)
	}
	return res.Handler
}

// TestLoadFailures wakes a released handler whose checkpoint cannot be
// loaded. A store that cannot be read (or cannot record the failure)
// makes the call Unavailable and leaves the handler as it was, to be woken
// by the same call once the store works; a checkpoint that cannot be
// decoded marks the handler failed for good, with the reason on
// GetHandler and a terminal record on its stream, and the call gets
// FailedPrecondition. Either way the server serves other handlers, and no
// call answers Internal.
func TestLoadFailures(t *testing.T) {
	garbage := func([]byte) ([]byte, error) { return []byte("\xff\xffnot a snapshot"), nil }
	unavailable := fmt.Errorf("%w: bolt: read /var/lib/wfd/wfd.db: input/output error", persistence.ErrUnavailable)
	for _, tc := range []struct {
		name  string
		spoil func(snap []byte) ([]byte, error)
		// writeErr, if set, fails every Write meanwhile.
		writeErr error
		code     connect.Code
		message  *regexp.Regexp
		// fails: the handler is failed for good; else it is left intact.
		fails bool
	}{
		{"store unavailable", func([]byte) ([]byte, error) { return nil, unavailable }, nil,
			connect.CodeUnavailable, errorIDMessage("the store is unavailable; retry later"), false},
		{"snapshot undecodable", garbage, nil,
			connect.CodeFailedPrecondition, regexp.MustCompile(`handler [^ ]+ failed: cannot decode its checkpoint: proto`), true},
		// Damage the store reports is the file's, not the handler's: the
		// call gets DataLoss (no detail) and the handler stays as it was.
		{"store reports corrupt data", func([]byte) ([]byte, error) {
			return nil, fmt.Errorf("bolt: load handler: %w: the store file is damaged: page 7 is not a leaf", persistence.ErrCorrupt)
		}, nil, connect.CodeDataLoss, errorIDMessage("stored data is damaged"), false},
		// Marking the handler failed is a commit: if that cannot be made,
		// nothing changes, and the handler loads once the store works.
		{"snapshot undecodable, failure cannot be recorded", garbage, unavailable,
			connect.CodeUnavailable, errorIDMessage("the store is unavailable; retry later"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFaulty(t, server.Options{Workflows: testWorkflows()})
			c := f.client
			var ids []string // the handler to break, then another
			for range 2 {
				h := run(t, c, "approval", nil)
				waitIdle(t, c, h.HandlerId)
				release(t, c, h.HandlerId)
				ids = append(ids, h.HandlerId)
			}
			id, other := ids[0], ids[1]
			before := getHandler(t, c, id)

			spoilLoads(f.fs, id, tc.spoil)
			if tc.writeErr != nil {
				f.fs.Update(func(fn *faultstore.Funcs) {
					fn.WriteFunc = func(context.Context, ...persistence.Change) error { return tc.writeErr }
				})
			}
			_, err := sendEv(t, c, id, "approval", map[string]any{"approved": true})
			wantCode(t, err, tc.code, "")
			var ce *connect.Error
			if !errorsAs(err, &ce) || !tc.message.MatchString(ce.Message()) || strings.Contains(ce.Message(), "/var/lib") {
				t.Fatalf("message %q, want it to match %v", err, tc.message)
			}

			after := getHandler(t, c, id)
			if tc.fails {
				// Finished: no residency, nothing it waits for.
				if after.Status != wfdv1.HandlerStatus_HANDLER_STATUS_FAILED || !strings.Contains(after.Error, "cannot decode its checkpoint") ||
					after.Residency != wfdv1.Residency_RESIDENCY_UNSPECIFIED || after.Idle != nil {
					t.Fatalf("handler whose checkpoint cannot be decoded: %v", after)
				}
				recs := collect(t, c, id, 0) // ends: the stream has its terminal record
				fin := recs[len(recs)-1].GetHandlerFinished()
				if fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_FAILED || fin.GetError() != after.Error || recs[len(recs)-1].Seq != before.LastSeq+1 {
					t.Fatalf("stream ends with %v (seq %d after %d)", recs[len(recs)-1], recs[len(recs)-1].Seq, before.LastSeq)
				}
			} else if !proto.Equal(after, before) {
				t.Fatalf("handler changed by a failed load:\n%v\nwas\n%v", after, before)
			}
			if tc.writeErr == nil {
				// The others load while this one cannot.
				if _, err := sendEv(t, c, other, "approval", map[string]any{"approved": true}); err != nil {
					t.Fatalf("SendEvent to another released handler: %v", err)
				}
			}

			f.fs.Reset()
			_, err = sendEv(t, c, id, "approval", map[string]any{"approved": true})
			if tc.fails {
				wantCode(t, err, connect.CodeFailedPrecondition, "is failed")
				return
			}
			if err != nil {
				t.Fatalf("the same SendEvent once the store works: %v", err)
			}
			if k := kinds(collect(t, c, id, 0)); !strings.HasSuffix(k, fmt.Sprintf("%d:released %d:restored %d:idle=false %d:decide started %d:decide ended %d:COMPLETED",
				before.LastSeq, before.LastSeq+1, before.LastSeq+2, before.LastSeq+3, before.LastSeq+4, before.LastSeq+5)) {
				t.Fatalf("stream after the store works: %s", k)
			}
			if tc.writeErr != nil {
				if _, err := sendEv(t, c, other, "approval", map[string]any{"approved": true}); err != nil {
					t.Fatalf("SendEvent to another released handler: %v", err)
				}
			}
		})
	}
}
