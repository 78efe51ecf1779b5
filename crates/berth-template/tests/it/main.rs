//! Integration tests of berth-template: seed and HAS fixtures, diagnostics snapshots, properties.

mod fixtures;
mod props;
mod schema;
mod snapshots;
