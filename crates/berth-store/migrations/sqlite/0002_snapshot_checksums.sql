-- Berth store schema v1, migration 2 (SQLite): snapshots carry a checksum of their state, so a
-- damaged one is detected and a reader falls back to an older snapshot (several are kept now).
-- Rows written before this migration have none and are read unchecked.
ALTER TABLE snapshots ADD COLUMN checksum TEXT;
