//! Calendar snapshots: write, the newest usable, the list, one by sequence number.
//! Both SQL stores get these `Store` methods from `snapshots_methods!`, inside `sql_store!`.

/// The `Store` methods on snapshots, for `$store` over `$db` (see `sql_store!`).
macro_rules! snapshots_methods {
    ($store:ty, $db:ty, $backend:expr) => {
        fn put_snapshot<'a>(
            &'a self,
            stream: &'a str,
            seq: u64,
            state: &'a str,
            created_at: chrono::DateTime<chrono::Utc>,
        ) -> $crate::StoreFuture<'a, ()> {
            use $crate::StoreError as E;
            Box::pin($crate::lease::retry_serialization(move || async move {
                let seq_db = $crate::rows::signed("snapshot sequence", seq)?;
                let keep = i64::try_from($crate::SNAPSHOTS_KEPT).unwrap_or(i64::MAX);
                let mut tx = self
                    .begin_write()
                    .await
                    .map_err(E::db("begin transaction"))?;
                let head: Option<i64> = sqlx::query_scalar($crate::sql::q::HEAD)
                    .bind(stream)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(E::db("read stream head"))?;
                let head = head.map_or(0, |h| u64::try_from(h).unwrap_or(0));
                if seq > head || head == 0 {
                    tx.rollback().await.ok();
                    return Err(E::SnapshotAhead {
                        stream: stream.to_owned(),
                        seq,
                        head,
                    });
                }
                sqlx::query($crate::sql::q::UPSERT_SNAPSHOT)
                    .bind(stream)
                    .bind(seq_db)
                    .bind(state)
                    .bind($crate::rows::micros(created_at))
                    .bind($crate::SCHEMA_VERSION as i64)
                    .bind($crate::rows::checksum(state))
                    .execute(&mut *tx)
                    .await
                    .map_err(E::db("write snapshot"))?;
                sqlx::query($crate::sql::q::PRUNE_SNAPSHOTS)
                    .bind(stream)
                    .bind(keep)
                    .execute(&mut *tx)
                    .await
                    .map_err(E::db("prune snapshots"))?;
                tx.commit().await.map_err(E::db("commit"))?;
                Ok(())
            }))
        }

        fn latest_snapshot<'a>(
            &'a self,
            stream: &'a str,
        ) -> $crate::StoreFuture<'a, Option<$crate::Snapshot>> {
            Box::pin(async move {
                let row =
                    sqlx::query_as::<_, $crate::rows::SnapshotRow>($crate::sql::q::LATEST_SNAPSHOT)
                        .bind(stream)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err($crate::StoreError::db("read snapshot"))?;
                row.map($crate::rows::SnapshotRow::into_record).transpose()
            })
        }

        fn snapshot_seqs<'a>(&'a self, stream: &'a str) -> $crate::StoreFuture<'a, Vec<u64>> {
            Box::pin(async move {
                let seqs: Vec<i64> = sqlx::query_scalar($crate::sql::q::SNAPSHOT_SEQS)
                    .bind(stream)
                    .fetch_all(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("list snapshots"))?;
                Ok(seqs
                    .into_iter()
                    .filter_map(|s| u64::try_from(s).ok())
                    .collect())
            })
        }

        fn snapshot_at<'a>(
            &'a self,
            stream: &'a str,
            seq: u64,
        ) -> $crate::StoreFuture<'a, Option<$crate::Snapshot>> {
            Box::pin(async move {
                let seq_db = $crate::rows::signed("snapshot sequence", seq)?;
                let row =
                    sqlx::query_as::<_, $crate::rows::SnapshotRow>($crate::sql::q::SNAPSHOT_AT)
                        .bind(stream)
                        .bind(seq_db)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err($crate::StoreError::db("read snapshot"))?;
                row.map($crate::rows::SnapshotRow::into_record).transpose()
            })
        }
    };
}

pub(crate) use snapshots_methods;
