package cli_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/workflows"
)

// TestJSON checks that --json prints one protojson object per line.
func TestJSON(t *testing.T) {
	addr := serve(t)
	run := ok(t, "run", "approval", "--json", "--addr", addr, "--input", `{"big": 12345678901}`)
	var h wfdv1.Handler
	if err := protojson.Unmarshal([]byte(run), &h); err != nil {
		t.Fatalf("run --json printed %q: %v", run, err)
	}
	id := h.GetHandlerId()
	eventually(t, "approval is idle", func() bool {
		return strings.Contains(ok(t, "get", id, "--addr", addr), "idle since")
	})
	ok(t, "send", id, "approval", `{"approved": false}`, "--addr", addr)
	ok(t, "stream", id, "--addr", addr) // returns once the handler has finished

	newHandler := func() proto.Message { return &wfdv1.Handler{} }
	tests := []struct {
		args  []string
		new   func() proto.Message
		check func(t *testing.T, ms []proto.Message)
	}{
		{[]string{"workflows"}, func() proto.Message { return &wfdv1.Workflow{} }, func(t *testing.T, ms []proto.Message) {
			if len(ms) != len(workflows.All()) {
				t.Errorf("%d workflows, want %d", len(ms), len(workflows.All()))
			}
		}},
		{[]string{"get", id}, newHandler, func(t *testing.T, ms []proto.Message) {
			h := ms[0].(*wfdv1.Handler)
			if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || h.GetResult().GetFields()["approved"].GetBoolValue() {
				t.Errorf("get: %v", h)
			}
		}},
		{[]string{"handlers"}, newHandler, func(t *testing.T, ms []proto.Message) {
			if len(ms) != 1 {
				t.Errorf("%d handlers", len(ms))
			}
		}},
		{[]string{"stream", id, "--internal"}, func() proto.Message { return &wfdv1.Record{} }, func(t *testing.T, ms []proto.Message) {
			for i, m := range ms {
				if r := m.(*wfdv1.Record); r.GetSeq() != uint64(i+1) {
					t.Errorf("record %d has seq %d", i, r.GetSeq())
				}
			}
			last := ms[len(ms)-1].(*wfdv1.Record).GetHandlerFinished()
			if got := last.GetResult().GetFields()["request"].GetStructValue().GetFields()["big"].GetNumberValue(); got != 12345678901 {
				t.Errorf("input came back as %v", got)
			}
		}},
		{[]string{"run", "echo", "--follow", "--internal"}, nil, func(t *testing.T, ms []proto.Message) {
			if len(ms) != 4 || ms[len(ms)-1].(*wfdv1.Record).GetHandlerFinished() == nil {
				t.Errorf("run --follow printed %v", ms)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out := ok(t, append(tt.args, "--json", "--addr", addr)...)
			var ms []proto.Message
			for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				m := tt.new
				if m == nil { // run --follow: the handler, then records
					m = func() proto.Message { return &wfdv1.Record{} }
					if i == 0 {
						m = newHandler
					}
				}
				msg := m()
				if err := protojson.Unmarshal([]byte(line), msg); err != nil {
					t.Fatalf("line %d %q: %v", i, line, err)
				}
				ms = append(ms, msg)
			}
			tt.check(t, ms)
		})
	}
}
