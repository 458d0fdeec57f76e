package faultstore

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// Store is a persistence.Store that passes every call to the store it
// wraps unless a function of Funcs is set for that method, and counts the
// calls. It is safe for concurrent use, and so is changing its functions
// (Update, Reset) while it is used.
type Store struct {
	// Calls counts the calls of each method.
	Calls Calls

	inner persistence.Store
	// funcs is replaced as a whole (copy on write, under mu), so a call
	// reads a consistent set without a lock.
	funcs atomic.Pointer[Funcs]
	mu    sync.Mutex
}

var _ persistence.Store = (*Store)(nil)

// New returns a Store that wraps inner and passes every call through.
func New(inner persistence.Store) *Store {
	return &Store{inner: inner}
}

// Inner returns the wrapped store: what a function calls to pass a call
// through, and what a test reads to see the store as it is.
func (s *Store) Inner() persistence.Store { return s.inner }

// Write implements persistence.Store.
func (s *Store) Write(ctx context.Context, changes ...persistence.Change) error {
	s.Calls.Write.Add(1)
	if f := s.current().WriteFunc; f != nil {
		return f(ctx, changes...)
	}
	return s.inner.Write(ctx, changes...)
}

// GetHandler implements persistence.Store.
func (s *Store) GetHandler(ctx context.Context, id string) (persistence.Handler, error) {
	s.Calls.GetHandler.Add(1)
	if f := s.current().GetHandlerFunc; f != nil {
		return f(ctx, id)
	}
	return s.inner.GetHandler(ctx, id)
}

// LoadHandler implements persistence.Store.
func (s *Store) LoadHandler(ctx context.Context, id string) (persistence.Handler, []byte, error) {
	s.Calls.LoadHandler.Add(1)
	if f := s.current().LoadHandlerFunc; f != nil {
		return f(ctx, id)
	}
	return s.inner.LoadHandler(ctx, id)
}

// LoadSnapshot implements persistence.Store.
func (s *Store) LoadSnapshot(ctx context.Context, id string) ([]byte, error) {
	s.Calls.LoadSnapshot.Add(1)
	if f := s.current().LoadSnapshotFunc; f != nil {
		return f(ctx, id)
	}
	return s.inner.LoadSnapshot(ctx, id)
}

// ListHandlers implements persistence.Store.
func (s *Store) ListHandlers(ctx context.Context, q persistence.Query) ([]persistence.Handler, string, error) {
	s.Calls.ListHandlers.Add(1)
	if f := s.current().ListHandlersFunc; f != nil {
		return f(ctx, q)
	}
	return s.inner.ListHandlers(ctx, q)
}

// ReadRecords implements persistence.Store.
func (s *Store) ReadRecords(ctx context.Context, id string, afterSeq uint64, limit int) ([]persistence.Record, error) {
	s.Calls.ReadRecords.Add(1)
	if f := s.current().ReadRecordsFunc; f != nil {
		return f(ctx, id, afterSeq, limit)
	}
	return s.inner.ReadRecords(ctx, id, afterSeq, limit)
}

// DueTimers implements persistence.Store.
func (s *Store) DueTimers(ctx context.Context, before time.Time, limit int) ([]persistence.Timer, error) {
	s.Calls.DueTimers.Add(1)
	if f := s.current().DueTimersFunc; f != nil {
		return f(ctx, before, limit)
	}
	return s.inner.DueTimers(ctx, before, limit)
}

// WaitingFor implements persistence.Store.
func (s *Store) WaitingFor(ctx context.Context, key string, limit int) ([]string, error) {
	s.Calls.WaitingFor.Add(1)
	if f := s.current().WaitingForFunc; f != nil {
		return f(ctx, key, limit)
	}
	return s.inner.WaitingFor(ctx, key, limit)
}

// LongestIdle implements persistence.Store.
func (s *Store) LongestIdle(ctx context.Context, before time.Time, limit int) ([]persistence.Idle, error) {
	s.Calls.LongestIdle.Add(1)
	if f := s.current().LongestIdleFunc; f != nil {
		return f(ctx, before, limit)
	}
	return s.inner.LongestIdle(ctx, before, limit)
}

// Count implements persistence.Store.
func (s *Store) Count(ctx context.Context) (persistence.Counts, error) {
	s.Calls.Count.Add(1)
	if f := s.current().CountFunc; f != nil {
		return f(ctx)
	}
	return s.inner.Count(ctx)
}

// GetTask implements persistence.Store.
func (s *Store) GetTask(ctx context.Context, id string) (persistence.Task, error) {
	s.Calls.GetTask.Add(1)
	if f := s.current().GetTaskFunc; f != nil {
		return f(ctx, id)
	}
	return s.inner.GetTask(ctx, id)
}

// ListTasks implements persistence.Store.
func (s *Store) ListTasks(ctx context.Context, q persistence.TaskQuery) ([]persistence.Task, string, error) {
	s.Calls.ListTasks.Add(1)
	if f := s.current().ListTasksFunc; f != nil {
		return f(ctx, q)
	}
	return s.inner.ListTasks(ctx, q)
}

// Publish implements persistence.Store.
func (s *Store) Publish(ctx context.Context, p persistence.Published) (persistence.Published, error) {
	s.Calls.Publish.Add(1)
	if f := s.current().PublishFunc; f != nil {
		return f(ctx, p)
	}
	return s.inner.Publish(ctx, p)
}

// FindPublished implements persistence.Store.
func (s *Store) FindPublished(ctx context.Context, key, handlerID string, since time.Time) (persistence.Published, bool, error) {
	s.Calls.FindPublished.Add(1)
	if f := s.current().FindPublishedFunc; f != nil {
		return f(ctx, key, handlerID, since)
	}
	return s.inner.FindPublished(ctx, key, handlerID, since)
}

// PublishedAfter implements persistence.Store.
func (s *Store) PublishedAfter(ctx context.Context, afterSeq uint64, limit int) ([]persistence.Published, error) {
	s.Calls.PublishedAfter.Add(1)
	if f := s.current().PublishedAfterFunc; f != nil {
		return f(ctx, afterSeq, limit)
	}
	return s.inner.PublishedAfter(ctx, afterSeq, limit)
}

// ListPublished implements persistence.Store.
func (s *Store) ListPublished(ctx context.Context, q persistence.PublishedQuery) ([]persistence.Published, string, error) {
	s.Calls.ListPublished.Add(1)
	if f := s.current().ListPublishedFunc; f != nil {
		return f(ctx, q)
	}
	return s.inner.ListPublished(ctx, q)
}

// FinishedBefore implements persistence.Store.
func (s *Store) FinishedBefore(ctx context.Context, before time.Time, after *persistence.Finished, limit int) ([]persistence.Finished, error) {
	s.Calls.FinishedBefore.Add(1)
	if f := s.current().FinishedBeforeFunc; f != nil {
		return f(ctx, before, after, limit)
	}
	return s.inner.FinishedBefore(ctx, before, after, limit)
}

// PutWorkflow implements persistence.Store.
func (s *Store) PutWorkflow(ctx context.Context, def persistence.WorkflowDef, ifHash string) error {
	s.Calls.PutWorkflow.Add(1)
	if f := s.current().PutWorkflowFunc; f != nil {
		return f(ctx, def, ifHash)
	}
	return s.inner.PutWorkflow(ctx, def, ifHash)
}

// GetWorkflow implements persistence.Store.
func (s *Store) GetWorkflow(ctx context.Context, name, version string) (persistence.WorkflowDef, error) {
	s.Calls.GetWorkflow.Add(1)
	if f := s.current().GetWorkflowFunc; f != nil {
		return f(ctx, name, version)
	}
	return s.inner.GetWorkflow(ctx, name, version)
}

// ListWorkflowDefs implements persistence.Store.
func (s *Store) ListWorkflowDefs(ctx context.Context) ([]persistence.WorkflowDef, error) {
	s.Calls.ListWorkflowDefs.Add(1)
	if f := s.current().ListWorkflowDefsFunc; f != nil {
		return f(ctx)
	}
	return s.inner.ListWorkflowDefs(ctx)
}

// SetCurrentWorkflow implements persistence.Store.
func (s *Store) SetCurrentWorkflow(ctx context.Context, name, version string) error {
	s.Calls.SetCurrentWorkflow.Add(1)
	if f := s.current().SetCurrentWorkflowFunc; f != nil {
		return f(ctx, name, version)
	}
	return s.inner.SetCurrentWorkflow(ctx, name, version)
}

// DeleteWorkflow implements persistence.Store.
func (s *Store) DeleteWorkflow(ctx context.Context, name, version, ifHash string) error {
	s.Calls.DeleteWorkflow.Add(1)
	if f := s.current().DeleteWorkflowFunc; f != nil {
		return f(ctx, name, version, ifHash)
	}
	return s.inner.DeleteWorkflow(ctx, name, version, ifHash)
}

// CountVersions implements persistence.Store.
func (s *Store) CountVersions(ctx context.Context, workflow string) ([]persistence.VersionCount, error) {
	s.Calls.CountVersions.Add(1)
	if f := s.current().CountVersionsFunc; f != nil {
		return f(ctx, workflow)
	}
	return s.inner.CountVersions(ctx, workflow)
}

// RunningVersions implements persistence.Store.
func (s *Store) RunningVersions(ctx context.Context, workflow string) ([]string, error) {
	s.Calls.RunningVersions.Add(1)
	if f := s.current().RunningVersionsFunc; f != nil {
		return f(ctx, workflow)
	}
	return s.inner.RunningVersions(ctx, workflow)
}

// Close implements persistence.Store. It closes the wrapped store (unless
// CloseFunc is set).
func (s *Store) Close() error {
	s.Calls.Close.Add(1)
	if f := s.current().CloseFunc; f != nil {
		return f()
	}
	return s.inner.Close()
}
