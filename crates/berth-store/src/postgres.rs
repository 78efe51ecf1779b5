//! PostgreSQL backend, for several daemons sharing one state: read-committed transactions whose
//! writes are compare-and-set updates and primary-key inserts (see `sql`), so no write is lost
//! and none needs a serialization retry; or, on request, serializable ones (the level
//! CockroachDB and YugabyteDB run) whose aborts are retried.

use std::str::FromStr;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{Connection, Postgres};

use crate::sql::WriteTx;
use crate::{Backend, Isolation, StoreError, StoreOptions};

/// How long a pooled connection may sit unused before it is pinged on its way out.
const IDLE_PING: std::time::Duration = std::time::Duration::from_secs(10);

/// A store in one PostgreSQL database (optionally one schema of it).
#[derive(Debug, Clone)]
pub struct PgStore {
    pub(crate) pool: PgPool,
    serializable: bool,
}

impl PgStore {
    /// Connects to `url` (`postgres://user:password@host:port/db`) and migrates the schema.
    /// With `options.pg_schema` the tables live in that schema (created if missing).
    pub async fn connect(url: &str, options: &StoreOptions) -> Result<Self, StoreError> {
        let mut connect = PgConnectOptions::from_str(url).map_err(|_| StoreError::Invalid {
            what: "postgres url",
            reason: "expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE".to_owned(),
        })?;
        if let Some(schema) = &options.pg_schema {
            let ok = !schema.is_empty()
                && schema.len() <= 63
                && schema
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                && !schema.as_bytes().first().is_some_and(u8::is_ascii_digit);
            if !ok {
                return Err(StoreError::Invalid {
                    what: "postgres schema",
                    reason: format!(
                        "`{schema}`; expected 1 to 63 of a-z, 0-9, _ not starting with a digit"
                    ),
                });
            }
            let mut conn = sqlx::PgConnection::connect_with(&connect)
                .await
                .map_err(StoreError::db("connect to postgres"))?;
            sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
                .execute(&mut conn)
                .await
                .map_err(StoreError::db("create schema"))?;
            conn.close().await.ok();
            connect = connect.options([("search_path", schema.as_str())]);
        }
        let pool = PgPoolOptions::new()
            .max_connections(options.max_connections.max(1))
            // sqlx pings every connection it hands out: a round trip per store call, a third
            // of a group commit's. A connection in steady use is alive (a dead one fails its
            // statement, which the caller sees); one idle for a while is pinged first.
            .test_before_acquire(false)
            .before_acquire(|conn, meta| {
                Box::pin(async move {
                    if meta.idle_for >= IDLE_PING {
                        conn.ping().await?;
                    }
                    Ok(true)
                })
            })
            .acquire_timeout(options.acquire_timeout)
            .connect_with(connect)
            .await
            .map_err(StoreError::db("connect to postgres"))?;
        sqlx::migrate!("./migrations/postgres")
            .run(&pool)
            .await
            .map_err(|source| StoreError::Migration { source })?;
        Ok(PgStore {
            pool,
            serializable: options.pg_isolation == Isolation::Serializable,
        })
    }

    /// The connection pool (for diagnostics and tests).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    async fn begin_write(&self) -> Result<WriteTx<Postgres>, sqlx::Error> {
        let tx = if self.serializable {
            self.pool
                .begin_with("BEGIN ISOLATION LEVEL SERIALIZABLE")
                .await?
        } else {
            self.pool.begin().await?
        };
        Ok(WriteTx::new(tx, None))
    }
}

crate::sql::sql_store!(PgStore, sqlx::Postgres, Backend::Postgres);
