package cli

import (
	"strings"
	"testing"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// TestVersionTexts: what the versions' records, waits, workers and
// upgrade outcomes read like.
func TestVersionTexts(t *testing.T) {
	upgraded := &wfdv1.Record{Seq: 7, Kind: &wfdv1.Record_HandlerUpgraded{HandlerUpgraded: &wfdv1.HandlerUpgraded{FromVersion: "v1", ToVersion: "v2"}}}
	waiting := &wfdv1.RunWaitingForWorker{Step: "review", Attempt: 1, Waiting: true, WorkflowVersion: "v1"}
	h := &wfdv1.Handler{HandlerId: "h", Workflow: "expense", WorkflowVersion: "v1", Status: wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING,
		WaitingForWorker: []*wfdv1.RunWaitingForWorker{waiting}}
	var fields []string
	for _, f := range handlerFields(h) {
		fields = append(fields, f[0]+": "+f[1])
	}
	ups := func(os ...wfdv1.UpgradeOutcome) []*wfdv1.HandlerUpgrade {
		var out []*wfdv1.HandlerUpgrade
		for _, o := range os {
			out = append(out, &wfdv1.HandlerUpgrade{Outcome: o})
		}
		return out
	}
	const (
		canMove = wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_CAN_MOVE
		moved   = wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_MOVED
		refused = wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_REFUSED
		busy    = wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_BUSY
	)
	for _, c := range []struct{ got, want string }{
		{recordLine(upgraded), "#7 upgraded from v1 to v2"},
		{recordLine(&wfdv1.Record{Seq: 3, Kind: &wfdv1.Record_RunWaitingForWorker{RunWaitingForWorker: waiting}}),
			"#3 step review waits for a worker (attempt 1): every worker that serves version v1 is busy"},
		{recordLine(&wfdv1.Record{Seq: 4, Kind: &wfdv1.Record_RunWaitingForWorker{RunWaitingForWorker: &wfdv1.RunWaitingForWorker{
			Step: "review", Attempt: 1, Waiting: true, NoneConnected: true}}}),
			"#4 step review waits for a worker (attempt 1): no worker that serves the workflow is connected"},
		{recordLine(&wfdv1.Record{Seq: 5, Kind: &wfdv1.Record_RunWaitingForWorker{RunWaitingForWorker: &wfdv1.RunWaitingForWorker{
			Step: "review", Attempt: 1, LostWorker: "w-1"}}}),
			"#5 step review (attempt 1): worker w-1 was lost mid-run; the run is dispatched again"},
		{strings.Join(fields, "\n"), "version: v1"},
		{strings.Join(fields, "\n"), "waiting for a worker: step review attempt 1 since -, for a worker serving expense@v1"},
		{versionWorkersText(&wfdv1.WorkflowVersion{}), "-"},
		{versionWorkersText(&wfdv1.WorkflowVersion{Workers: []string{"a", "b"}, WorkersConnected: 2}), "a,b"},
		{versionWorkersText(&wfdv1.WorkflowVersion{Workers: []string{"a", "b", "c", "d"}, WorkersConnected: 4}), "4 workers"},
		{versionSourceText(&wfdv1.WorkflowVersion{BuiltIn: true}), "built in"},
		{upgradeSummary(ups(canMove, canMove, refused)), "2 can move, 1 refused"},
		{upgradeSummary(ups(moved, refused, busy, busy)), "1 moved, 1 refused, 2 busy: retry those once they are idle"},
		{upgradeSummary(nil), "no running handlers of that version"},
	} {
		if !strings.Contains(c.got, c.want) {
			t.Errorf("got %q, want %q in it", c.got, c.want)
		}
	}
	if err := upgradeError(ups(canMove, refused), true); err != nil {
		t.Errorf("a dry run with a refusal: %v, want no error", err)
	}
	if err := upgradeError(ups(moved, refused, busy), false); err == nil || err.Error() != "not every handler moved: 1 refused, 1 busy" {
		t.Errorf("an upgrade with a refusal: %v", err)
	}
	if err := upgradeError(ups(moved), false); err != nil {
		t.Errorf("an upgrade that moved all: %v", err)
	}
}
