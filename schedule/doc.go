// Package schedule is the domain logic of workflow schedules: when a
// schedule fires, and what the scheduler does at each tick. It is pure:
// it reads no clock (every function takes now), starts nothing, and
// stores nothing; the server's scheduler loop does that with what it
// decides, and persistence keeps the schedules (persistence.Schedules).
//
// # Specs
//
// A Spec is a cron expression of five fields (or a descriptor such as
// @daily), read in an IANA time zone, UTC by default, with the
// robfig/cron parser; or a fixed interval of whole seconds, shifted by a
// phase, whose ticks are the instants Unix epoch + phase + k*interval.
// Start and End bound the ticks. ParseSpec reports what is wrong as a
// *SpecError that names the cron field ("cron field 2 (hour): 25 out of
// range 0-23") or the part of the spec. Ticks are whole seconds, in UTC.
//
// Daylight saving time is robfig/cron's: a time of day a change skips has
// no tick that day, and one a change repeats has two, an hour apart
// (Spec.Next). A schedule that must fire exactly once a day whatever the
// zone does picks a time outside the change (or UTC).
//
// # Planning
//
// Plan decides, for a schedule and the time now, what to do with the
// ticks due since the last pass: the overlap policy (Overlap: skip,
// buffer one, allow, cancel previous) says what a tick does while runs
// the schedule started still run, the catch-up window (Policy) which
// late ticks still start (those older are recorded as missed). Trigger
// decides a run now, outside the spec; Backfill the ticks of a past
// range. Each returns a Decision: handlers to cancel, runs to start, and
// the State that records it (last tick, next tick, the buffered run, the
// runs that may still run, recent outcomes, counters). The same
// schedule, state and time always give the same decision.
//
// # Exactly once
//
// Every run's handler id is derived from the schedule and its tick
// (HandlerID: sched:<id>:<tick in UTC to the second>), and the server's
// start is idempotent by handler id: a tick can start at most one
// handler, however often it is planned, by however many replicas, after
// however many crashes. The scheduler loop of each replica acts first
// and records after:
//
//  1. read the due schedules (persistence.Schedules.DueSchedules);
//  2. for each: Load, State.Prune the runs that ended (or whose handler
//     is gone), Plan;
//  3. if the decision Changed, act on it: cancel Decision.Cancel, start
//     each of Decision.Start (a handler that exists already was started
//     by an earlier attempt at the same tick: that is success); a start
//     that can never succeed (the workflow is gone) is recorded with
//     State.Fail on the decision's state; one that fails for now (the
//     store is unavailable) ends the pass for this schedule, unrecorded;
//  4. record: SetState and UpdateSchedule with the revision read in 1.
//     ErrConflict means another replica recorded first (or an operator
//     changed the schedule): drop this decision, the next pass reads the
//     new state.
//
// A crash, or a failed write, between 3 and 4 loses nothing: the state
// was not recorded, so the next pass plans the same ticks again, with the
// same handler ids, and finds their handlers started. The revision makes
// exactly one replica's record of a pass stick, so each tick is counted,
// and moves LastTick, once.
//
// Replicas that plan one schedule from the same revision decide the
// same, unless a run ended between their prunes or their clocks straddle
// a tick or the catch-up window: then the replica whose record lost may
// have started a run for a tick the winner recorded as skipped, buffered
// or missed. That run is not in Running (the overlap policy does not
// count it), but it is never a second run of its tick. A server that
// wants to rule even that out runs its scheduler loop on one replica at
// a time; the revision stays the safety net.
//
// # Pausing and changing
//
// Paused schedules are not due (the store leaves them out of
// DueSchedules); a Plan of one starts nothing and moves LastTick to now.
// SetPaused(false) resumes counting at now: the ticks of the pause are
// not caught up, whatever the catch-up window. SetSpec does the same for
// a new spec. A buffered run survives both.
//
// # Ids
//
// Schedule ids are [A-Za-z0-9._-]{1,64} (ValidateID). A tick's handler id
// is sched:<id>:<YYYYMMDDThhmmssZ>, a trigger's
// sched:<id>:trigger:<Unix nanoseconds of the trigger>; both fit the
// API's handler ids ([A-Za-z0-9._:-]{1,128}), and ParseHandlerID reads
// them back.
package schedule
