//! PostgreSQL backend, for several daemons sharing one state: read-committed transactions whose
//! writes are compare-and-set updates and primary-key inserts (see `sql`), so no write is lost
//! and none needs a serialization retry; or, on request, serializable ones (the level
//! CockroachDB and YugabyteDB run) whose aborts are retried.

use std::str::FromStr;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{Connection, Postgres};

use crate::sql::WriteTx;
use crate::{
    Append, Backend, BatchOutcome, Fence, IdempotentResponse, Isolation, StoreError, StoreOptions,
    WriteBatch,
};

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

/// A group commit in one statement (one round trip instead of BEGIN, fence, compare-and-set,
/// two inserts and COMMIT): data-modifying CTEs chained by `EXISTS`, so the lease row is
/// locked before the stream row as in the transaction, and nothing is inserted unless both
/// the fence and the compare-and-set held. Rows are sent as arrays, any number in one go.
const FAST_COMMIT: &str = "WITH fence AS ( \
       UPDATE leases SET token = token WHERE lease = $1 AND token = $2 AND $3 RETURNING 1 \
     ), cas AS ( \
       UPDATE streams SET head = $6, schema_version = $7 \
       WHERE stream = $4 AND head = $5 AND (NOT $3 OR EXISTS (SELECT 1 FROM fence)) RETURNING 1 \
     ), cmds AS ( \
       INSERT INTO commands (stream, seq, at_us, command, schema_version) \
       SELECT $4, $5 + t.o, t.a, t.c, $7 FROM unnest($8::bigint[], $9::text[]) WITH ORDINALITY AS t(a, c, o) \
       WHERE EXISTS (SELECT 1 FROM cas) RETURNING 1 \
     ), idem AS ( \
       INSERT INTO idempotency (idem_key, request_hash, response, created_at_us, schema_version) \
       SELECT u.k, u.h, u.r, u.t, $7 FROM unnest($10::text[], $11::text[], $12::text[], $13::bigint[]) AS u(k, h, r, t) \
       WHERE EXISTS (SELECT 1 FROM cas) RETURNING 1 \
     ) \
     SELECT (SELECT count(*) FROM fence), (SELECT count(*) FROM cas), \
            (SELECT count(*) FROM cmds), (SELECT count(*) FROM idem)";

impl PgStore {
    /// [`FAST_COMMIT`] for the batches a holder's group commit sends (one append to a stream
    /// that exists, its responses, at most one fence); `None` for any other batch.
    pub(crate) async fn write_fast(
        &self,
        batch: &WriteBatch<'_>,
    ) -> Option<Result<BatchOutcome, StoreError>> {
        let append = batch.append?;
        let simple = !self.serializable
            && append.expected_seq > 0
            && batch.idempotency.is_none()
            && batch.create_plan.is_none()
            && batch.update_plan.is_none()
            && batch.also_append.is_empty()
            && batch.fences.len() <= 1;
        if !simple {
            return None;
        }
        Some(
            self.fast_commit(append, batch.fences.first(), batch.remember)
                .await,
        )
    }

    async fn fast_commit(
        &self,
        a: Append<'_>,
        fence: Option<&Fence<'_>>,
        remember: &[IdempotentResponse],
    ) -> Result<BatchOutcome, StoreError> {
        use crate::rows::{micros, signed, to_text};
        const SV: i64 = crate::SCHEMA_VERSION as i64;
        let count = u64::try_from(a.entries.len()).unwrap_or(u64::MAX);
        let new_head = a
            .expected_seq
            .checked_add(count)
            .ok_or_else(|| StoreError::Invalid {
                what: "expected sequence",
                reason: "sequence numbers overflow".to_owned(),
            })?;
        let mut at = Vec::with_capacity(a.entries.len());
        let mut commands = Vec::with_capacity(a.entries.len());
        for e in a.entries {
            at.push(micros(e.at));
            commands.push(to_text("command", &e.command)?);
        }
        let mut keys = Vec::with_capacity(remember.len());
        let mut hashes = Vec::with_capacity(remember.len());
        let mut responses = Vec::with_capacity(remember.len());
        let mut created = Vec::with_capacity(remember.len());
        for r in remember {
            keys.push(r.key.as_str());
            hashes.push(r.request_hash.as_str());
            responses.push(to_text("idempotent response", &r.response)?);
            created.push(micros(r.created_at));
        }
        let token = match fence {
            Some(f) => signed("fencing token", f.token)?,
            None => 0,
        };
        let row: Result<(i64, i64, i64, i64), sqlx::Error> = sqlx::query_as(FAST_COMMIT)
            .bind(fence.map_or("", |f| f.lease))
            .bind(token)
            .bind(fence.is_some())
            .bind(a.stream)
            .bind(signed("expected sequence", a.expected_seq)?)
            .bind(signed("sequence number", new_head)?)
            .bind(SV)
            .bind(&at)
            .bind(&commands)
            .bind(&keys)
            .bind(&hashes)
            .bind(&responses)
            .bind(&created)
            .fetch_one(&self.pool)
            .await;
        let (fenced, moved, _, _) = match row {
            Ok(r) => r,
            Err(e) if crate::error::is_unique_violation(&e) => {
                return Err(crate::sql::duplicate_key(self, remember).await);
            }
            Err(e) => return Err(StoreError::db("append commands")(e)),
        };
        if let Some(f) = fence
            && fenced != 1
        {
            let now = crate::Store::lease(self, f.lease).await?;
            return Err(crate::lease::fenced(f, now));
        }
        if moved != 1 {
            let actual = crate::Store::head(self, a.stream).await?;
            return Err(StoreError::Conflict {
                stream: a.stream.to_owned(),
                expected: a.expected_seq,
                actual,
            });
        }
        Ok(BatchOutcome::Committed {
            seq: Some(new_head),
            plan: None,
        })
    }
}
