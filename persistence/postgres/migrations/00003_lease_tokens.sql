-- Lease tokens from one sequence (lease.go, claim.go). Every Acquire or
-- claim takes its handler's new token from it, so a token is above every
-- token issued before, of any handler: a lease row can then be deleted
-- with its handler (an id may be used again by a new handler) without the
-- new handler's tokens ever meeting an old one's. Started above the
-- tokens already issued.

-- +goose Up
CREATE SEQUENCE wfd_lease_tokens AS bigint;
SELECT setval('wfd_lease_tokens', greatest((SELECT max(token) FROM wfd_leases), 1));

-- +goose Down
DROP SEQUENCE wfd_lease_tokens;
