package histcheck

import (
	"strings"
	"testing"
)

// TestUnexpected: an internal error is shown with the cause its replica
// logged under its error id, the handler's id left out so that one cause
// is one line; transport errors and refusals of finished handlers are not
// shown.
func TestUnexpected(t *testing.T) {
	causes := map[string]string{}
	causesFrom(`time=2026-11-28T02:43:10.155Z level=ERROR msg="call failed" procedure=/wfd.v1.WorkflowService/RunWorkflow code=internal error_id=4OIBRZ3XJM3P err="postgres: write: change 0: handler \"n-b-00919\": record seq 1 is not after last seq 4: persistence: conflict"`+"\n", causes)
	ops := []Op{
		{Kind: OpStart, Handler: "n-b-00919", Code: "internal", Err: "internal: internal error (error id 4OIBRZ3XJM3P)"},
		{Kind: OpStart, Handler: "x", Code: "internal", Err: "internal: protocol error: incomplete envelope: http2: client connection lost"},
		{Kind: OpAnswer, Handler: "y", Code: "failed_precondition", Err: "handler is finished", Finished: true},
		{Kind: OpStart, Handler: "z", Code: "unavailable", Err: "unavailable: no replica up"},
	}
	got := unexpected(ops, causes)
	want := `start internal: internal error: postgres: write: change 0: handler "<id>": record seq 1 is not after last seq 4: persistence: conflict (×1)`
	if len(got) != 1 || got[0] != want {
		t.Errorf("got %q\nwant %q", strings.Join(got, "\n"), want)
	}
}
