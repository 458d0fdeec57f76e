// Package schedules runs workflow schedules in the server: the API's
// schedule methods (Service) and the loop that fires their ticks
// (Scheduler.Loop). What a tick does is decided by package schedule;
// this package reads the due schedules from the store, acts on each
// decision (cancels, starts) and records it.
//
// Exactly once: every run's handler id is derived from its schedule and
// tick (schedule.HandlerID), and the runtime's start is idempotent by
// handler id, so a tick starts at most one handler whoever fires it and
// however often. The loop acts first and records after, with the
// revision it read (persistence.Schedules.UpdateSchedule): a replica
// that crashes between the two leaves the state unrecorded, and the next
// pass (its own after a restart, or another replica's) plans the same
// ticks again, with the same handler ids, and finds them started. A
// replica whose record loses to another's drops its decision.
package schedules
