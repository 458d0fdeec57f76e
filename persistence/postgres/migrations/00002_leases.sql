-- Replicas and handler leases (persistence.Leaser, lease.go). Every time
-- here is set from the database's now(), never a replica's clock.

-- +goose Up
CREATE TABLE wfd_replicas (
    id         text COLLATE "C" PRIMARY KEY,
    address    text NOT NULL,
    started_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);

-- One row per handler that ever had a lease; it outlives releases (owner
-- '') and the handler, so the token never goes down.
CREATE TABLE wfd_leases (
    handler_id  text COLLATE "C" PRIMARY KEY,
    owner       text COLLATE "C" NOT NULL,
    token       bigint NOT NULL CHECK (token > 0),
    acquired_at timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX wfd_leases_owner ON wfd_leases (owner, handler_id);

-- +goose Down
DROP TABLE wfd_leases, wfd_replicas;
