//! SQLite backend: WAL journal, `synchronous = FULL`, busy timeout, foreign keys; writes are
//! `BEGIN IMMEDIATE` transactions so writers queue instead of failing on a lock upgrade.
//!
//! Writers of one store also queue on an async mutex first: SQLite admits one writer anyway,
//! and its busy handler polls with sleeps of up to 100 ms, which would dominate tail latency
//! under load. The busy timeout still orders writers from other processes.

use std::str::FromStr;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use std::sync::Arc;

use sqlx::{Connection as _, Sqlite, TransactionManager as _};
use tokio::sync::Mutex;

use crate::sql::WriteTx;
use crate::{Backend, StoreError, StoreOptions};

/// A store in one SQLite database (file, or memory for tests).
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pub(crate) pool: SqlitePool,
    write_lock: Arc<Mutex<()>>,
}

impl SqliteStore {
    /// Opens (creating it if needed, and its missing directories with
    /// [`StoreOptions::create_dirs`]) and migrates the database at `url`: `sqlite://PATH`,
    /// `sqlite:PATH` or `sqlite::memory:`.
    ///
    /// An in-memory database lives in one connection kept open for the life of the pool.
    pub async fn open(url: &str, options: &StoreOptions) -> Result<Self, StoreError> {
        let memory = url.contains(":memory:") || url.contains("mode=memory");
        let mut connect = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Invalid {
                what: "sqlite url",
                reason: format!("{e}; expected sqlite://PATH or sqlite::memory:"),
            })?
            .create_if_missing(true)
            .foreign_keys(true)
            .busy_timeout(options.busy_timeout);
        let pool = if memory {
            SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .test_before_acquire(false)
                .idle_timeout(None)
                .max_lifetime(None)
        } else {
            if let Some(dir) = connect.get_filename().parent()
                && !dir.as_os_str().is_empty()
                && !dir.exists()
            {
                if !options.create_dirs {
                    return Err(StoreError::Invalid {
                        what: "sqlite url",
                        reason: format!(
                            "directory {} does not exist; expected an existing directory (or the option to create it)",
                            dir.display()
                        ),
                    });
                }
                std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
                    path: dir.display().to_string(),
                    source,
                })?;
            }
            connect = connect
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full);
            SqlitePoolOptions::new()
                .max_connections(options.max_connections.max(1))
                // Released connections are pinged (below); a file's connection does not die
                // in the pool, so a second ping on acquire is a wasted hop to its thread.
                .test_before_acquire(false)
                .after_release(|conn, _| {
                    Box::pin(async move {
                        // A COMMIT that fails on a full or read-only disk leaves SQLite with its
                        // transaction rolled back but the driver counting one open, so the
                        // next BEGIN on this connection would fail: close such a connection.
                        // The ping waits for the rollback queued when the transaction dropped.
                        conn.ping().await?;
                        Ok(
                            <Sqlite as sqlx::Database>::TransactionManager::get_transaction_depth(
                                conn,
                            ) == 0,
                        )
                    })
                })
        };
        let pool = pool.acquire_timeout(options.acquire_timeout);
        // Switching a new file to WAL takes a lock the busy handler does not wait for: an
        // opener racing another one's migration sees SQLITE_BUSY at once. Try again.
        let mut attempt = 0;
        let pool = loop {
            match pool.clone().connect_with(connect.clone()).await {
                Ok(pool) => break pool,
                Err(sqlx::Error::Database(d))
                    if attempt < 8 && d.code().as_deref() == Some("5") =>
                {
                    attempt += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(10 * attempt)).await;
                }
                Err(e) => return Err(StoreError::db("open sqlite database")(e)),
            }
        };
        migrate(&pool).await?;
        Ok(SqliteStore {
            pool,
            write_lock: Arc::new(Mutex::new(())),
        })
    }

    /// The connection pool (for diagnostics and tests).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    async fn begin_write(&self) -> Result<WriteTx<Sqlite>, sqlx::Error> {
        let guard = self.write_lock.clone().lock_owned().await;
        let tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        Ok(WriteTx::new(tx, Some(guard)))
    }

    /// SQLite writes behind one lock and in process: a transaction costs no round trips, so
    /// every batch takes the general path.
    #[allow(clippy::unused_async)]
    pub(crate) async fn write_fast(
        &self,
        _batch: &crate::WriteBatch<'_>,
    ) -> Option<Result<crate::BatchOutcome, StoreError>> {
        None
    }
}

/// Applies the embedded migrations. SQLite has no migration lock: daemons starting together on a
/// new file can both try one migration, and the loser's statement fails once the winner commits
/// (each migration is one transaction, so nothing is half applied). Running the migrator again
/// then finds the migration applied and goes on.
async fn migrate(pool: &SqlitePool) -> Result<(), StoreError> {
    let migrator = sqlx::migrate!("./migrations/sqlite");
    let mut attempt = 0;
    loop {
        match migrator.run(pool).await {
            Ok(()) => return Ok(()),
            Err(
                sqlx::migrate::MigrateError::Execute(_)
                | sqlx::migrate::MigrateError::ExecuteMigration(..),
            ) if attempt < 8 => {
                attempt += 1;
                tokio::time::sleep(std::time::Duration::from_millis(10 * attempt)).await;
            }
            Err(source) => return Err(StoreError::Migration { source }),
        }
    }
}

crate::sql::sql_store!(SqliteStore, sqlx::Sqlite, Backend::Sqlite);
