// Package storetest is the conformance suite for persistence.Store
// implementations. Every backend runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) persistence.Store {
//			s, err := mybackend.Open(filepath.Join(t.TempDir(), "wfd.db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// The suite checks behaviour through the Store interface only, against a
// simple in-memory model of what the store should contain, so the same
// expectations hold for every backend.
//
// A backend whose stores can share their storage as replicas also runs
// RunReplicas, the suites of persistence.Leaser (with Claimer) and
// persistence.WorkerRoutes; a suite whose interface the store does not
// implement is skipped:
//
//	func TestConformanceReplicas(t *testing.T) {
//		storetest.RunReplicas(t, func(t *testing.T) storetest.OpenFunc {
//			url := newDatabase(t)
//			return func(t *testing.T) persistence.Store { return openShared(t, url) }
//		})
//	}
//
// PageTokens pins a backend's page tokens, which clients keep across
// upgrades, to those it issued before.
package storetest

import (
	"testing"

	"github.com/wfd-dev/wfd/persistence"
)

// OpenFunc returns a new, empty store. The suite closes it when the test
// ends (Close must therefore tolerate being called twice). It may be called
// from parallel subtests.
type OpenFunc func(t *testing.T) persistence.Store

// Run runs the conformance suite against the stores open returns.
func Run(t *testing.T, open OpenFunc) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, open OpenFunc)
	}{
		{"CreateGetUpdate", testCreateGetUpdate},
		{"CreateExisting", testCreateExisting},
		{"IfOwner", testIfOwner},
		{"Revision", testRevision},
		{"IfRevision", testIfRevision},
		{"ConcurrentIfRevision", testConcurrentIfRevision},
		{"FinishedIsFinal", testFinishedIsFinal},
		{"AtomicWrite", testAtomicWrite},
		{"InvalidChanges", testInvalidChanges},
		{"Snapshot", testSnapshot},
		{"Records", testRecords},
		{"ReadRecordsLimits", testReadRecordsLimits},
		{"ListHandlersFilters", testListHandlersFilters},
		{"ListHandlersPaging", testListHandlersPaging},
		{"ListHandlersErrors", testListHandlersErrors},
		{"ListHandlersOrder", testListHandlersOrder},
		{"ListHandlersPagingStable", testListHandlersPagingStable},
		{"IndexCleanup", testIndexCleanup},
		{"Delete", testDelete},
		{"DueTimers", testDueTimers},
		{"WaitingFor", testWaitingFor},
		{"LongestIdle", testLongestIdle},
		{"Count", testCount},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ConcurrentCreate", testConcurrentCreate},
		{"ConcurrentConflicts", testConcurrentConflicts},
		{"TaskUpsertGet", testTaskUpsertGet},
		{"InvalidTasks", testInvalidTasks},
		{"TaskTransitions", testTaskTransitions},
		{"ListTasksFilters", testListTasksFilters},
		{"ListTasksOrder", testListTasksOrder},
		{"ListTasksPaging", testListTasksPaging},
		{"ListTasksClaimOverdue", testListTasksClaimOverdue},
		{"ListTasksErrors", testListTasksErrors},
		{"TaskHandlerDelete", testTaskHandlerDelete},
		{"TaskCounts", testTaskCounts},
		{"Publish", testPublish},
		{"FindPublished", testFindPublished},
		{"PublishedAfter", testPublishedAfter},
		{"ListPublished", testListPublished},
		{"ListPublishedErrors", testListPublishedErrors},
		{"DeleteKeepsPublished", testDeleteKeepsPublished},
		{"FinishedBefore", testFinishedBefore},
		{"ConcurrentTasksAndPublish", testConcurrentTasksAndPublish},
		{"WorkflowDefs", testWorkflowDefs},
		{"WorkflowVersions", testWorkflowVersions},
		{"ListHandlersVersion", testListHandlersVersion},
		{"CountVersions", testCountVersions},
		{"RunningVersions", testRunningVersions},
		{"ListWorkflowDefs", testListWorkflowDefs},
		{"InvalidWorkflowDefs", testInvalidWorkflowDefs},
		{"ConcurrentWorkflowPuts", testConcurrentWorkflowPuts},
		{"ConcurrentCurrent", testConcurrentCurrent},
		{"Schedules", testSchedules},
		{"InvalidSchedules", testInvalidSchedules},
		{"ConcurrentScheduleUpdates", testConcurrentScheduleUpdates},
		{"ListSchedules", testListSchedules},
		{"DueSchedules", testDueSchedules},
		{"Attributes", testAttributes},
		{"ListWhere", testListWhere},
		{"ListWhereOrder", testListWhereOrder},
		{"ListWhereRefused", testListWhereRefused},
		{"ListWherePaging", testListWherePaging},
		{"Slots", testSlots},
		{"SlotKeys", testSlotKeys},
		{"SlotsRate", testSlotsRate},
		{"SlotsRateRefused", testSlotsRateRefused},
		{"InvalidSlots", testInvalidSlots},
		{"ConcurrentSlots", testConcurrentSlots},
		{"Closed", testClosed},
		{"CanceledContext", testCanceledContext},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, open)
		})
	}
}

// openStore opens a store and closes it when the test ends.
func openStore(t *testing.T, open OpenFunc) persistence.Store {
	t.Helper()
	s := open(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
