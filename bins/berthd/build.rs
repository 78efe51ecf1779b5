//! Compiles the PostgreSQL variants of the end-to-end tests only when `BERTH_TEST_POSTGRES_URL`
//! is set, and the tests that mount a small file system only when `BERTH_TEST_MOUNT=1` (root),
//! so a test list never shows a test that silently did nothing.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(berth_test_postgres)");
    println!("cargo::rustc-check-cfg=cfg(berth_test_mount)");
    println!("cargo::rerun-if-env-changed=BERTH_TEST_MOUNT");
    if std::env::var_os("BERTH_TEST_MOUNT").is_some_and(|v| v == "1") {
        println!("cargo::rustc-cfg=berth_test_mount");
    }
    println!("cargo::rerun-if-env-changed=BERTH_TEST_POSTGRES_URL");
    if std::env::var_os("BERTH_TEST_POSTGRES_URL").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=berth_test_postgres");
    }
}
