-- Berth store schema v1, migration 3 (PostgreSQL): leases of calendar partitions. One row per
-- partition: its owning daemon, where that daemon answers, the fencing token (bumped whenever
-- ownership changes hands) and when the lease lapses unless renewed. Every fenced write checks
-- the token in its own transaction, so an owner that lost the lease cannot write any more.
CREATE TABLE leases (
    lease TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    owner_url TEXT NOT NULL,
    token BIGINT NOT NULL CHECK (token >= 1),
    expires_at_us BIGINT NOT NULL,
    schema_version BIGINT NOT NULL
);
