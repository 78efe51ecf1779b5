//! SQLite-only checks: durability across reopen, pragmas, raw encrypted bytes, two stores on one
//! file, schema-version refusal, URL handling.

use std::sync::Arc;

use berth_calendar::Policy;
use berth_store::{
    CredentialKey, NewPlan, NewProvider, SCHEMA_VERSION, Secret, SqliteStore, Store, StoreError,
    StoreOptions, load_calendar,
};
use serde_json::json;
use tokio::sync::Barrier;

use crate::fixtures::{marker, t0};

fn plan(id: &str) -> NewPlan {
    NewPlan {
        id: id.to_owned(),
        name: id.to_owned(),
        status: "template".to_owned(),
        request: json!({"name": id}),
        created_at: t0(),
    }
}

#[tokio::test]
async fn committed_data_survives_reopen_and_parent_dirs_are_created_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/deeper/berth.db");
    let url = format!("sqlite://{}", path.display());
    let key = CredentialKey::new([1; 32]);
    // A missing directory is refused unless the caller asks for it: nothing is created.
    let refused = berth_store::open(&url).await.err().map(|e| e.to_string());
    assert_eq!(
        refused,
        Some(format!(
            "invalid sqlite url: directory {} does not exist; expected an existing directory (or the option to create it)",
            dir.path().join("nested/deeper").display()
        ))
    );
    assert!(!dir.path().join("nested").exists());
    let create = StoreOptions {
        create_dirs: true,
        ..StoreOptions::default()
    };
    {
        let store = berth_store::open_with(&url, &create).await.unwrap();
        assert_eq!(store.backend(), berth_store::Backend::Sqlite);
        store
            .append_commands("cal", 0, &[marker(1), marker(2)])
            .await
            .unwrap();
        store.create_plan(&plan("p")).await.unwrap();
        let p = NewProvider {
            name: "os".to_owned(),
            endpoint: "http://127.0.0.1:5000".to_owned(),
            metadata: json!({}),
            credentials: Some(Secret::new("pw")),
            now: t0(),
        };
        store.put_provider(&p, Some(&key)).await.unwrap();
        store.close().await.unwrap();
    }
    assert!(path.is_file());
    let store = berth_store::open(&url).await.unwrap();
    assert_eq!(store.head("cal").await.unwrap(), 2);
    let (cal, head) = load_calendar(&*store, "cal", Policy::default())
        .await
        .unwrap();
    assert_eq!((head, cal.clock()), (2, Some(t0())));
    assert_eq!(store.get_plan("p").await.unwrap().unwrap().version, 1);
    assert_eq!(
        store
            .provider_credentials("os", &key)
            .await
            .unwrap()
            .unwrap()
            .expose(),
        "pw"
    );
    // Migrations ran once; reopening neither repeats nor fails them.
    assert_eq!(
        store.append_commands("cal", 2, &[marker(3)]).await.unwrap(),
        3
    );
}

#[tokio::test]
async fn file_databases_run_wal_with_full_sync_and_foreign_keys() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("b.db").display());
    let store = SqliteStore::open(&url, &StoreOptions::default())
        .await
        .unwrap();
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(store.pool())
        .await
        .unwrap();
    let sync: i64 = sqlx::query_scalar("PRAGMA synchronous")
        .fetch_one(store.pool())
        .await
        .unwrap();
    let fk: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
        .fetch_one(store.pool())
        .await
        .unwrap();
    let busy: i64 = sqlx::query_scalar("PRAGMA busy_timeout")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!((mode.as_str(), sync, fk, busy), ("wal", 2, 1, 10_000));
}

#[tokio::test]
async fn credentials_are_ciphertext_on_disk() {
    let store = SqliteStore::open("sqlite::memory:", &StoreOptions::default())
        .await
        .unwrap();
    let p = NewProvider {
        name: "os".to_owned(),
        endpoint: "e".to_owned(),
        metadata: json!({}),
        credentials: Some(Secret::new("plain-text-password")),
        now: t0(),
    };
    store
        .put_provider(&p, Some(&CredentialKey::new([9; 32])))
        .await
        .unwrap();
    let blob: Vec<u8> = sqlx::query_scalar("SELECT credentials FROM providers WHERE name = 'os'")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert!(blob.len() > "plain-text-password".len());
    assert!(!blob.windows(5).any(|w| w == b"plain"));
}

#[tokio::test]
async fn every_table_has_a_schema_version_and_newer_rows_are_refused() {
    let store = SqliteStore::open("sqlite::memory:", &StoreOptions::default())
        .await
        .unwrap();
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name",
    )
    .fetch_all(store.pool())
    .await
    .unwrap();
    assert_eq!(
        tables,
        [
            "commands",
            "idempotency",
            "leases",
            "plan_queue",
            "plans",
            "providers",
            "snapshots",
            "streams",
            "subscriptions"
        ]
    );
    for t in &tables {
        let cols: Vec<String> =
            sqlx::query_scalar(&format!("SELECT name FROM pragma_table_info('{t}')"))
                .fetch_all(store.pool())
                .await
                .unwrap();
        assert!(cols.iter().any(|c| c == "schema_version"), "{t}: {cols:?}");
    }
    store.create_plan(&plan("p")).await.unwrap();
    let stored: i64 = sqlx::query_scalar("SELECT schema_version FROM plans")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(stored, i64::from(SCHEMA_VERSION));
    sqlx::query("UPDATE plans SET schema_version = 99")
        .execute(store.pool())
        .await
        .unwrap();
    match store.get_plan("p").await {
        Err(StoreError::SchemaTooNew {
            what: "plan",
            found: 99,
            supported,
        }) => assert_eq!(supported, SCHEMA_VERSION),
        other => panic!("expected a schema refusal, got {other:?}"),
    }
    // Garbage in a command row is reported, not panicked on.
    store.append_commands("c", 0, &[marker(1)]).await.unwrap();
    sqlx::query("UPDATE commands SET command = '{\"command\":\"explode\"}'")
        .execute(store.pool())
        .await
        .unwrap();
    assert!(matches!(
        store.commands_since("c", 0).await,
        Err(StoreError::Corrupt {
            what: "command",
            ..
        })
    ));
}

/// Two stores (as two processes would) on one file: appends still admit exactly one winner.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_stores_on_one_file_serialize_appends() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("shared.db").display());
    let a = berth_store::open(&url).await.unwrap();
    let b = berth_store::open(&url).await.unwrap();
    const N: usize = 16;
    let barrier = Arc::new(Barrier::new(N));
    let mut tasks = Vec::new();
    for i in 0..N {
        let store = if i % 2 == 0 { a.clone() } else { b.clone() };
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            store.append_commands("s", 0, &[marker(i as u64)]).await
        }));
    }
    let mut wins = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(1) => wins += 1,
            Err(StoreError::Conflict { actual: 1, .. }) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(wins, 1);
    assert_eq!(b.head("s").await.unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn daemons_opening_a_new_file_together_all_migrate_it() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("new.db").display());
        let start = Arc::new(Barrier::new(6));
        let opens: Vec<_> = (0..6)
            .map(|_| {
                let (url, start) = (url.clone(), Arc::clone(&start));
                tokio::spawn(async move {
                    start.wait().await;
                    SqliteStore::open(&url, &StoreOptions::default()).await
                })
            })
            .collect();
        let mut stores = Vec::new();
        for o in opens {
            match o.await.unwrap() {
                Ok(s) => stores.push(s),
                Err(e) => panic!("round {round}: {e:?}"),
            }
        }
        // One schema, usable by every store.
        for (i, s) in stores.iter().enumerate() {
            let head = s.head("cal").await.unwrap();
            s.append_commands("cal", head, &[marker(i as u64)])
                .await
                .unwrap();
        }
        assert_eq!(stores[0].head("cal").await.unwrap(), 6);
    }
}

#[tokio::test]
async fn urls_are_dispatched_and_never_echoed() {
    let err = berth_store::open("mysql://user:hunter2@127.0.0.1/db")
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::UnsupportedUrl { ref scheme } if scheme == "mysql"));
    assert!(!err.to_string().contains("hunter2"));
    let err = berth_store::open("postgres://user:hunter2@127.0.0.1:notaport/db")
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        StoreError::Invalid {
            what: "postgres url",
            ..
        }
    ));
    assert!(!err.to_string().contains("hunter2"));
    let bad_schema = StoreOptions {
        pg_schema: Some("Robert'); DROP".to_owned()),
        ..StoreOptions::default()
    };
    let err = berth_store::open_with("postgres://u@127.0.0.1:1/db", &bad_schema)
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        StoreError::Invalid {
            what: "postgres schema",
            ..
        }
    ));
    let mem = berth_store::open("sqlite::memory:").await.unwrap();
    mem.ping().await.unwrap();
    assert_eq!(mem.append_commands("m", 0, &[marker(1)]).await.unwrap(), 1);
    assert_eq!(mem.commands_since("m", 0).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_damaged_snapshot_is_refused_and_older_ones_stay_readable() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("berth.db").display());
    let store = SqliteStore::open(&url, &StoreOptions::default())
        .await
        .unwrap();
    store
        .append_commands("cal", 0, &[marker(1), marker(2), marker(3)])
        .await
        .unwrap();
    store
        .put_snapshot("cal", 1, r#"{"at":1}"#, t0())
        .await
        .unwrap();
    store
        .put_snapshot("cal", 2, r#"{"at":2}"#, t0())
        .await
        .unwrap();
    // One changed byte in the stored state (still valid JSON) is detected.
    sqlx::query("UPDATE snapshots SET state = '{\"at\":3}' WHERE seq = 2")
        .execute(store.pool())
        .await
        .unwrap();
    for res in [
        store.snapshot_at("cal", 2).await,
        store.latest_snapshot("cal").await,
    ] {
        match res {
            Err(StoreError::Corrupt { what, detail }) => {
                assert_eq!(what, "snapshot");
                assert!(detail.contains("checksum"), "{detail}");
            }
            other => panic!("expected a corrupt snapshot, got {other:?}"),
        }
    }
    assert_eq!(store.snapshot_seqs("cal").await.unwrap(), vec![2, 1]);
    let older = store.snapshot_at("cal", 1).await.unwrap().unwrap();
    assert_eq!(older.state, r#"{"at":1}"#);
    // A row written before checksums existed is read as it is.
    sqlx::query(
        "INSERT INTO snapshots (stream, seq, state, created_at_us, schema_version) VALUES ('cal', 3, '{\"old\":true}', 0, 1)",
    )
    .execute(store.pool())
    .await
    .unwrap();
    let legacy = store.latest_snapshot("cal").await.unwrap().unwrap();
    assert_eq!((legacy.seq, legacy.state.as_str()), (3, r#"{"old":true}"#));
    store.close().await.unwrap();
}

#[tokio::test]
async fn a_read_only_database_refuses_writes_as_such_and_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("berth.db");
    let url = format!("sqlite://{}", path.display());
    {
        let store = berth_store::open(&url).await.unwrap();
        store.append_commands("cal", 0, &[marker(1)]).await.unwrap();
        store.close().await.unwrap();
    }
    // The same file opened read-only (as on a read-only mount): reads work, writes are refused
    // with the reason, not as an outage.
    let store = berth_store::open(&format!("{url}?mode=ro")).await.unwrap();
    assert_eq!(store.head("cal").await.unwrap(), 1);
    let e = store
        .append_commands("cal", 1, &[marker(2)])
        .await
        .unwrap_err();
    assert!(
        matches!(
            e,
            StoreError::Refused {
                refusal: berth_store::Refusal::ReadOnly,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "the store refuses writes during advance stream: the database is read-only; make its file system or server writable to resume writes"
    );
    // The refusal left no broken connection behind: reads go on, and so do more refusals.
    assert_eq!(store.head("cal").await.unwrap(), 1);
    let again = store.append_commands("cal", 1, &[marker(2)]).await;
    assert!(
        matches!(again, Err(StoreError::Refused { .. })),
        "{again:?}"
    );
}

/// A migration numbered below the newest applied one is still applied when it appears later
/// (a database migrated by a build that had 0004 but not 0003, then opened by one with both).
#[tokio::test]
async fn a_migration_numbered_below_the_newest_applied_one_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite");
    let without_3 = dir.path().join("without_3");
    std::fs::create_dir(&without_3).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        if !e.file_name().to_string_lossy().starts_with("0003_") {
            std::fs::copy(e.path(), without_3.join(e.file_name())).unwrap();
        }
    }
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("berth.db").display()
    );
    {
        let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
        let early = sqlx::migrate::Migrator::new(without_3.as_path())
            .await
            .unwrap();
        early.run(&pool).await.unwrap();
        let applied: Vec<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
                .fetch_all(&pool)
                .await
                .unwrap();
        assert!(applied.contains(&4) && !applied.contains(&3), "{applied:?}");
        pool.close().await;
    }
    let store = SqliteStore::open(&url, &StoreOptions::default())
        .await
        .unwrap();
    let applied: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
            .fetch_all(store.pool())
            .await
            .unwrap();
    assert!(applied.contains(&3) && applied.contains(&4), "{applied:?}");
    // Both late (leases, 0003) and early (queue, 0004) tables work.
    store.create_plan(&plan("p")).await.unwrap();
    let claim = store
        .claim_plan("me", t0(), std::time::Duration::from_secs(5))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claim.plan_id, "p");
    assert!(store.leases().await.unwrap().is_empty());
}
