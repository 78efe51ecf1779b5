//! Integration tests: the store conformance suite on SQLite (always) and PostgreSQL (when
//! `BERTH_TEST_POSTGRES_URL` is set, e.g. by `.ci/postgres.sh`), plus SQLite-only checks.

// The suite's checks are plain async functions, not `#[test]`s, so clippy's test exemption
// does not reach them.
#![allow(clippy::unwrap_used)]

mod conformance;
mod fixtures;
mod late_commits;
mod leases;
mod sqlite;

/// Runs each conformance check against a fresh SQLite file store and, when configured, against
/// a fresh PostgreSQL schema. Without the URL the PostgreSQL variants check nothing and say so.
macro_rules! suite {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    let (_dir, store) = crate::fixtures::sqlite_file().await;
                    crate::conformance::$name(store.clone()).await;
                    store.close().await.unwrap();
                }
            )*
        }
        mod on_postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    let Some(pg) = crate::fixtures::postgres(stringify!($name)).await else {
                        return;
                    };
                    crate::conformance::$name(pg.store.clone()).await;
                    pg.drop_schema().await;
                }
            )*
        }
        /// The same checks with every write transaction SERIALIZABLE (what CockroachDB and
        /// YugabyteDB run): the SQL subset and the retries on serialization failures.
        mod on_postgres_serializable {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    let name = concat!("s_", stringify!($name));
                    let Some(pg) = crate::fixtures::postgres_at(
                        name,
                        berth_store::Isolation::Serializable,
                    )
                    .await
                    else {
                        return;
                    };
                    crate::conformance::$name(pg.store.clone()).await;
                    pg.drop_schema().await;
                }
            )*
        }
    };
}

suite!(
    append_read_and_conflicts,
    concurrent_appenders_exactly_one_wins,
    concurrent_retries_keep_sequence_contiguous,
    no_double_booking_under_contention,
    replay_reproduces_calendar_state,
    snapshots,
    plans_crud_and_transitions,
    concurrent_plan_claims,
    plan_queue_claims_renews_and_completes,
    concurrent_plan_queue_claims_each_plan_once,
    idempotency_keys,
    idempotent_appends,
    concurrent_idempotent_creates,
    batches_are_atomic,
    group_commits_remember_many_keys,
    subscriptions_crud,
    providers_and_encrypted_credentials,
    leases_and_fencing,
    concurrent_takeover_has_one_winner,
    paused_owner_cannot_write_after_takeover,
    spanning_appends_are_atomic,
);
