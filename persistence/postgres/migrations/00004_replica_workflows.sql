-- What the step workers connected to each replica serve
-- (persistence.WorkerRoutes, workers.go): the work of a worker-defined
-- workflow goes to a replica with its workers. Rows go with their
-- replica's registration (Leave deletes it); those of an expired one are
-- ignored.

-- +goose Up
CREATE TABLE wfd_replica_workflows (
    replica_id text COLLATE "C" NOT NULL REFERENCES wfd_replicas (id) ON DELETE CASCADE,
    workflow   text COLLATE "C" NOT NULL,
    hash       text COLLATE "C" NOT NULL,
    PRIMARY KEY (replica_id, workflow, hash)
);

-- Busy running handlers in memory somewhere (status 1: running,
-- residency 1: active), the candidates of StrandedHandlers.
CREATE INDEX wfd_handlers_busy ON wfd_handlers (workflow, id)
    WHERE status = 1 AND residency = 1 AND idle_since IS NULL;

-- +goose Down
DROP INDEX wfd_handlers_busy;
DROP TABLE wfd_replica_workflows;
