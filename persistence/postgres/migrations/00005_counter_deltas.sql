-- Counters kept as deltas (Count): the triggers of 00001 upserted one row
-- per counter, so every Write locked the same few rows, and two Writes
-- whose statements fired an insert trigger and then an update trigger
-- (INSERT ... ON CONFLICT DO UPDATE) could lock them in opposite orders
-- and deadlock (seen with several replicas). Now a trigger only appends
-- rows: Writes never wait for each other on a counter, Count sums the
-- rows per name, and the store folds them back into one row per name now
-- and then (counters.go).

-- +goose Up
CREATE TABLE wfd_counter_deltas (
    name text COLLATE "C" NOT NULL,
    n    bigint NOT NULL
);
INSERT INTO wfd_counter_deltas (name, n) SELECT name, n FROM wfd_counters WHERE n <> 0;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wfd_count_handlers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO wfd_counter_deltas (name, n)
        SELECT k, sum(d) FROM (
            SELECT 'handlers' AS k, 1 AS d FROM new_rows
            UNION ALL SELECT 'status/' || status, 1 FROM new_rows
            UNION ALL SELECT 'residency/' || residency, 1 FROM new_rows
            UNION ALL SELECT 'idle', 1 FROM new_rows WHERE idle_since IS NOT NULL
        ) c GROUP BY k HAVING sum(d) <> 0;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO wfd_counter_deltas (name, n)
        SELECT k, sum(d) FROM (
            SELECT 'handlers' AS k, -1 AS d FROM old_rows
            UNION ALL SELECT 'status/' || status, -1 FROM old_rows
            UNION ALL SELECT 'residency/' || residency, -1 FROM old_rows
            UNION ALL SELECT 'idle', -1 FROM old_rows WHERE idle_since IS NOT NULL
        ) c GROUP BY k HAVING sum(d) <> 0;
    ELSE
        INSERT INTO wfd_counter_deltas (name, n)
        SELECT k, sum(d) FROM (
            SELECT 'status/' || status AS k, 1 AS d FROM new_rows
            UNION ALL SELECT 'residency/' || residency, 1 FROM new_rows
            UNION ALL SELECT 'idle', 1 FROM new_rows WHERE idle_since IS NOT NULL
            UNION ALL SELECT 'status/' || status, -1 FROM old_rows
            UNION ALL SELECT 'residency/' || residency, -1 FROM old_rows
            UNION ALL SELECT 'idle', -1 FROM old_rows WHERE idle_since IS NOT NULL
        ) c GROUP BY k HAVING sum(d) <> 0;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wfd_count_tasks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO wfd_counter_deltas (name, n)
        SELECT 'task_status/' || status, count(*) FROM new_rows GROUP BY status;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO wfd_counter_deltas (name, n)
        SELECT 'task_status/' || status, -count(*) FROM old_rows GROUP BY status;
    ELSE
        INSERT INTO wfd_counter_deltas (name, n)
        SELECT k, sum(d) FROM (
            SELECT 'task_status/' || status AS k, 1 AS d FROM new_rows
            UNION ALL SELECT 'task_status/' || status, -1 FROM old_rows
        ) c GROUP BY k HAVING sum(d) <> 0;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

DROP TABLE wfd_counters;

-- +goose Down
CREATE TABLE wfd_counters (
    name text COLLATE "C" PRIMARY KEY,
    n    bigint NOT NULL
);
INSERT INTO wfd_counters (name, n) SELECT name, sum(n) FROM wfd_counter_deltas GROUP BY name;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wfd_count_handlers() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE OR REPLACE FUNCTION wfd_count_tasks() RETURNS trigger LANGUAGE plpgsql AS $$
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

DROP TABLE wfd_counter_deltas;
