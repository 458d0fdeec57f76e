package faultstore

import (
	"context"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// Funcs replace the Store's methods, one function per method with the
// method's signature (litestream's mock style). A nil function passes the
// call to the wrapped store; a function that wants the real behaviour for
// some calls calls Store.Inner itself.
type Funcs struct {
	WriteFunc              func(ctx context.Context, changes ...persistence.Change) error
	GetHandlerFunc         func(ctx context.Context, id string) (persistence.Handler, error)
	LoadHandlerFunc        func(ctx context.Context, id string) (persistence.Handler, []byte, error)
	LoadSnapshotFunc       func(ctx context.Context, id string) ([]byte, error)
	ListHandlersFunc       func(ctx context.Context, q persistence.Query) ([]persistence.Handler, string, error)
	ReadRecordsFunc        func(ctx context.Context, id string, afterSeq uint64, limit int) ([]persistence.Record, error)
	DueTimersFunc          func(ctx context.Context, before time.Time, limit int) ([]persistence.Timer, error)
	WaitingForFunc         func(ctx context.Context, key string, limit int) ([]string, error)
	LongestIdleFunc        func(ctx context.Context, before time.Time, limit int) ([]persistence.Idle, error)
	CountFunc              func(ctx context.Context) (persistence.Counts, error)
	GetTaskFunc            func(ctx context.Context, id string) (persistence.Task, error)
	ListTasksFunc          func(ctx context.Context, q persistence.TaskQuery) ([]persistence.Task, string, error)
	PublishFunc            func(ctx context.Context, p persistence.Published) (persistence.Published, error)
	FindPublishedFunc      func(ctx context.Context, key, handlerID string, since time.Time) (persistence.Published, bool, error)
	PublishedAfterFunc     func(ctx context.Context, afterSeq uint64, limit int) ([]persistence.Published, error)
	ListPublishedFunc      func(ctx context.Context, q persistence.PublishedQuery) ([]persistence.Published, string, error)
	FinishedBeforeFunc     func(ctx context.Context, before time.Time, after *persistence.Finished, limit int) ([]persistence.Finished, error)
	PutWorkflowFunc        func(ctx context.Context, def persistence.WorkflowDef, ifHash string) error
	GetWorkflowFunc        func(ctx context.Context, name, version string) (persistence.WorkflowDef, error)
	ListWorkflowDefsFunc   func(ctx context.Context) ([]persistence.WorkflowDef, error)
	SetCurrentWorkflowFunc func(ctx context.Context, name, version string) error
	DeleteWorkflowFunc     func(ctx context.Context, name, version, ifHash string) error
	CountVersionsFunc      func(ctx context.Context, workflow string) ([]persistence.VersionCount, error)
	RunningVersionsFunc    func(ctx context.Context, workflow string) ([]string, error)
	CreateScheduleFunc     func(ctx context.Context, s persistence.Schedule) (persistence.Schedule, error)
	GetScheduleFunc        func(ctx context.Context, id string) (persistence.Schedule, error)
	ListSchedulesFunc      func(ctx context.Context, pageSize int, pageToken string) ([]persistence.Schedule, string, error)
	UpdateScheduleFunc     func(ctx context.Context, s persistence.Schedule, expectRevision uint64) (persistence.Schedule, error)
	DeleteScheduleFunc     func(ctx context.Context, id string) error
	DueSchedulesFunc       func(ctx context.Context, before time.Time, limit int) ([]persistence.Schedule, error)
	UpdateSlotsFunc        func(ctx context.Context, k persistence.SlotKey, c persistence.SlotChange) (persistence.SlotResult, error)
	SlotOfFunc             func(ctx context.Context, k persistence.SlotKey, id string) (int, error)
	ListSlotsFunc          func(ctx context.Context, k persistence.SlotKey, limit int) ([]persistence.SlotEntry, []persistence.SlotEntry, error)
	SlotKeysFunc           func(ctx context.Context, after persistence.SlotKey, limit int) ([]persistence.SlotKeyInfo, error)
	DueSlotsFunc           func(ctx context.Context, before time.Time, limit int) ([]persistence.SlotKey, error)
	PendingSlotsFunc       func(ctx context.Context, limit int) ([]persistence.SlotPending, error)
	CloseFunc              func() error
}

// Update changes the functions while the store is in use: fn edits a copy
// of the current set, which then replaces it at once, so the functions
// set together (the two reads of a load, say) take effect together. Calls
// under way finish with the function they began with.
func (s *Store) Update(fn func(f *Funcs)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var f Funcs
	if cur := s.funcs.Load(); cur != nil {
		f = *cur
	}
	fn(&f)
	s.funcs.Store(&f)
}

// Reset passes every method to the wrapped store again. Counts stay.
func (s *Store) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.funcs.Store(nil)
}

// current returns the functions set now (all nil if none).
func (s *Store) current() Funcs {
	if f := s.funcs.Load(); f != nil {
		return *f
	}
	return Funcs{}
}
