-- Berth store schema v1 (PostgreSQL). Times are microseconds since the Unix epoch; JSON is text;
-- every row carries the schema version it was written with.
CREATE TABLE streams (
    stream TEXT PRIMARY KEY,
    head BIGINT NOT NULL CHECK (head >= 0),
    schema_version BIGINT NOT NULL
);
CREATE TABLE commands (
    stream TEXT NOT NULL REFERENCES streams (stream) ON DELETE CASCADE,
    seq BIGINT NOT NULL CHECK (seq >= 1),
    at_us BIGINT NOT NULL,
    command TEXT NOT NULL,
    schema_version BIGINT NOT NULL,
    PRIMARY KEY (stream, seq)
);
CREATE TABLE snapshots (
    stream TEXT NOT NULL REFERENCES streams (stream) ON DELETE CASCADE,
    seq BIGINT NOT NULL CHECK (seq >= 1),
    state TEXT NOT NULL,
    created_at_us BIGINT NOT NULL,
    schema_version BIGINT NOT NULL,
    PRIMARY KEY (stream, seq)
);
CREATE TABLE plans (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    request TEXT NOT NULL,
    result TEXT,
    message TEXT,
    created_at_us BIGINT NOT NULL,
    updated_at_us BIGINT NOT NULL,
    version BIGINT NOT NULL CHECK (version >= 1),
    schema_version BIGINT NOT NULL
);
CREATE INDEX plans_by_status ON plans (status);
CREATE TABLE idempotency (
    idem_key TEXT PRIMARY KEY,
    request_hash TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at_us BIGINT NOT NULL,
    schema_version BIGINT NOT NULL
);
CREATE INDEX idempotency_by_age ON idempotency (created_at_us);
CREATE TABLE subscriptions (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('capacity', 'reservation')),
    spec TEXT NOT NULL,
    callback_url TEXT NOT NULL,
    created_at_us BIGINT NOT NULL,
    schema_version BIGINT NOT NULL
);
CREATE TABLE providers (
    name TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    metadata TEXT NOT NULL,
    credentials BYTEA,
    created_at_us BIGINT NOT NULL,
    updated_at_us BIGINT NOT NULL,
    schema_version BIGINT NOT NULL
);
