-- Concurrency keys (persistence.Slots, issue 27): per key a header (the
-- counts, the next queue number and the rate's window, in
-- backend.EncodeSlotHeader's form) with the time the rate next lets the
-- queue in (next_due, Unix nanoseconds, indexed for DueSlots), and one
-- row per handler that holds a slot or waits for one. Times are Unix
-- nanoseconds: the rules compare them exactly. A change of a key holds
-- the key's advisory lock (class "wfds") for its transaction, so two
-- replicas never admit past a key's limit.

-- +goose Up
CREATE TABLE wfd_slot_keys (
    workflow text COLLATE "C" NOT NULL,
    key      text COLLATE "C" NOT NULL,
    header   bytea NOT NULL,
    next_due bigint,
    PRIMARY KEY (workflow, key)
);
CREATE INDEX wfd_slot_keys_due ON wfd_slot_keys (next_due) WHERE next_due IS NOT NULL;

CREATE TABLE wfd_slots (
    workflow   text COLLATE "C" NOT NULL,
    key        text COLLATE "C" NOT NULL,
    handler_id text COLLATE "C" NOT NULL,
    holding    boolean NOT NULL,
    seq        bigint NOT NULL,
    at         bigint NOT NULL,     -- admitted (holding) or queued since
    pending    boolean NOT NULL,    -- admitted from the queue, not yet told
    PRIMARY KEY (workflow, key, handler_id)
);
CREATE INDEX wfd_slots_order ON wfd_slots (workflow, key, holding, seq);
CREATE INDEX wfd_slots_pending ON wfd_slots (at) WHERE pending;

-- +goose Down
DROP TABLE wfd_slots;
DROP TABLE wfd_slot_keys;
