-- Workflow versions: a name has several stored definitions, keyed by
-- (name, version), one of them current (the one new handlers start on).
-- Existing definitions become the current version of their name, named
-- after the first 16 characters of their hash (as the bolt backend's
-- migration names them). The partial unique index keeps a name from ever
-- having two current versions, whatever a writer does.
--
-- Handlers get the version they run as a column, indexed with the
-- workflow, status and residency, so listing by version and
-- CountVersions read the index. Existing rows get '' (their metadata is
-- encoded, out of SQL's reach): the version of handlers stored before
-- versions, which they are, unless a newer wfd wrote them, in which case
-- their next write sets it.

-- +goose Up
ALTER TABLE wfd_workflows
    ADD COLUMN version text COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN current boolean NOT NULL DEFAULT false;
UPDATE wfd_workflows SET version = left(hash, 16), current = true;
ALTER TABLE wfd_workflows DROP CONSTRAINT wfd_workflows_pkey;
ALTER TABLE wfd_workflows ADD CONSTRAINT wfd_workflows_pkey PRIMARY KEY (name, version);
CREATE UNIQUE INDEX wfd_workflows_current ON wfd_workflows (name) WHERE current;

ALTER TABLE wfd_handlers ADD COLUMN workflow_version text COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX wfd_handlers_version ON wfd_handlers (workflow, workflow_version, status, residency);

-- +goose Down
DROP INDEX wfd_handlers_version;
ALTER TABLE wfd_handlers DROP COLUMN workflow_version;

-- One definition per name again: the current version, or, for a name
-- without one, the greatest version.
DELETE FROM wfd_workflows w WHERE EXISTS (
    SELECT 1 FROM wfd_workflows o
    WHERE o.name = w.name AND (o.current, o.version) > (w.current, w.version));
DROP INDEX wfd_workflows_current;
ALTER TABLE wfd_workflows DROP CONSTRAINT wfd_workflows_pkey;
ALTER TABLE wfd_workflows ADD CONSTRAINT wfd_workflows_pkey PRIMARY KEY (name);
ALTER TABLE wfd_workflows DROP COLUMN version, DROP COLUMN current;
