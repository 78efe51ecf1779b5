//! Plans and their queue: read, list, delete, claim, renew and complete claims.
//! Both SQL stores get these `Store` methods from `plans_methods!`, inside `sql_store!`.

/// The `Store` methods on plans, for `$store` over `$db` (see `sql_store!`).
macro_rules! plans_methods {
    ($store:ty, $db:ty, $backend:expr) => {
        fn get_plan<'a>(
            &'a self,
            id: &'a str,
        ) -> $crate::StoreFuture<'a, Option<$crate::PlanRecord>> {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {} FROM plans WHERE id = $1",
                    $crate::rows::PLAN_COLUMNS
                );
                let row = sqlx::query_as::<_, $crate::rows::PlanRow>(&sql)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("read plan"))?;
                row.map($crate::rows::PlanRow::into_record).transpose()
            })
        }

        fn list_plans(&self) -> $crate::StoreFuture<'_, Vec<$crate::PlanRecord>> {
            Box::pin(async move {
                let sql = format!("SELECT {} FROM plans", $crate::rows::PLAN_COLUMNS);
                let rows = sqlx::query_as::<_, $crate::rows::PlanRow>(&sql)
                    .fetch_all(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("list plans"))?;
                $crate::sql::sorted_plans($crate::rows::convert(
                    rows,
                    $crate::rows::PlanRow::into_record,
                )?)
            })
        }

        fn count_queued_plans(&self) -> $crate::StoreFuture<'_, u64> {
            Box::pin(async move {
                let n: i64 = sqlx::query_scalar("SELECT count(*) FROM plan_queue")
                    .fetch_one(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("count queued plans"))?;
                Ok(u64::try_from(n).unwrap_or(0))
            })
        }

        fn delete_plan<'a>(&'a self, id: &'a str) -> $crate::StoreFuture<'a, ()> {
            Box::pin(async move {
                let n = sqlx::query($crate::sql::q::DELETE_PLAN)
                    .bind(id)
                    .execute(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("delete plan"))?
                    .rows_affected();
                $crate::sql::deleted(n, $crate::RecordKind::Plan, id)
            })
        }

        fn claim_plan<'a>(
            &'a self,
            owner: &'a str,
            now: chrono::DateTime<chrono::Utc>,
            hold: std::time::Duration,
        ) -> $crate::StoreFuture<'a, Option<$crate::PlanClaim>> {
            use $crate::StoreError as E;
            Box::pin($crate::lease::retry_serialization_n(
                40,
                move || async move {
                    let any: Option<String> = sqlx::query_scalar($crate::queue::q::ANY_CLAIMABLE)
                        .bind($crate::rows::micros(now))
                        .fetch_optional(&self.pool)
                        .await
                        .map_err(E::db("read plan queue"))?;
                    if any.is_none() {
                        return Ok(None);
                    }
                    let sql = $crate::queue::claim_sql($backend);
                    let mut tx = self
                        .begin_write()
                        .await
                        .map_err(E::db("begin transaction"))?;
                    let row = sqlx::query_as::<_, $crate::queue::ClaimRow>(&sql)
                        .bind(owner)
                        .bind($crate::rows::micros(now))
                        .bind($crate::queue::claim_end(now, hold))
                        .bind($crate::SCHEMA_VERSION as i64)
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(E::db("claim plan"))?;
                    tx.commit().await.map_err(E::db("commit"))?;
                    row.map($crate::queue::ClaimRow::into_claim).transpose()
                },
            ))
        }

        fn renew_plan_claim<'a>(
            &'a self,
            plan_id: &'a str,
            owner: &'a str,
            now: chrono::DateTime<chrono::Utc>,
            hold: std::time::Duration,
        ) -> $crate::StoreFuture<'a, bool> {
            Box::pin(async move {
                let end = $crate::queue::claim_end(now, hold);
                let n = self
                    .write_one("renew plan claim", || {
                        sqlx::query($crate::queue::q::RENEW)
                            .bind(plan_id)
                            .bind(owner)
                            .bind(end)
                    })
                    .await?;
                Ok(n == 1)
            })
        }

        fn complete_plan_claim<'a>(
            &'a self,
            plan_id: &'a str,
            owner: &'a str,
        ) -> $crate::StoreFuture<'a, bool> {
            Box::pin(async move {
                let n = self
                    .write_one("complete plan claim", || {
                        sqlx::query($crate::queue::q::COMPLETE)
                            .bind(plan_id)
                            .bind(owner)
                    })
                    .await?;
                Ok(n == 1)
            })
        }

        fn release_plan_claims<'a>(&'a self, owner: &'a str) -> $crate::StoreFuture<'a, u64> {
            Box::pin(self.write_one("release plan claims", move || {
                sqlx::query($crate::queue::q::RELEASE_OWNER).bind(owner)
            }))
        }

        fn queued_plans(&self) -> $crate::StoreFuture<'_, Vec<$crate::QueuedPlan>> {
            Box::pin(async move {
                let rows = sqlx::query_as::<_, $crate::queue::ClaimRow>($crate::queue::q::LIST)
                    .fetch_all(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("list plan queue"))?;
                $crate::rows::convert(rows, $crate::queue::ClaimRow::into_queued)
            })
        }
    };
}

pub(crate) use plans_methods;
