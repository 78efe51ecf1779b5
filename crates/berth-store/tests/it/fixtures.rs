//! Fresh stores for one test each, and calendar command builders.

use std::sync::Arc;

use berth_calendar::chrono::{DateTime, TimeDelta, TimeZone, Utc};
use berth_calendar::{Amounts, CapacityChange, Command, LogEntry, PoolKey};
use berth_store::{Isolation, Store, StoreOptions};

/// A store in a new SQLite file (WAL, several connections) inside a temporary directory.
pub async fn sqlite_file() -> (tempfile::TempDir, Arc<dyn Store>) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("berth.db").display());
    let store = berth_store::open(&url).await.unwrap();
    (dir, store)
}

/// A PostgreSQL store in its own schema, dropped by [`Pg::drop_schema`].
pub struct Pg {
    pub store: Arc<dyn Store>,
    url: String,
    schema: String,
}

/// Connects to `BERTH_TEST_POSTGRES_URL` in a schema named after the test, or `None` (with a
/// note) when the variable is unset.
pub async fn postgres(test: &str) -> Option<Pg> {
    postgres_at(test, Isolation::ReadCommitted).await
}

/// [`postgres`] with write transactions at `isolation`.
pub async fn postgres_at(test: &str, isolation: Isolation) -> Option<Pg> {
    let Ok(url) = std::env::var("BERTH_TEST_POSTGRES_URL") else {
        eprintln!("BERTH_TEST_POSTGRES_URL unset: PostgreSQL conformance of `{test}` not run");
        return None;
    };
    let schema = format!("t_{}_{}", test, std::process::id());
    drop_schema(&url, &schema).await;
    let options = StoreOptions {
        pg_schema: Some(schema.clone()),
        pg_isolation: isolation,
        ..StoreOptions::default()
    };
    let store = berth_store::open_with(&url, &options).await.unwrap();
    Some(Pg { store, url, schema })
}

impl Pg {
    /// A connection of its own in the test's schema, for holding locks and reading `pg_locks`.
    pub async fn raw(&self) -> sqlx::PgConnection {
        use sqlx::ConnectOptions;
        use std::str::FromStr;
        sqlx::postgres::PgConnectOptions::from_str(&self.url)
            .unwrap()
            .options([("search_path", self.schema.as_str())])
            .connect()
            .await
            .unwrap()
    }

    pub async fn drop_schema(self) {
        self.store.close().await.unwrap();
        drop_schema(&self.url, &self.schema).await;
    }
}

async fn drop_schema(url: &str, schema: &str) {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
}

pub fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2016, 2, 1, 0, 0, 0).unwrap()
}

pub fn h(n: i64) -> DateTime<Utc> {
    t0() + TimeDelta::hours(n)
}

/// A capacity increase in `zone-1` whose core count marks the entry (for identity checks).
pub fn marker(cores: u64) -> LogEntry {
    LogEntry {
        at: t0(),
        command: Command::IncreaseCapacity(CapacityChange {
            pool: PoolKey::new("zone-1", "openstack"),
            start: t0(),
            end: None,
            amounts: Amounts::new().with("cores", cores),
        }),
    }
}

/// The marker number of an entry made by [`marker`].
pub fn marker_of(e: &LogEntry) -> u64 {
    match &e.command {
        Command::IncreaseCapacity(c) => c.amounts.get("cores"),
        other => panic!("not a marker: {other:?}"),
    }
}
