//! The database a test daemon runs on: a SQLite file in the test's directory, or (built with
//! `BERTH_TEST_POSTGRES_URL`) a fresh PostgreSQL schema per test, so reruns and parallel tests
//! never share state.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use berth_store::{Store, StoreOptions};

/// Where a daemon keeps its state.
pub enum Db {
    /// `sqlite://` URL of a file.
    Sqlite { url: String },
    /// A PostgreSQL URL and the schema holding this test's tables.
    #[cfg(berth_test_postgres)]
    Postgres { url: String, schema: String },
}

impl Db {
    /// `berth.db` in `dir`.
    pub fn sqlite(dir: &Path) -> Db {
        Db::Sqlite {
            url: format!("sqlite://{}", dir.join("berth.db").display()),
        }
    }

    /// A new, empty schema named after `test` (and this process) in the test cluster.
    #[cfg(berth_test_postgres)]
    pub fn postgres(test: &str) -> Db {
        let url = std::env::var("BERTH_TEST_POSTGRES_URL")
            .expect("BERTH_TEST_POSTGRES_URL was set when this test was built; set it again");
        let schema = format!("e2e_{test}_{}", std::process::id());
        let db = Db::Postgres { url, schema };
        db.drop_schema();
        eprintln!("PostgreSQL end-to-end test `{test}` in schema of its own");
        db
    }

    /// Points a `berthd` command at this database.
    pub fn configure(&self, cmd: &mut Command) {
        match self {
            Db::Sqlite { url } => {
                cmd.env("BERTH_DATABASE_URL", url)
                    .env_remove("BERTH_PG_SCHEMA");
            }
            #[cfg(berth_test_postgres)]
            Db::Postgres { url, schema } => {
                cmd.env("BERTH_DATABASE_URL", url)
                    .env("BERTH_PG_SCHEMA", schema);
            }
        }
    }

    /// Opens the store the daemon uses, runs `f` on it, closes it.
    pub fn block_on<F, Fut, R>(&self, f: F) -> R
    where
        F: FnOnce(Arc<dyn Store>) -> Fut,
        Fut: Future<Output = R>,
    {
        let (url, options) = match self {
            Db::Sqlite { url } => (url, StoreOptions::default()),
            #[cfg(berth_test_postgres)]
            Db::Postgres { url, schema } => (
                url,
                StoreOptions {
                    pg_schema: Some(schema.clone()),
                    ..StoreOptions::default()
                },
            ),
        };
        runtime().block_on(async {
            let store = berth_store::open_with(url, &options).await.unwrap();
            let out = f(Arc::clone(&store)).await;
            store.close().await.unwrap();
            out
        })
    }

    /// Drops this test's schema (and everything in it).
    #[cfg(berth_test_postgres)]
    pub fn drop_schema(&self) {
        use sqlx::Connection;
        let Db::Postgres { url, schema } = self else {
            return;
        };
        runtime().block_on(async {
            let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
            sqlx::query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                .execute(&mut conn)
                .await
                .unwrap();
            conn.close().await.unwrap();
        });
    }
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}
