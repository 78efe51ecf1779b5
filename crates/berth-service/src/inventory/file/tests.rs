//! The file source: a good document gives pools, a catalog and a stable fingerprint; a bad
//! one is refused with `file:line:column` for every error.

use super::*;

const GOOD: &str = "candidates:\n  - candidate_id: a\n    inventory_type: cloud\n    latitude: 1\n    longitude: 1\n    capacity: {vcpus: 16, ram: 32768}\n";

#[tokio::test]
async fn a_file_is_read_on_every_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inv.yaml");
    std::fs::write(&path, GOOD).unwrap();
    let src = FileSource::file(&path);
    let first = src.load().await.unwrap();
    assert_eq!(first.candidates, 1);
    assert_eq!(first.pools.provider, "inventory");
    let a = &first.pools.pools["a"];
    assert_eq!((a.get("vcpu"), a.get("ram_mib")), (16, 32768));
    assert_eq!(src.load().await.unwrap().fingerprint, first.fingerprint);

    std::fs::write(&path, GOOD.replace("16", "8")).unwrap();
    let second = src.load().await.unwrap();
    assert_eq!(second.pools.pools["a"].get("vcpu"), 8);
    assert_ne!(second.fingerprint, first.fingerprint);
}

#[tokio::test]
async fn every_error_is_named_with_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.yaml");
    let bad = "candidates:\n  - candidate_id: a\n    inventory_type: clowd\n    latitude: 1\n    longitude: 1\n  - candidate_id: b\n    inventory_type: cloud\n    latitude: 200\n    longitude: 1\n";
    std::fs::write(&path, bad).unwrap();
    let Err(ServiceError::InvalidInventory {
        message,
        diagnostics,
        origin,
    }) = FileSource::file(&path).load().await
    else {
        panic!("a bad inventory loaded");
    };
    assert_eq!(origin, format!("file {}", path.display()));
    let at = path.display().to_string();
    assert!(message.contains(&format!("{at}:3:21")), "{message}");
    assert!(message.contains(&format!("{at}:8:15")), "{message}");
    assert!(diagnostics.len() >= 2, "{diagnostics:?}");
}

#[tokio::test]
async fn a_missing_file_is_refused_naming_it() {
    let src = FileSource::file("/nonexistent/berth/inv.yaml");
    let Err(e) = src.load().await else {
        panic!("a missing file loaded");
    };
    assert!(
        e.to_string()
            .contains("cannot read /nonexistent/berth/inv.yaml"),
        "{e}"
    );
}
