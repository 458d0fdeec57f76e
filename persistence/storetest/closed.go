package storetest

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// storeCalls calls every Store method except Close, for tests that expect
// all of them to fail the same way.
func storeCalls(s persistence.Store, id string) map[string]func(ctx context.Context) error {
	calls := map[string]func(ctx context.Context) error{
		"Write": func(ctx context.Context) error {
			return s.Write(ctx, persistence.Change{Handler: newHandler(id, "wf")})
		},
		"GetHandler": func(ctx context.Context) error {
			_, err := s.GetHandler(ctx, id)
			return err
		},
		"LoadHandler": func(ctx context.Context) error {
			_, _, err := s.LoadHandler(ctx, id)
			return err
		},
		"LoadSnapshot": func(ctx context.Context) error {
			_, err := s.LoadSnapshot(ctx, id)
			return err
		},
		"ListHandlers": func(ctx context.Context) error {
			_, _, err := s.ListHandlers(ctx, persistence.Query{})
			return err
		},
		"ReadRecords": func(ctx context.Context) error {
			_, err := s.ReadRecords(ctx, id, 0, 0)
			return err
		},
		"DueTimers": func(ctx context.Context) error {
			_, err := s.DueTimers(ctx, time.Now(), 0)
			return err
		},
		"WaitingFor": func(ctx context.Context) error {
			_, err := s.WaitingFor(ctx, "k", 0)
			return err
		},
		"LongestIdle": func(ctx context.Context) error {
			_, err := s.LongestIdle(ctx, time.Now(), 0)
			return err
		},
		"Count": func(ctx context.Context) error {
			_, err := s.Count(ctx)
			return err
		},
		"GetTask": func(ctx context.Context) error {
			_, err := s.GetTask(ctx, id+":w")
			return err
		},
		"ListTasks": func(ctx context.Context) error {
			_, _, err := s.ListTasks(ctx, persistence.TaskQuery{})
			return err
		},
		"Publish": func(ctx context.Context) error {
			_, err := s.Publish(ctx, persistence.Published{ID: "e", Key: "k", At: time.Now()})
			return err
		},
		"FindPublished": func(ctx context.Context) error {
			_, _, err := s.FindPublished(ctx, "k", id, time.Time{})
			return err
		},
		"PublishedAfter": func(ctx context.Context) error {
			_, err := s.PublishedAfter(ctx, 0, 0)
			return err
		},
		"PutWorkflow": func(ctx context.Context) error {
			return s.PutWorkflow(ctx, newDef("wf", "v", "1"), "")
		},
		"GetWorkflow": func(ctx context.Context) error {
			_, err := s.GetWorkflow(ctx, "wf", "")
			return err
		},
		"SetCurrentWorkflow": func(ctx context.Context) error {
			return s.SetCurrentWorkflow(ctx, "wf", "v")
		},
		"RunningVersions": func(ctx context.Context) error {
			_, err := s.RunningVersions(ctx, "wf")
			return err
		},
		"CountVersions": func(ctx context.Context) error {
			_, err := s.CountVersions(ctx, "wf")
			return err
		},
		"ListWorkflowDefs": func(ctx context.Context) error {
			_, err := s.ListWorkflowDefs(ctx)
			return err
		},
		"DeleteWorkflow": func(ctx context.Context) error {
			return s.DeleteWorkflow(ctx, "wf", "", "")
		},
	}
	maps.Copy(calls, scheduleCalls(s))
	return calls
}

// scheduleCalls calls every Schedules method, on the schedule "sched".
func scheduleCalls(s persistence.Schedules) map[string]func(ctx context.Context) error {
	return map[string]func(ctx context.Context) error{
		"CreateSchedule": func(ctx context.Context) error {
			_, err := s.CreateSchedule(ctx, newSchedule("new", time.Now()))
			return err
		},
		"GetSchedule": func(ctx context.Context) error {
			_, err := s.GetSchedule(ctx, "sched")
			return err
		},
		"ListSchedules": func(ctx context.Context) error {
			_, _, err := s.ListSchedules(ctx, 0, "")
			return err
		},
		"UpdateSchedule": func(ctx context.Context) error {
			_, err := s.UpdateSchedule(ctx, newSchedule("sched", time.Now()), 1)
			return err
		},
		"DeleteSchedule": func(ctx context.Context) error {
			return s.DeleteSchedule(ctx, "sched")
		},
		"DueSchedules": func(ctx context.Context) error {
			_, err := s.DueSchedules(ctx, time.Now(), 0)
			return err
		},
	}
}

func testClosed(t *testing.T, open OpenFunc) {
	s := open(t)
	id := newIDs(t, 1)[0]
	h := newHandler(id, "wf")
	write(t, s, persistence.Change{Handler: h, Tasks: []persistence.Task{newTask(h, "w", baseTime())}})
	createSchedule(t, s, newSchedule("sched", baseTime()))
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for name, call := range storeCalls(s, id) {
		t.Run(name, func(t *testing.T) {
			wantErr(t, name+" after Close", call(t.Context()), persistence.ErrUnavailable)
		})
	}
}

func testCanceledContext(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	id := newIDs(t, 1)[0]
	write(t, s, persistence.Change{Handler: newHandler(id, "wf")})
	createSchedule(t, s, newSchedule("sched", baseTime()))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for name, call := range storeCalls(s, id) {
		t.Run(name, func(t *testing.T) {
			wantErr(t, name+" with a canceled context", call(ctx), context.Canceled)
		})
	}
}
