//! Idempotency keys: look up one or many, forget old ones.
//! Both SQL stores get these `Store` methods from `idempotency_methods!`, inside `sql_store!`.

/// The `Store` methods on idempotency, for `$store` over `$db` (see `sql_store!`).
macro_rules! idempotency_methods {
    ($store:ty, $db:ty, $backend:expr) => {
        fn lookup_idempotent<'a>(
            &'a self,
            key: &'a str,
        ) -> $crate::StoreFuture<'a, Option<$crate::IdempotencyRecord>> {
            Box::pin(async move {
                let row = sqlx::query_as::<_, $crate::rows::IdemRow>($crate::sql::q::IDEM)
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("read idempotency key"))?;
                row.map($crate::rows::IdemRow::into_record).transpose()
            })
        }

        fn lookup_idempotent_many<'a>(
            &'a self,
            keys: &'a [String],
        ) -> $crate::StoreFuture<'a, Vec<$crate::IdempotencyRecord>> {
            Box::pin(async move {
                let mut out = Vec::new();
                for chunk in keys.chunks($crate::sql::INSERT_CHUNK) {
                    let sql = $crate::sql::lookup_idem_sql(chunk.len());
                    let mut query = sqlx::query_as::<_, $crate::rows::IdemRow>(&sql);
                    for k in chunk {
                        query = query.bind(k);
                    }
                    let rows = query
                        .fetch_all(&self.pool)
                        .await
                        .map_err($crate::StoreError::db("read idempotency keys"))?;
                    out.extend($crate::rows::convert(
                        rows,
                        $crate::rows::IdemRow::into_record,
                    )?);
                }
                out.sort_by(|a, b| a.key.cmp(&b.key));
                out.dedup_by(|a, b| a.key == b.key);
                Ok(out)
            })
        }

        fn forget_idempotent_before(
            &self,
            cutoff: chrono::DateTime<chrono::Utc>,
        ) -> $crate::StoreFuture<'_, u64> {
            Box::pin(async move {
                let n = sqlx::query($crate::sql::q::FORGET_IDEM)
                    .bind($crate::rows::micros(cutoff))
                    .execute(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("forget idempotency keys"))?
                    .rows_affected();
                Ok(n)
            })
        }
    };
}

pub(crate) use idempotency_methods;
