//! Leases with fencing tokens: acquire or renew, read, list, release.
//! Both SQL stores get these `Store` methods from `leases_methods!`, inside `sql_store!`.

/// The `Store` methods on leases, for `$store` over `$db` (see `sql_store!`).
macro_rules! leases_methods {
    ($store:ty, $db:ty, $backend:expr) => {
        fn acquire_lease<'a>(
            &'a self,
            req: $crate::LeaseRequest<'a>,
        ) -> $crate::StoreFuture<'a, $crate::Lease> {
            use $crate::StoreError as E;
            Box::pin($crate::lease::retry_serialization_n(
                40,
                move || async move {
                    let held = $crate::rows::signed("fencing token", req.held_token.unwrap_or(0))?;
                    let mut tx = self
                        .begin_write()
                        .await
                        .map_err(E::db("begin transaction"))?;
                    let row =
                        sqlx::query_as::<_, $crate::lease::LeaseRow>($crate::lease::q::ACQUIRE)
                            .bind(req.lease)
                            .bind(req.owner)
                            .bind(req.owner_url)
                            .bind($crate::rows::micros(req.expires_at))
                            .bind($crate::SCHEMA_VERSION as i64)
                            .bind(held)
                            .bind($crate::rows::micros(req.now))
                            .fetch_optional(&mut *tx)
                            .await
                            .map_err(E::db("acquire lease"))?;
                    let row = match row {
                        Some(row) => row,
                        // Held by another node: report who.
                        None => sqlx::query_as::<_, $crate::lease::LeaseRow>($crate::lease::q::GET)
                            .bind(req.lease)
                            .fetch_one(&mut *tx)
                            .await
                            .map_err(E::db("read lease"))?,
                    };
                    tx.commit().await.map_err(E::db("commit"))?;
                    row.into_record()
                },
            ))
        }

        fn lease<'a>(&'a self, name: &'a str) -> $crate::StoreFuture<'a, Option<$crate::Lease>> {
            Box::pin(async move {
                let row = sqlx::query_as::<_, $crate::lease::LeaseRow>($crate::lease::q::GET)
                    .bind(name)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("read lease"))?;
                row.map($crate::lease::LeaseRow::into_record).transpose()
            })
        }

        fn leases(&self) -> $crate::StoreFuture<'_, Vec<$crate::Lease>> {
            Box::pin(async move {
                let rows = sqlx::query_as::<_, $crate::lease::LeaseRow>($crate::lease::q::LIST)
                    .fetch_all(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("list leases"))?;
                $crate::rows::convert(rows, $crate::lease::LeaseRow::into_record)
            })
        }

        fn streams<'a>(&'a self, prefix: &'a str) -> $crate::StoreFuture<'a, Vec<(String, u64)>> {
            Box::pin(async move {
                let rows: Vec<(String, i64)> = sqlx::query_as($crate::sql::q::STREAMS)
                    .bind(prefix)
                    .fetch_all(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("list streams"))?;
                Ok(rows
                    .into_iter()
                    .map(|(s, h)| (s, u64::try_from(h).unwrap_or(0)))
                    .collect())
            })
        }

        fn release_lease<'a>(
            &'a self,
            name: &'a str,
            owner: &'a str,
            token: u64,
        ) -> $crate::StoreFuture<'a, bool> {
            Box::pin(async move {
                let n = sqlx::query($crate::lease::q::RELEASE)
                    .bind(name)
                    .bind(owner)
                    .bind($crate::rows::signed("fencing token", token)?)
                    .bind(0_i64)
                    .execute(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("release lease"))?
                    .rows_affected();
                Ok(n == 1)
            })
        }
    };
}

pub(crate) use leases_methods;
