package faultstore

import "sync/atomic"

// Calls counts the calls of each method, including those a set function
// answered, from the moment the call began. Read a count with Load; a test
// that compares counts before and after an action reads both.
type Calls struct {
	Write              atomic.Int64
	GetHandler         atomic.Int64
	LoadHandler        atomic.Int64
	LoadSnapshot       atomic.Int64
	ListHandlers       atomic.Int64
	ReadRecords        atomic.Int64
	DueTimers          atomic.Int64
	WaitingFor         atomic.Int64
	LongestIdle        atomic.Int64
	Count              atomic.Int64
	GetTask            atomic.Int64
	ListTasks          atomic.Int64
	Publish            atomic.Int64
	FindPublished      atomic.Int64
	PublishedAfter     atomic.Int64
	ListPublished      atomic.Int64
	FinishedBefore     atomic.Int64
	PutWorkflow        atomic.Int64
	GetWorkflow        atomic.Int64
	ListWorkflowDefs   atomic.Int64
	SetCurrentWorkflow atomic.Int64
	DeleteWorkflow     atomic.Int64
	CountVersions      atomic.Int64
	RunningVersions    atomic.Int64
	CreateSchedule     atomic.Int64
	GetSchedule        atomic.Int64
	ListSchedules      atomic.Int64
	UpdateSchedule     atomic.Int64
	DeleteSchedule     atomic.Int64
	DueSchedules       atomic.Int64
	UpdateSlots        atomic.Int64
	SlotOf             atomic.Int64
	ListSlots          atomic.Int64
	SlotKeys           atomic.Int64
	DueSlots           atomic.Int64
	PendingSlots       atomic.Int64
	Close              atomic.Int64
}
