//! Overload against the real daemon: with a small in-flight limit, an open-loop burst at four
//! times the measured saturation rate is shed with 503 + `Retry-After`, the accepted requests
//! are answered, and no acknowledged reservation is lost.

use berthd::loadtest::{OverloadOptions, overload};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overload_is_shed_with_retry_after_and_loses_nothing() {
    let opts = OverloadOptions {
        daemon: env!("CARGO_BIN_EXE_berthd").into(),
        factor: 4.0,
        seconds: 1.0,
        clients: 16,
        max_in_flight: 4,
        max_connections: 256,
    };
    let r = overload(&opts).await.unwrap();
    assert!(r.saturation.ok > 0, "{r:?}");
    assert!(r.shed > 0, "nothing was shed: {r:?}");
    assert!(r.accepted.ok > 0, "nothing was accepted: {r:?}");
    assert_eq!(r.lost, 0, "{r:?}");
    assert!(
        r.daemon_rss_mib.is_some_and(|(b, p)| b > 0.0 && p >= b),
        "{r:?}"
    );
}
