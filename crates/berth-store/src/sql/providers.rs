//! Providers and their sealed credentials: store, read, list, delete.
//! Both SQL stores get these `Store` methods from `providers_methods!`, inside `sql_store!`.

/// The `Store` methods on providers, for `$store` over `$db` (see `sql_store!`).
macro_rules! providers_methods {
    ($store:ty, $db:ty, $backend:expr) => {
        fn put_provider<'a>(
            &'a self,
            provider: &'a $crate::NewProvider,
            key: Option<&'a $crate::CredentialKey>,
        ) -> $crate::StoreFuture<'a, $crate::ProviderRecord> {
            Box::pin(async move {
                let sealed = $crate::sql::seal_credentials(provider, key)?;
                let sql = format!(
                    "INSERT INTO providers (name, endpoint, metadata, credentials, created_at_us, updated_at_us, schema_version) \
                     VALUES ($1, $2, $3, $4, $5, $5, $6) ON CONFLICT (name) DO UPDATE SET endpoint = excluded.endpoint, \
                     metadata = excluded.metadata, credentials = excluded.credentials, updated_at_us = excluded.updated_at_us, \
                     schema_version = excluded.schema_version RETURNING {}",
                    $crate::rows::PROVIDER_COLUMNS
                );
                let row = sqlx::query_as::<_, $crate::rows::ProviderRow>(&sql)
                    .bind(&provider.name)
                    .bind(&provider.endpoint)
                    .bind($crate::rows::to_text("provider metadata", &provider.metadata)?)
                    .bind(sealed)
                    .bind($crate::rows::micros(provider.now))
                    .bind($crate::SCHEMA_VERSION as i64)
                    .fetch_one(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("write provider"))?;
                row.into_record()
            })
        }

        fn get_provider<'a>(
            &'a self,
            name: &'a str,
        ) -> $crate::StoreFuture<'a, Option<$crate::ProviderRecord>> {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {} FROM providers WHERE name = $1",
                    $crate::rows::PROVIDER_COLUMNS
                );
                let row = sqlx::query_as::<_, $crate::rows::ProviderRow>(&sql)
                    .bind(name)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("read provider"))?;
                row.map($crate::rows::ProviderRow::into_record).transpose()
            })
        }

        fn list_providers(&self) -> $crate::StoreFuture<'_, Vec<$crate::ProviderRecord>> {
            Box::pin(async move {
                let sql = format!("SELECT {} FROM providers", $crate::rows::PROVIDER_COLUMNS);
                let rows = sqlx::query_as::<_, $crate::rows::ProviderRow>(&sql)
                    .fetch_all(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("list providers"))?;
                let mut all =
                    $crate::rows::convert(rows, $crate::rows::ProviderRow::into_record)?;
                all.sort_by(|a, b| a.name.cmp(&b.name));
                Ok(all)
            })
        }

        fn provider_credentials<'a>(
            &'a self,
            name: &'a str,
            key: &'a $crate::CredentialKey,
        ) -> $crate::StoreFuture<'a, Option<$crate::Secret>> {
            Box::pin(async move {
                let row: Option<Option<Vec<u8>>> =
                    sqlx::query_scalar($crate::sql::q::PROVIDER_SECRET)
                        .bind(name)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err($crate::StoreError::db("read provider credentials"))?;
                match row {
                    None => Err($crate::StoreError::NotFound {
                        kind: $crate::RecordKind::Provider,
                        id: name.to_owned(),
                    }),
                    Some(None) => Ok(None),
                    Some(Some(blob)) => $crate::crypto::open(key, name, &blob).map(Some),
                }
            })
        }

        fn delete_provider<'a>(&'a self, name: &'a str) -> $crate::StoreFuture<'a, ()> {
            Box::pin(async move {
                let n = sqlx::query($crate::sql::q::DELETE_PROVIDER)
                    .bind(name)
                    .execute(&self.pool)
                    .await
                    .map_err($crate::StoreError::db("delete provider"))?
                    .rows_affected();
                $crate::sql::deleted(n, $crate::RecordKind::Provider, name)
            })
        }
    };
}

pub(crate) use providers_methods;
