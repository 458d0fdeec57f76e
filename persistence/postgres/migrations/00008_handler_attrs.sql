-- Search attributes (persistence.Handler.Attributes, issue 27): they are
-- stored in the handler's metadata, out of SQL's reach, and indexed here,
-- one row per value (a keyword_list: one row per distinct item, typ
-- keyword_list), so that ListHandlers answers Query.Where through an
-- index. A value is in the column of its kind: strings and keyword_list
-- items in str (COLLATE "C": byte order, as attrs.Value.Compare), ints,
-- doubles and bools (0, 1) in num (ints are within ±2^53, so a double
-- holds them exactly), times in ts (microseconds, as attrs keeps them).
-- typ is the attrs.Type, so a condition on an int never meets a double
-- or a string stored under the same name. Each row repeats the handler's
-- workflow and created_at, created_ns, so the indexes, which end in
-- (created_at, created_ns, handler_id) as the handlers' listing indexes
-- do, answer a condition newest first without reading the handlers.
--
-- Write rewrites a handler's rows when its attributes change, and
-- deletes them with the handler. Handlers stored before this migration
-- have no rows (their metadata has no attributes).

-- +goose Up
CREATE TABLE wfd_handler_attrs (
    handler_id text COLLATE "C" NOT NULL,
    workflow   text COLLATE "C" NOT NULL,
    name       text COLLATE "C" NOT NULL,
    typ        smallint NOT NULL,           -- attrs.Type
    str        text COLLATE "C",            -- string, keyword_list item
    num        double precision,            -- int, double, bool (0, 1)
    ts         timestamptz,                 -- time
    created_at timestamptz NOT NULL,        -- the handler's, with created_ns
    created_ns smallint NOT NULL
);
CREATE INDEX wfd_handler_attrs_handler ON wfd_handler_attrs (handler_id);
CREATE INDEX wfd_handler_attrs_str ON wfd_handler_attrs (workflow, name, typ, str, created_at, created_ns, handler_id)
    WHERE str IS NOT NULL;
CREATE INDEX wfd_handler_attrs_num ON wfd_handler_attrs (workflow, name, typ, num, created_at, created_ns, handler_id)
    WHERE num IS NOT NULL;
CREATE INDEX wfd_handler_attrs_ts ON wfd_handler_attrs (workflow, name, typ, ts, created_at, created_ns, handler_id)
    WHERE ts IS NOT NULL;

-- +goose Down
DROP TABLE wfd_handler_attrs;
