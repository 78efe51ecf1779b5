//! Webhook subscriptions: create, read, list, delete.
//! Both SQL stores get these `Store` methods from `subscriptions_methods!`, inside `sql_store!`.

/// The `Store` methods on subscriptions, for `$store` over `$db` (see `sql_store!`).
macro_rules! subscriptions_methods {
    ($store:ty, $db:ty, $backend:expr) => {
        fn create_subscription<'a>(
            &'a self,
            sub: &'a $crate::NewSubscription,
        ) -> $crate::StoreFuture<'a, $crate::SubscriptionRecord> {
            Box::pin(async move {
                let res = sqlx::query($crate::sql::q::INSERT_SUB)
                    .bind(&sub.id)
                    .bind(sub.kind.as_str())
                    .bind($crate::rows::to_text("subscription spec", &sub.spec)?)
                    .bind(&sub.callback_url)
                    .bind($crate::rows::micros(sub.created_at))
                    .bind($crate::SCHEMA_VERSION as i64)
                    .execute(&self.pool)
                    .await;
                match res {
                    Ok(_) => Ok($crate::sql::created_sub(sub)),
                    Err(e) if $crate::error::is_unique_violation(&e) => {
                        Err($crate::StoreError::Duplicate {
                            kind: $crate::RecordKind::Subscription,
                            id: sub.id.clone(),
                        })
                    }
                    Err(e) => Err($crate::StoreError::db("create subscription")(e)),
                }
            })
        }

        fn get_subscription<'a>(
            &'a self,
            id: &'a str,
        ) -> $crate::StoreFuture<'a, Option<$crate::SubscriptionRecord>> {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {} FROM subscriptions WHERE id = $1",
                    $crate::sql::q::SUB_COLUMNS
                );
                let row = sqlx::query_as::<_, $crate::rows::SubRow>(&sql)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("read subscription"))?;
                row.map($crate::rows::SubRow::into_record).transpose()
            })
        }

        fn list_subscriptions(
            &self,
            kind: Option<$crate::SubscriptionKind>,
        ) -> $crate::StoreFuture<'_, Vec<$crate::SubscriptionRecord>> {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {} FROM subscriptions WHERE $1 = '' OR kind = $1",
                    $crate::sql::q::SUB_COLUMNS
                );
                let rows = sqlx::query_as::<_, $crate::rows::SubRow>(&sql)
                    .bind(kind.map_or("", $crate::SubscriptionKind::as_str))
                    .fetch_all(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("list subscriptions"))?;
                let mut subs = $crate::rows::convert(rows, $crate::rows::SubRow::into_record)?;
                subs.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
                Ok(subs)
            })
        }

        fn delete_subscription<'a>(&'a self, id: &'a str) -> $crate::StoreFuture<'a, ()> {
            Box::pin(async move {
                let n = sqlx::query($crate::sql::q::DELETE_SUB)
                    .bind(id)
                    .execute(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("delete subscription"))?
                    .rows_affected();
                $crate::sql::deleted(n, $crate::RecordKind::Subscription, id)
            })
        }
    };
}

pub(crate) use subscriptions_methods;
