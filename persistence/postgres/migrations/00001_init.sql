-- The first schema of wfd's PostgreSQL store. See doc.go for what each
-- table and index answers. Ids, names and keys are text COLLATE "C" so
-- that they order by bytes, as in the bbolt store; times are timestamptz
-- (microseconds) plus the nanoseconds below the microsecond (*_ns), so
-- they order and round-trip exactly.

-- +goose Up
CREATE TABLE wfd_handlers (
    id           text COLLATE "C" PRIMARY KEY,
    workflow     text COLLATE "C" NOT NULL,
    status       smallint NOT NULL,
    residency    smallint NOT NULL,
    owner        text COLLATE "C" NOT NULL,
    created_at   timestamptz NOT NULL,
    created_ns   smallint NOT NULL,
    idle_since   timestamptz,           -- NULL: not idle
    idle_ns      smallint,
    completed_at timestamptz,           -- set when finished (terminal, with a CompletedAt)
    completed_ns smallint,
    last_seq     bigint NOT NULL,       -- uint64 with its top bit flipped (see seq.go)
    meta         bytea NOT NULL         -- the whole Handler, wfd.storage.v1.HandlerMeta
);
CREATE INDEX wfd_handlers_created ON wfd_handlers (created_at, created_ns, id);
CREATE INDEX wfd_handlers_workflow ON wfd_handlers (workflow, created_at, created_ns, id);
CREATE INDEX wfd_handlers_status ON wfd_handlers (status, created_at, created_ns, id);
CREATE INDEX wfd_handlers_residency ON wfd_handlers (residency, created_at, created_ns, id);
CREATE INDEX wfd_handlers_idle ON wfd_handlers (idle_since, idle_ns, id) WHERE idle_since IS NOT NULL;
CREATE INDEX wfd_handlers_finished ON wfd_handlers (completed_at, completed_ns, id) WHERE completed_at IS NOT NULL;

CREATE TABLE wfd_snapshots (
    handler_id text COLLATE "C" PRIMARY KEY,
    data       bytea NOT NULL
);

CREATE TABLE wfd_records (
    handler_id text COLLATE "C" NOT NULL,
    seq        bigint NOT NULL,         -- uint64 with its top bit flipped
    data       bytea NOT NULL,
    PRIMARY KEY (handler_id, seq)
);

-- Waiter deadlines and handlers' own Deadlines (waiter_id '').
CREATE TABLE wfd_timers (
    handler_id text COLLATE "C" NOT NULL,
    waiter_id  text COLLATE "C" NOT NULL,
    due_at     timestamptz NOT NULL,
    due_ns     smallint NOT NULL,
    PRIMARY KEY (handler_id, waiter_id)
);
CREATE INDEX wfd_timers_due ON wfd_timers (due_at, due_ns, handler_id, waiter_id);

CREATE TABLE wfd_wait_keys (
    handler_id text COLLATE "C" NOT NULL,
    waiter_id  text COLLATE "C" NOT NULL,
    key        text COLLATE "C" NOT NULL,
    PRIMARY KEY (handler_id, waiter_id)
);
CREATE INDEX wfd_wait_keys_key ON wfd_wait_keys (key, handler_id);

CREATE TABLE wfd_tasks (
    id         text COLLATE "C" PRIMARY KEY,
    handler_id text COLLATE "C" NOT NULL,
    workflow   text COLLATE "C" NOT NULL,
    status     smallint NOT NULL,
    assignee   text COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL,
    created_ns smallint NOT NULL,
    meta       bytea NOT NULL           -- the whole Task, wfd.storage.v1.TaskMeta
);
CREATE INDEX wfd_tasks_created ON wfd_tasks (created_at, created_ns, id);
CREATE INDEX wfd_tasks_status ON wfd_tasks (status, created_at, created_ns, id);
CREATE INDEX wfd_tasks_assignee ON wfd_tasks (status, assignee, created_at, created_ns, id);
CREATE INDEX wfd_tasks_workflow ON wfd_tasks (workflow, created_at, created_ns, id);
CREATE INDEX wfd_tasks_handler ON wfd_tasks (handler_id, created_at, created_ns, id);

CREATE TABLE wfd_published (
    seq        bigint PRIMARY KEY,
    id         text COLLATE "C" NOT NULL UNIQUE,
    key        text COLLATE "C" NOT NULL,
    handler_id text COLLATE "C" NOT NULL,   -- '' for a global entry
    at         timestamptz NOT NULL,
    at_ns      smallint NOT NULL,
    entry      bytea NOT NULL           -- wfd.storage.v1.PublishedEvent
);
CREATE INDEX wfd_published_key_handler ON wfd_published (key, handler_id, at, at_ns, seq);
CREATE INDEX wfd_published_at ON wfd_published (at, at_ns, seq);
CREATE INDEX wfd_published_key ON wfd_published (key, at, at_ns, seq);
CREATE INDEX wfd_published_handler ON wfd_published (handler_id, at, at_ns, seq) WHERE handler_id <> '';

-- The log's last sequence number. Publish locks this row until it
-- commits, so sequence numbers are assigned in commit order, without gaps:
-- a reader that has seen seq n never sees a smaller one appear later.
CREATE TABLE wfd_published_seq (
    one  boolean PRIMARY KEY DEFAULT true CHECK (one),
    last bigint NOT NULL
);
INSERT INTO wfd_published_seq (last) VALUES (0);

CREATE TABLE wfd_workflows (
    name text COLLATE "C" PRIMARY KEY,
    hash text COLLATE "C" NOT NULL,
    def  bytea NOT NULL                 -- wfd.storage.v1.WorkflowDef
);

-- Counters for Count, kept by statement triggers in the transaction that
-- changes what they count: "handlers", "idle", "status/<n>",
-- "residency/<n>", "task_status/<n>".
CREATE TABLE wfd_counters (
    name text COLLATE "C" PRIMARY KEY,
    n    bigint NOT NULL
);

-- +goose StatementBegin
CREATE FUNCTION wfd_count_handlers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO wfd_counters (name, n)
        SELECT k, sum(d) FROM (
            SELECT 'handlers' AS k, 1 AS d FROM new_rows
            UNION ALL SELECT 'status/' || status, 1 FROM new_rows
            UNION ALL SELECT 'residency/' || residency, 1 FROM new_rows
            UNION ALL SELECT 'idle', 1 FROM new_rows WHERE idle_since IS NOT NULL
        ) c GROUP BY k HAVING sum(d) <> 0 ORDER BY k
        ON CONFLICT (name) DO UPDATE SET n = wfd_counters.n + excluded.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO wfd_counters (name, n)
        SELECT k, sum(d) FROM (
            SELECT 'handlers' AS k, -1 AS d FROM old_rows
            UNION ALL SELECT 'status/' || status, -1 FROM old_rows
            UNION ALL SELECT 'residency/' || residency, -1 FROM old_rows
            UNION ALL SELECT 'idle', -1 FROM old_rows WHERE idle_since IS NOT NULL
        ) c GROUP BY k HAVING sum(d) <> 0 ORDER BY k
        ON CONFLICT (name) DO UPDATE SET n = wfd_counters.n + excluded.n;
    ELSE
        INSERT INTO wfd_counters (name, n)
        SELECT k, sum(d) FROM (
            SELECT 'status/' || status AS k, 1 AS d FROM new_rows
            UNION ALL SELECT 'residency/' || residency, 1 FROM new_rows
            UNION ALL SELECT 'idle', 1 FROM new_rows WHERE idle_since IS NOT NULL
            UNION ALL SELECT 'status/' || status, -1 FROM old_rows
            UNION ALL SELECT 'residency/' || residency, -1 FROM old_rows
            UNION ALL SELECT 'idle', -1 FROM old_rows WHERE idle_since IS NOT NULL
        ) c GROUP BY k HAVING sum(d) <> 0 ORDER BY k
        ON CONFLICT (name) DO UPDATE SET n = wfd_counters.n + excluded.n;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION wfd_count_tasks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO wfd_counters (name, n)
        SELECT 'task_status/' || status, count(*) FROM new_rows GROUP BY status ORDER BY status
        ON CONFLICT (name) DO UPDATE SET n = wfd_counters.n + excluded.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO wfd_counters (name, n)
        SELECT 'task_status/' || status, -count(*) FROM old_rows GROUP BY status ORDER BY status
        ON CONFLICT (name) DO UPDATE SET n = wfd_counters.n + excluded.n;
    ELSE
        INSERT INTO wfd_counters (name, n)
        SELECT k, sum(d) FROM (
            SELECT 'task_status/' || status AS k, 1 AS d FROM new_rows
            UNION ALL SELECT 'task_status/' || status, -1 FROM old_rows
        ) c GROUP BY k HAVING sum(d) <> 0 ORDER BY k
        ON CONFLICT (name) DO UPDATE SET n = wfd_counters.n + excluded.n;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER wfd_handlers_count_insert AFTER INSERT ON wfd_handlers
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION wfd_count_handlers();
CREATE TRIGGER wfd_handlers_count_update AFTER UPDATE ON wfd_handlers
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION wfd_count_handlers();
CREATE TRIGGER wfd_handlers_count_delete AFTER DELETE ON wfd_handlers
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION wfd_count_handlers();
CREATE TRIGGER wfd_tasks_count_insert AFTER INSERT ON wfd_tasks
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION wfd_count_tasks();
CREATE TRIGGER wfd_tasks_count_update AFTER UPDATE ON wfd_tasks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION wfd_count_tasks();
CREATE TRIGGER wfd_tasks_count_delete AFTER DELETE ON wfd_tasks
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION wfd_count_tasks();

-- +goose Down
DROP TABLE wfd_counters, wfd_workflows, wfd_published_seq, wfd_published, wfd_tasks,
    wfd_wait_keys, wfd_timers, wfd_records, wfd_snapshots, wfd_handlers;
DROP FUNCTION wfd_count_handlers(), wfd_count_tasks();
