-- Workflow schedules (persistence.Schedules, schedules.go). The encoded
-- schedule (JSON, persistence/internal/codec) is the value; beside it, as
-- columns, what is indexed or compared: whether it is paused, its next
-- tick (NULL: none) and its revision. The partial index holds the
-- schedules that can come due, earliest first, so DueSchedules reads it
-- from its start. Revisions come from a sequence of their own: never
-- reused, even for a schedule deleted and created again.

-- +goose Up
CREATE SEQUENCE wfd_schedule_revisions;
CREATE TABLE wfd_schedules (
    id       text COLLATE "C" PRIMARY KEY,
    paused   boolean NOT NULL,
    next_at  timestamptz,               -- NULL: no next tick
    next_ns  smallint,
    revision bigint NOT NULL,
    sched    bytea NOT NULL             -- the whole Schedule but its revision (the column)
);
CREATE INDEX wfd_schedules_due ON wfd_schedules (next_at, next_ns, id)
    WHERE NOT paused AND next_at IS NOT NULL;

-- +goose Down
DROP TABLE wfd_schedules;
DROP SEQUENCE wfd_schedule_revisions;
