//! Compiles the PostgreSQL case of the `doctor` tests only when `BERTH_TEST_POSTGRES_URL` is
//! set, so a test list never shows a test that silently did nothing.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(berth_test_postgres)");
    println!("cargo::rerun-if-env-changed=BERTH_TEST_POSTGRES_URL");
    if std::env::var_os("BERTH_TEST_POSTGRES_URL").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=berth_test_postgres");
    }
}
