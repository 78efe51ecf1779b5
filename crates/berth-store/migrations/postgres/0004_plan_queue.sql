-- Berth store schema v1, migration 4 (PostgreSQL): the plan queue. Each created plan waits here
-- until a solver claims it (`owner`, `claim_until_us`); the solver renews its claim while it
-- works and deletes the entry when the plan is finished; an expired claim can be taken again.
-- Independent of every other migration, so it applies whether or not migration 3 has run.
CREATE TABLE plan_queue (
    plan_id TEXT PRIMARY KEY NOT NULL REFERENCES plans (id) ON DELETE CASCADE,
    owner TEXT,
    claim_until_us BIGINT,
    attempts BIGINT NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    enqueued_at_us BIGINT NOT NULL,
    schema_version BIGINT NOT NULL
);
CREATE INDEX plan_queue_order ON plan_queue (enqueued_at_us, plan_id);
-- Plans accepted before the queue existed and not yet solved.
INSERT INTO plan_queue (plan_id, owner, claim_until_us, attempts, enqueued_at_us, schema_version)
SELECT id, NULL, NULL, 0, created_at_us, 1 FROM plans WHERE status = 'template';
