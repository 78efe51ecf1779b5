//! The `Store` implementation shared by both backends: one set of SQL statements (numbered
//! `$n` parameters, `ON CONFLICT`, `RETURNING`, integers, text and blobs only), expanded per
//! driver by `sql_store!` because sqlx's generic executor bounds cost more than they save.
//!
//! Concurrency without a global lock: an append first upserts the stream row, then moves its
//! head with a compare-and-set `UPDATE ... WHERE head = expected`. On PostgreSQL (read
//! committed) a second writer blocks on the row lock and then sees the new head, so it updates
//! nothing and reports `Conflict`; `(stream, seq)` is also a primary key as a second fence.
//! On SQLite every write transaction is `BEGIN IMMEDIATE` behind an in-process writer mutex, so
//! writers queue (other processes on the busy timeout) and never fail half-way on a lock
//! upgrade. Plans use the same
//! compare-and-set on `version`; ids and idempotency keys rely on primary keys.
//!
//! `sql_store!` writes the write path (the log, the batch transaction) and the log's reads;
//! the methods of each other table come from a macro of its own in `sql/`, invoked inside it.

pub(crate) mod idempotency;
pub(crate) mod leases;
pub(crate) mod plans;
pub(crate) mod providers;
pub(crate) mod snapshots;
pub(crate) mod subscriptions;

/// Statements shared by both backends.
pub(crate) mod q {
    pub const INSERT_STREAM: &str = "INSERT INTO streams (stream, head, schema_version) VALUES ($1, 0, $2) ON CONFLICT (stream) DO NOTHING";
    pub const CAS_STREAM: &str =
        "UPDATE streams SET head = $3, schema_version = $4 WHERE stream = $1 AND head = $2";
    pub const HEAD: &str = "SELECT head FROM streams WHERE stream = $1";
    /// PostgreSQL only: waits for a transaction that moved the head.
    pub const HEAD_FOR_SHARE: &str = "SELECT head FROM streams WHERE stream = $1 FOR SHARE";
    /// By prefix without `LIKE` (no wildcards to escape in names).
    pub const STREAMS: &str = "SELECT stream, head FROM streams WHERE substr(stream, 1, length(CAST($1 AS TEXT))) = CAST($1 AS TEXT) ORDER BY stream";
    pub const COMMANDS_SINCE: &str = "SELECT seq, at_us, command, schema_version FROM commands WHERE stream = $1 AND seq > $2 ORDER BY seq";
    pub const UPSERT_SNAPSHOT: &str = "INSERT INTO snapshots (stream, seq, state, created_at_us, schema_version, checksum) VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (stream, seq) DO UPDATE SET state = excluded.state, created_at_us = excluded.created_at_us, schema_version = excluded.schema_version, checksum = excluded.checksum";
    pub const PRUNE_SNAPSHOTS: &str = "DELETE FROM snapshots WHERE stream = $1 AND seq NOT IN \
         (SELECT seq FROM snapshots WHERE stream = $1 ORDER BY seq DESC LIMIT $2)";
    pub const LATEST_SNAPSHOT: &str = "SELECT stream, seq, state, created_at_us, schema_version, checksum FROM snapshots WHERE stream = $1 ORDER BY seq DESC LIMIT 1";
    pub const SNAPSHOT_AT: &str = "SELECT stream, seq, state, created_at_us, schema_version, checksum FROM snapshots WHERE stream = $1 AND seq = $2";
    pub const SNAPSHOT_SEQS: &str = "SELECT seq FROM snapshots WHERE stream = $1 ORDER BY seq DESC";
    pub const INSERT_PLAN: &str = "INSERT INTO plans (id, name, status, request, result, message, created_at_us, updated_at_us, version, schema_version) \
         VALUES ($1, $2, $3, $4, NULL, NULL, $5, $5, 1, $6)";
    pub const PLAN_VERSION: &str = "SELECT version FROM plans WHERE id = $1";
    pub const DELETE_PLAN: &str = "DELETE FROM plans WHERE id = $1";
    pub const IDEM: &str = "SELECT idem_key, request_hash, response, created_at_us, schema_version FROM idempotency WHERE idem_key = $1";
    pub const INSERT_IDEM: &str = "INSERT INTO idempotency (idem_key, request_hash, response, created_at_us, schema_version) VALUES ($1, $2, $3, $4, $5)";
    pub const FORGET_IDEM: &str = "DELETE FROM idempotency WHERE created_at_us < $1";
    pub const INSERT_SUB: &str = "INSERT INTO subscriptions (id, kind, spec, callback_url, created_at_us, schema_version) VALUES ($1, $2, $3, $4, $5, $6)";
    pub const SUB_COLUMNS: &str = "id, kind, spec, callback_url, created_at_us, schema_version";
    pub const DELETE_SUB: &str = "DELETE FROM subscriptions WHERE id = $1";
    pub const PROVIDER_SECRET: &str = "SELECT credentials FROM providers WHERE name = $1";
    pub const DELETE_PROVIDER: &str = "DELETE FROM providers WHERE name = $1";
}

/// Implements `Store` for `$store` (a struct with `pool: sqlx::Pool<$db>` and an inherent
/// `begin_write`) with the statements of [`q`].
macro_rules! sql_store {
    ($store:ty, $db:ty, $backend:expr) => {
        impl $store {
            /// Runs one statement in a write transaction of its own, retried on serialization
            /// failures, and returns how many rows it changed. `query` builds it anew per try.
            async fn write_one<'q>(
                &self,
                what: &'static str,
                query: impl Fn() -> sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments<'q>>,
            ) -> Result<u64, $crate::StoreError> {
                use $crate::StoreError as E;
                $crate::lease::retry_serialization(|| async {
                    let mut tx = self
                        .begin_write()
                        .await
                        .map_err(E::db("begin transaction"))?;
                    let n = query()
                        .execute(&mut *tx)
                        .await
                        .map_err(E::db(what))?
                        .rows_affected();
                    tx.commit().await.map_err(E::db("commit"))?;
                    Ok(n)
                })
                .await
            }

            /// One attempt of [`Store::write`](crate::Store::write).
            async fn write_once(
                &self,
                batch: $crate::WriteBatch<'_>,
            ) -> Result<$crate::BatchOutcome, $crate::StoreError> {
                use $crate::StoreError as E;
                use $crate::rows::{micros, signed, to_text};
                use $crate::sql::q;
                if let Some(done) = self.write_fast(&batch).await {
                    return done;
                }
                {
                    const SV: i64 = $crate::SCHEMA_VERSION as i64;
                    let mut tx = self
                        .begin_write()
                        .await
                        .map_err(E::db("begin transaction"))?;
                    if let Some(idem) = batch.idempotency {
                        let known = sqlx::query_as::<_, $crate::rows::IdemRow>(q::IDEM)
                            .bind(&idem.key)
                            .fetch_optional(&mut *tx)
                            .await
                            .map_err(E::db("read idempotency key"))?;
                        if let Some(row) = known {
                            tx.rollback().await.ok();
                            return $crate::sql::replayed(idem, row.into_record()?);
                        }
                    }
                    let mut fences: Vec<&$crate::Fence<'_>> = batch.fences.iter().collect();
                    fences.sort_by_key(|f| f.lease);
                    for f in fences {
                        let held = sqlx::query($crate::lease::q::FENCE)
                            .bind(f.lease)
                            .bind(signed("fencing token", f.token)?)
                            .execute(&mut *tx)
                            .await
                            .map_err(E::db("check lease"))?
                            .rows_affected();
                        if held != 1 {
                            tx.rollback().await.ok();
                            let now = $crate::Store::lease(self, f.lease).await?;
                            return Err($crate::lease::fenced(f, now));
                        }
                    }
                    let appends = $crate::sql::ordered_appends(&batch)?;
                    let mut seq = None;
                    for a in appends {
                        let count = u64::try_from(a.entries.len()).unwrap_or(u64::MAX);
                        let new_head = a.expected_seq.checked_add(count).ok_or_else(|| {
                            E::Invalid {
                                what: "expected sequence",
                                reason: "sequence numbers overflow".to_owned(),
                            }
                        })?;
                        let expected = signed("expected sequence", a.expected_seq)?;
                        let new_head_db = signed("sequence number", new_head)?;
                        // A head above 0 is a row already there: one round trip less per commit.
                        if a.expected_seq == 0 {
                            sqlx::query(q::INSERT_STREAM)
                                .bind(a.stream)
                                .bind(SV)
                                .execute(&mut *tx)
                                .await
                                .map_err(E::db("create stream"))?;
                        }
                        let moved = sqlx::query(q::CAS_STREAM)
                            .bind(a.stream)
                            .bind(expected)
                            .bind(new_head_db)
                            .bind(SV)
                            .execute(&mut *tx)
                            .await
                            .map_err(E::db("advance stream"))?
                            .rows_affected();
                        if moved != 1 {
                            tx.rollback().await.ok();
                            let actual = $crate::Store::head(self, a.stream).await?;
                            return Err(E::Conflict {
                                stream: a.stream.to_owned(),
                                expected: a.expected_seq,
                                actual,
                            });
                        }
                        // Multi-row inserts: one round trip per chunk, not per command.
                        let mut next = expected + 1;
                        for chunk in a.entries.chunks($crate::sql::INSERT_CHUNK) {
                            let sql = $crate::sql::insert_commands_sql(chunk.len());
                            let mut query = sqlx::query(&sql);
                            for entry in chunk {
                                query = query
                                    .bind(a.stream)
                                    .bind(next)
                                    .bind(micros(entry.at))
                                    .bind(to_text("command", &entry.command)?)
                                    .bind(SV);
                                next += 1;
                            }
                            query
                                .execute(&mut *tx)
                                .await
                                .map_err(E::db("append commands"))?;
                        }
                        if batch.append.is_some_and(|main| main.stream == a.stream) {
                            seq = Some(new_head);
                        }
                    }
                    let mut plan = None;
                    if let Some(p) = batch.create_plan {
                        let res = sqlx::query(q::INSERT_PLAN)
                            .bind(&p.id)
                            .bind(&p.name)
                            .bind(&p.status)
                            .bind(to_text("plan request", &p.request)?)
                            .bind(micros(p.created_at))
                            .bind(SV)
                            .execute(&mut *tx)
                            .await;
                        match res {
                            Ok(_) => {}
                            Err(e) if $crate::error::is_unique_violation(&e) => {
                                tx.rollback().await.ok();
                                return Err(E::Duplicate {
                                    kind: $crate::RecordKind::Plan,
                                    id: p.id.clone(),
                                });
                            }
                            Err(e) => return Err(E::db("create plan")(e)),
                        }
                        let claim = batch.claim_created;
                        sqlx::query($crate::queue::q::ENQUEUE)
                            .bind(&p.id)
                            .bind(micros(p.created_at))
                            .bind(SV)
                            .bind(claim.map(|c| c.owner))
                            .bind(claim.map(|c| micros(c.until)))
                            .bind(i64::from(claim.is_some()))
                            .execute(&mut *tx)
                            .await
                            .map_err(E::db("queue plan"))?;
                        plan = Some($crate::sql::created_plan(p));
                    }
                    if let Some(c) = batch.update_plan {
                        let sql = format!(
                            "UPDATE plans SET status = $3, result = $4, message = $5, updated_at_us = $6, \
                             version = version + 1, schema_version = $7 WHERE id = $1 AND version = $2 RETURNING {}",
                            $crate::rows::PLAN_COLUMNS
                        );
                        let result = c
                            .update
                            .result
                            .as_ref()
                            .map(|r| to_text("plan result", r))
                            .transpose()?;
                        let row = sqlx::query_as::<_, $crate::rows::PlanRow>(&sql)
                            .bind(c.id)
                            .bind(signed("plan version", c.expected_version)?)
                            .bind(&c.update.status)
                            .bind(result)
                            .bind(&c.update.message)
                            .bind(micros(c.update.updated_at))
                            .bind(SV)
                            .fetch_optional(&mut *tx)
                            .await
                            .map_err(E::db("update plan"))?;
                        match row {
                            Some(row) => {
                                plan = Some(row.into_record()?);
                                if let Some(owner) = batch.complete_claim {
                                    sqlx::query($crate::queue::q::COMPLETE)
                                        .bind(c.id)
                                        .bind(owner)
                                        .execute(&mut *tx)
                                        .await
                                        .map_err(E::db("complete plan claim"))?;
                                }
                            }
                            None => {
                                let found: Option<i64> = sqlx::query_scalar(q::PLAN_VERSION)
                                    .bind(c.id)
                                    .fetch_optional(&mut *tx)
                                    .await
                                    .map_err(E::db("read plan version"))?;
                                tx.rollback().await.ok();
                                return Err(match found {
                                    None => E::NotFound {
                                        kind: $crate::RecordKind::Plan,
                                        id: c.id.to_owned(),
                                    },
                                    Some(v) => E::VersionConflict {
                                        kind: $crate::RecordKind::Plan,
                                        id: c.id.to_owned(),
                                        expected: c.expected_version,
                                        actual: u64::try_from(v).unwrap_or(0),
                                    },
                                });
                            }
                        }
                    }
                    if let Some(idem) = batch.idempotency {
                        let res = sqlx::query(q::INSERT_IDEM)
                            .bind(&idem.key)
                            .bind(&idem.request_hash)
                            .bind(to_text("idempotent response", &idem.response)?)
                            .bind(micros(idem.created_at))
                            .bind(SV)
                            .execute(&mut *tx)
                            .await;
                        match res {
                            Ok(_) => {}
                            // Another transaction committed the key since our check.
                            Err(e) if $crate::error::is_unique_violation(&e) => {
                                tx.rollback().await.ok();
                                let rec = $crate::Store::lookup_idempotent(self, &idem.key)
                                    .await?
                                    .ok_or_else(|| E::db("remember idempotency key")(e))?;
                                return $crate::sql::replayed(idem, rec);
                            }
                            Err(e) => return Err(E::db("remember idempotency key")(e)),
                        }
                    }
                    for chunk in batch.remember.chunks($crate::sql::INSERT_CHUNK) {
                        let sql = $crate::sql::insert_idem_sql(chunk.len());
                        let mut query = sqlx::query(&sql);
                        for r in chunk {
                            query = query
                                .bind(&r.key)
                                .bind(&r.request_hash)
                                .bind(to_text("idempotent response", &r.response)?)
                                .bind(micros(r.created_at))
                                .bind(SV);
                        }
                        match query.execute(&mut *tx).await {
                            Ok(_) => {}
                            Err(e) if $crate::error::is_unique_violation(&e) => {
                                tx.rollback().await.ok();
                                return Err($crate::sql::duplicate_key(self, batch.remember).await);
                            }
                            Err(e) => return Err(E::db("remember idempotency keys")(e)),
                        }
                    }
                    tx.commit().await.map_err(E::db("commit"))?;
                    Ok($crate::BatchOutcome::Committed { seq, plan })
                }
            }
        }

        impl $crate::Store for $store {
            fn backend(&self) -> $crate::Backend {
                $backend
            }

            fn ping(&self) -> $crate::StoreFuture<'_, ()> {
                Box::pin(async move {
                    sqlx::query("SELECT 1")
                        .execute(&self.pool)
                        .await
                        .map_err($crate::StoreError::db("ping"))?;
                    Ok(())
                })
            }

            fn close(&self) -> $crate::StoreFuture<'_, ()> {
                Box::pin(async move {
                    self.pool.close().await;
                    Ok(())
                })
            }

            fn write<'a>(
                &'a self,
                batch: $crate::WriteBatch<'a>,
            ) -> $crate::StoreFuture<'a, $crate::BatchOutcome> {
                Box::pin($crate::lease::retry_serialization(move || self.write_once(batch)))
            }

            fn head<'a>(&'a self, stream: &'a str) -> $crate::StoreFuture<'a, u64> {
                Box::pin(async move {
                    let head: Option<i64> = sqlx::query_scalar($crate::sql::q::HEAD)
                        .bind(stream)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err($crate::StoreError::db("read stream head"))?;
                    Ok(head.map_or(0, |h| u64::try_from(h).unwrap_or(0)))
                })
            }

            fn settled_head<'a>(&'a self, stream: &'a str) -> $crate::StoreFuture<'a, u64> {
                Box::pin(async move {
                    use $crate::StoreError as E;
                    if $backend != $crate::Backend::Postgres {
                        return $crate::Store::head(self, stream).await;
                    }
                    $crate::lease::retry_serialization(|| async {
                        let mut tx =
                            self.pool.begin().await.map_err(E::db("begin transaction"))?;
                        // Waits for a transaction that is creating the stream; rolled back
                        // below, so a stream nobody wrote stays absent.
                        sqlx::query($crate::sql::q::INSERT_STREAM)
                            .bind(stream)
                            .bind($crate::SCHEMA_VERSION as i64)
                            .execute(&mut *tx)
                            .await
                            .map_err(E::db("wait for stream writers"))?;
                        let head: Option<i64> =
                            sqlx::query_scalar($crate::sql::q::HEAD_FOR_SHARE)
                                .bind(stream)
                                .fetch_optional(&mut *tx)
                                .await
                                .map_err(E::db("read settled stream head"))?;
                        tx.rollback().await.map_err(E::db("rollback"))?;
                        Ok(head.map_or(0, |h| u64::try_from(h).unwrap_or(0)))
                    })
                    .await
                })
            }

            fn commands_since<'a>(
                &'a self,
                stream: &'a str,
                after_seq: u64,
            ) -> $crate::StoreFuture<'a, Vec<$crate::StoredCommand>> {
                Box::pin(async move {
                    let after = $crate::rows::signed("sequence number", after_seq)?;
                    let rows = sqlx::query_as::<_, $crate::rows::CommandRow>(
                        $crate::sql::q::COMMANDS_SINCE,
                    )
                    .bind(stream)
                    .bind(after)
                    .fetch_all(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("read commands"))?;
                    $crate::rows::convert(rows, $crate::rows::CommandRow::into_record)
                })
            }

            $crate::sql::snapshots::snapshots_methods!($store, $db, $backend);
            $crate::sql::leases::leases_methods!($store, $db, $backend);
            $crate::sql::plans::plans_methods!($store, $db, $backend);
            $crate::sql::idempotency::idempotency_methods!($store, $db, $backend);
            $crate::sql::subscriptions::subscriptions_methods!($store, $db, $backend);
            $crate::sql::providers::providers_methods!($store, $db, $backend);
        }
    };
}

pub(crate) use sql_store;

/// Commands per insert statement (5 parameters each, well under both backends' limits).
pub(crate) const INSERT_CHUNK: usize = 500;

/// `INSERT INTO commands ... VALUES (...), (...)` for `rows` rows.
pub(crate) fn insert_commands_sql(rows: usize) -> String {
    let mut sql =
        String::from("INSERT INTO commands (stream, seq, at_us, command, schema_version) VALUES ");
    for r in 0..rows {
        let b = 5 * r;
        if r > 0 {
            sql.push_str(", ");
        }
        sql.push_str(&format!(
            "(${}, ${}, ${}, ${}, ${})",
            b + 1,
            b + 2,
            b + 3,
            b + 4,
            b + 5
        ));
    }
    sql
}

/// `INSERT INTO idempotency ... VALUES (...), (...)` for `rows` rows.
pub(crate) fn insert_idem_sql(rows: usize) -> String {
    let mut sql = String::from(
        "INSERT INTO idempotency (idem_key, request_hash, response, created_at_us, schema_version) VALUES ",
    );
    for r in 0..rows {
        let b = 5 * r;
        if r > 0 {
            sql.push_str(", ");
        }
        sql.push_str(&format!(
            "(${}, ${}, ${}, ${}, ${})",
            b + 1,
            b + 2,
            b + 3,
            b + 4,
            b + 5
        ));
    }
    sql
}

/// `SELECT ... FROM idempotency WHERE idem_key IN (...)` for `keys` keys.
pub(crate) fn lookup_idem_sql(keys: usize) -> String {
    let params: Vec<String> = (1..=keys).map(|i| format!("${i}")).collect();
    format!(
        "SELECT idem_key, request_hash, response, created_at_us, schema_version FROM idempotency WHERE idem_key IN ({})",
        params.join(", ")
    )
}

/// Every append of a batch, ordered by stream name (row locks are taken in one order by all
/// writers, so two multi-stream batches cannot deadlock); a stream named twice is `Invalid`.
pub(crate) fn ordered_appends<'a>(
    batch: &crate::WriteBatch<'a>,
) -> Result<Vec<crate::Append<'a>>, StoreError> {
    let mut all: Vec<crate::Append<'a>> = batch.append.into_iter().collect();
    all.extend(batch.also_append.iter().copied());
    all.sort_by_key(|a| a.stream);
    if let Some(w) = all.windows(2).find(|w| w[0].stream == w[1].stream) {
        return Err(StoreError::Invalid {
            what: "write batch",
            reason: format!(
                "stream `{}` is appended twice; expected each stream at most once",
                w[0].stream
            ),
        });
    }
    Ok(all)
}

/// The error for a group of remembered responses that hit a stored key (or repeat one): names
/// the first such key.
pub(crate) async fn duplicate_key(
    store: &dyn crate::Store,
    remember: &[IdempotentResponse],
) -> StoreError {
    let mut seen = std::collections::BTreeSet::new();
    let repeated = remember
        .iter()
        .find(|r| !seen.insert(r.key.as_str()))
        .map(|r| r.key.clone());
    let id = match repeated {
        Some(k) => k,
        None => {
            let keys: Vec<String> = remember.iter().map(|r| r.key.clone()).collect();
            match store.lookup_idempotent_many(&keys).await {
                Ok(found) => found.into_iter().next().map(|r| r.key).unwrap_or_default(),
                Err(e) => return e,
            }
        }
    };
    StoreError::Duplicate {
        kind: RecordKind::IdempotencyKey,
        id,
    }
}

/// A write transaction, holding the backend's in-process writer lock (if any) until it ends.
pub(crate) struct WriteTx<DB: sqlx::Database> {
    tx: sqlx::Transaction<'static, DB>,
    _guard: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl<DB: sqlx::Database> WriteTx<DB> {
    pub(crate) fn new(
        tx: sqlx::Transaction<'static, DB>,
        guard: Option<tokio::sync::OwnedMutexGuard<()>>,
    ) -> Self {
        WriteTx { tx, _guard: guard }
    }

    pub(crate) async fn commit(self) -> Result<(), sqlx::Error> {
        self.tx.commit().await
    }

    pub(crate) async fn rollback(self) -> Result<(), sqlx::Error> {
        self.tx.rollback().await
    }
}

impl<DB: sqlx::Database> std::ops::Deref for WriteTx<DB> {
    type Target = DB::Connection;
    fn deref(&self) -> &DB::Connection {
        &self.tx
    }
}

impl<DB: sqlx::Database> std::ops::DerefMut for WriteTx<DB> {
    fn deref_mut(&mut self) -> &mut DB::Connection {
        &mut self.tx
    }
}

use crate::batch::BatchOutcome;
use crate::crypto::{CredentialKey, seal};
use crate::model::{
    IdempotencyRecord, IdempotentResponse, NewPlan, NewProvider, NewSubscription, PlanRecord,
    SCHEMA_VERSION, SubscriptionRecord,
};
use crate::rows::micros_floor;
use crate::{RecordKind, StoreError};

/// The outcome for a known idempotency key: its response if the request matches.
pub(crate) fn replayed(
    idem: &IdempotentResponse,
    rec: IdempotencyRecord,
) -> Result<BatchOutcome, StoreError> {
    if rec.request_hash == idem.request_hash {
        Ok(BatchOutcome::Replayed(rec))
    } else {
        Err(StoreError::IdempotencyConflict {
            key: idem.key.clone(),
        })
    }
}

pub(crate) fn created_plan(p: &NewPlan) -> PlanRecord {
    let at = micros_floor(p.created_at);
    PlanRecord {
        id: p.id.clone(),
        name: p.name.clone(),
        status: p.status.clone(),
        request: p.request.clone(),
        result: None,
        message: None,
        created_at: at,
        updated_at: at,
        version: 1,
        schema_version: SCHEMA_VERSION,
    }
}

pub(crate) fn created_sub(s: &NewSubscription) -> SubscriptionRecord {
    SubscriptionRecord {
        id: s.id.clone(),
        kind: s.kind,
        spec: s.spec.clone(),
        callback_url: s.callback_url.clone(),
        created_at: micros_floor(s.created_at),
        schema_version: SCHEMA_VERSION,
    }
}

pub(crate) fn sorted_plans(mut plans: Vec<PlanRecord>) -> Result<Vec<PlanRecord>, StoreError> {
    plans.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    Ok(plans)
}

pub(crate) fn deleted(rows: u64, kind: RecordKind, id: &str) -> Result<(), StoreError> {
    if rows == 0 {
        Err(StoreError::NotFound {
            kind,
            id: id.to_owned(),
        })
    } else {
        Ok(())
    }
}

pub(crate) fn seal_credentials(
    p: &NewProvider,
    key: Option<&CredentialKey>,
) -> Result<Option<Vec<u8>>, StoreError> {
    match (&p.credentials, key) {
        (None, _) => Ok(None),
        (Some(_), None) => Err(StoreError::CredentialsWithoutKey {
            provider: p.name.clone(),
        }),
        (Some(secret), Some(key)) => seal(key, &p.name, secret).map(Some),
    }
}
