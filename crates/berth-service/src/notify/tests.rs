//! Tests of webhook delivery: backoff, HTTPS to a loopback server signed by a test CA (trusted
//! through `ca_file`, refused without it), `require_https`, bad CA files, and host names
//! resolving to private addresses.

use std::net::SocketAddr;
use std::sync::Mutex;

use berth_calendar::{
    Amounts, CapacityChange, Command, Dimension, PoolKey, ReservationRequest,
    ThresholdSubscription, ZoneId,
};
use chrono::{DateTime, TimeZone, Utc};
use tokio_rustls::rustls;

use super::*;
use crate::{ManualClock, ReservationOptions, ReservationService};

#[test]
fn backoff_doubles_and_caps() {
    let cfg = NotifyConfig {
        initial_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_millis(500),
        ..NotifyConfig::default()
    };
    let d: Vec<u128> = (1..=5).map(|a| backoff(&cfg, a).as_millis()).collect();
    assert_eq!(d, vec![100, 200, 400, 500, 500]);
    assert_eq!(backoff(&cfg, 200).as_millis(), 500);
}

/// A test CA and a `localhost`/`127.0.0.1` server certificate it signed.
struct Pki {
    ca_pem: String,
    cert: rustls::pki_types::CertificateDer<'static>,
    key: rustls::pki_types::PrivateKeyDer<'static>,
}

fn pki() -> Pki {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
        KeyPair, KeyUsagePurpose,
    };
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "berth test ca");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap();
    let mut leaf =
        CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let cert = leaf.signed_by(&key, &issuer).unwrap();
    Pki {
        ca_pem: ca_cert.pem(),
        cert: cert.der().clone(),
        key: rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
    }
}

/// TLS over a loopback TCP listener for `axum::serve`; failed handshakes are skipped.
struct TlsListener {
    tcp: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((tcp, addr)) = self.tcp.accept().await else {
                continue;
            };
            if let Ok(tls) = self.acceptor.accept(tcp).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}

type Received = Arc<Mutex<Vec<serde_json::Value>>>;

/// A `/hook` route that keeps every JSON body POSTed to it.
fn hook_app() -> (axum::Router, Received) {
    let got: Received = Arc::default();
    let g = Arc::clone(&got);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |axum::Json(v): axum::Json<serde_json::Value>| {
            let g = Arc::clone(&g);
            async move {
                g.lock().unwrap().push(v);
                axum::http::StatusCode::OK
            }
        }),
    );
    (app, got)
}

/// An HTTPS webhook receiver on loopback with `pki`'s server certificate; returns its URL.
async fn https_receiver(pki: &Pki) -> (String, Received) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![pki.cert.clone()], pki.key.clone_key())
        .unwrap();
    let (app, got) = hook_app();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = tcp.local_addr().unwrap().port();
    let listener = TlsListener {
        tcp,
        acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(tls)),
    };
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("https://localhost:{port}/hook"), got)
}

fn ca_file(dir: &tempfile::TempDir, pem: &str) -> PathBuf {
    let p = dir.path().join("ca.pem");
    std::fs::write(&p, pem).unwrap();
    p
}

fn fast(ca_file: Option<PathBuf>) -> NotifyConfig {
    NotifyConfig {
        max_attempts: 3,
        initial_backoff: Duration::from_millis(10),
        request_timeout: Duration::from_secs(5),
        ca_file,
        // The test receivers listen on loopback.
        allow_private_callbacks: true,
        ..NotifyConfig::default()
    }
}

/// Waits until `done` holds for the notifier's stats (or 10 s pass) and returns them.
async fn settle(n: &Notifier, done: impl Fn(&NotifyStats) -> bool) -> NotifyStats {
    for _ in 0..500 {
        let s = n.stats();
        if done(&s) {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    n.stats()
}

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default()
}

fn h(n: i64) -> DateTime<Utc> {
    t0() + chrono::TimeDelta::hours(n)
}

#[tokio::test]
async fn a_subscription_over_https_is_delivered_with_the_configured_ca() {
    let pki = pki();
    let dir = tempfile::tempdir().unwrap();
    let (url, got) = https_receiver(&pki).await;
    let notifier = Notifier::try_spawn(fast(Some(ca_file(&dir, &pki.ca_pem)))).unwrap();
    let clock = ManualClock::new(t0());
    let store = berth_store::open("sqlite::memory:").await.unwrap();
    let svc = ReservationService::open(
        store,
        ReservationOptions::default(),
        Arc::new(clock.clone()),
        notifier.clone(),
    )
    .await
    .unwrap();
    svc.command(
        Command::IncreaseCapacity(CapacityChange {
            pool: PoolKey::new("z", "os"),
            start: t0(),
            end: None,
            amounts: Amounts::new().with("instances", 4),
        }),
        None,
    )
    .await
    .unwrap();
    let sub = ThresholdSubscription {
        zone: ZoneId::new("z"),
        provider: None,
        dimension: Dimension::instances(),
        below: 2,
    };
    let sid = svc.subscribe_capacity(sub, url.clone()).await.unwrap();
    let reserve =
        ReservationRequest::new("z", Amounts::new().with("instances", 3)).window(h(1), h(5));
    svc.command(Command::CreateReservation(reserve), None)
        .await
        .unwrap();
    clock.set(h(1));
    let (tx, rx) = tokio::sync::watch::channel(false);
    let timer = svc.spawn_timer(Duration::from_millis(10), rx);
    let stats = settle(&notifier, |s| s.delivered >= 1).await;
    let _ = tx.send(true);
    let _ = timer.await;
    assert_eq!((stats.delivered, stats.failed), (1, 0), "{stats:?}");
    let bodies = got.lock().unwrap().clone();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    assert_eq!(bodies[0]["subscription-id"], sid.as_str());
    assert_eq!(bodies[0]["event"]["event"], "capacity-threshold");
}

#[tokio::test]
async fn without_the_ca_https_delivery_fails_after_every_retry() {
    let pki = pki();
    let (url, got) = https_receiver(&pki).await;
    let notifier = Notifier::try_spawn(fast(None)).unwrap();
    notifier.send_all(vec![Notification {
        callback: url,
        body: serde_json::json!({"n": 1}),
    }]);
    let stats = settle(&notifier, |s| s.failed >= 1).await;
    assert_eq!(
        stats,
        NotifyStats {
            attempts: 3,
            delivered: 0,
            failed: 1,
            dropped: 0
        }
    );
    assert!(got.lock().unwrap().is_empty());
}

#[tokio::test]
async fn require_https_refuses_plain_http_callbacks() {
    let strict = Notifier::try_spawn(NotifyConfig {
        require_https: true,
        ..fast(None)
    })
    .unwrap();
    let err = strict
        .check_callback("http://127.0.0.1:9/cb")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("callback `http://127.0.0.1:9/cb`") && err.contains("require_https"),
        "{err}"
    );
    assert!(strict.check_callback("https://example.invalid/cb").is_ok());
    assert!(strict.check_callback("ftp://x").is_err());
    let lax = Notifier::disabled();
    assert!(lax.check_callback("http://127.0.0.1:9/cb").is_ok());
    assert!(lax.check_callback("ftp://x").is_err());

    // The service asks the notifier at subscription time: nothing is stored.
    let store = berth_store::open("sqlite::memory:").await.unwrap();
    let svc = ReservationService::open(
        store,
        ReservationOptions::default(),
        Arc::new(ManualClock::new(t0())),
        strict.clone(),
    )
    .await
    .unwrap();
    let refused = svc
        .subscribe_reservations(Default::default(), "http://127.0.0.1:9/cb".into())
        .await;
    assert!(
        matches!(&refused, Err(ServiceError::Invalid { message, .. }) if message.contains("require_https")),
        "{refused:?}"
    );
    assert!(svc.webhooks().await.is_empty());

    // A stored http:// callback is not POSTed either.
    strict.send_all(vec![Notification {
        callback: "http://127.0.0.1:9/cb".into(),
        body: serde_json::json!({}),
    }]);
    let stats = settle(&strict, |s| s.failed >= 1).await;
    assert_eq!((stats.attempts, stats.failed), (0, 1), "{stats:?}");
}

#[tokio::test]
async fn a_bad_ca_file_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.pem");
    let garbage = ca_file(&dir, "not a certificate\n");
    let broken = dir.path().join("broken.pem");
    std::fs::write(
        &broken,
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    for path in [missing, garbage, broken] {
        let err = Notifier::try_spawn(fast(Some(path.clone())))
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("CA file `{}`", path.display())),
            "{err}"
        );
    }
}

#[test]
fn non_public_callbacks_are_named() {
    use super::non_public;
    for (url, want) in [
        ("http://127.0.0.1:9/cb", Some("a loopback address")),
        ("http://localhost/cb", Some("the local host")),
        ("https://api.LOCALHOST./x", Some("the local host")),
        ("http://10.1.2.3/", Some("a private address")),
        ("http://172.20.0.1/", Some("a private address")),
        ("http://192.168.1.1/", Some("a private address")),
        ("http://100.64.0.1/", Some("a private address")),
        (
            "http://169.254.169.254/latest/meta-data",
            Some("a link-local address (where cloud metadata services answer)"),
        ),
        ("http://0.0.0.0/", Some("a non-unicast address")),
        ("http://[::1]:8080/", Some("a loopback address")),
        ("http://[fd00::1]/", Some("a private address")),
        ("http://[::ffff:10.0.0.1]/", Some("a private address")),
        (
            "http://[fe80::1]/",
            Some("a link-local address (where cloud metadata services answer)"),
        ),
        ("https://hooks.example.com/berth", None),
        ("http://8.8.8.8/", None),
        ("http://[2001:4860::8888]/", None),
    ] {
        assert_eq!(non_public(url), want, "{url}");
    }
}

#[tokio::test]
async fn private_callbacks_are_refused_unless_allowed() {
    let strict = Notifier::try_spawn(NotifyConfig::default()).unwrap();
    let e = strict
        .check_callback("http://169.254.169.254/latest/meta-data")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid input: callback `http://169.254.169.254/latest/meta-data` points at a link-local address (where cloud metadata services answer); expected a public address ([notify] allow_private_callbacks permits it)"
    );
    assert!(strict.check_callback("https://hooks.example.com/b").is_ok());
    let open = Notifier::try_spawn(NotifyConfig {
        allow_private_callbacks: true,
        ..NotifyConfig::default()
    })
    .unwrap();
    assert!(open.check_callback("http://10.0.0.7:8080/hook").is_ok());
}

/// A plain HTTP receiver on loopback; returns its port.
async fn http_receiver() -> (u16, Received) {
    let (app, got) = hook_app();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = tcp.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(tcp, app).await });
    (port, got)
}

/// Names of the tests' own (no DNS server answers for made-up names here).
fn lookup(table: &'static [(&'static str, &'static [&'static str])]) -> Lookup {
    Arc::new(move |name: String| {
        Box::pin(async move {
            let ips = table
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, ips)| ips.iter().map(|ip| ip.parse().unwrap()).collect())
                .unwrap_or_default();
            Ok(ips)
        })
    })
}

#[tokio::test]
async fn a_host_name_resolving_to_a_private_address_is_not_posted_to_unless_allowed() {
    const HOSTS: &[(&str, &[&str])] = &[("hooks.example", &["127.0.0.1"])];
    let (port, got) = http_receiver().await;
    let url = format!("http://hooks.example:{port}/hook");
    let note = || Notification {
        callback: url.clone(),
        body: serde_json::json!({"event": "reservation-started"}),
    };

    // The name passes the subscription check (it is not an address), but every connection
    // attempt finds only a loopback address and refuses it: nothing arrives.
    let strict = Notifier::try_spawn_with(
        NotifyConfig {
            allow_private_callbacks: false,
            ..fast(None)
        },
        lookup(HOSTS),
    )
    .unwrap();
    assert!(strict.check_callback(&url).is_ok());
    strict.send_all(vec![note()]);
    let stats = settle(&strict, |s| s.failed >= 1).await;
    assert_eq!(
        (stats.attempts, stats.delivered, stats.failed),
        (3, 0, 1),
        "{stats:?}"
    );
    assert!(got.lock().unwrap().is_empty());

    // Allowed, the same name resolves through the same resolver and the POST arrives.
    let open = Notifier::try_spawn_with(fast(None), lookup(HOSTS)).unwrap();
    open.send_all(vec![note()]);
    let stats = settle(&open, |s| s.delivered >= 1).await;
    assert_eq!((stats.delivered, stats.failed), (1, 0), "{stats:?}");
    assert_eq!(
        got.lock().unwrap().as_slice(),
        [serde_json::json!({"event": "reservation-started"})]
    );
}

#[tokio::test]
async fn the_resolver_keeps_public_addresses_and_names_what_it_refused() {
    use reqwest::dns::Resolve;
    const HOSTS: &[(&str, &[&str])] = &[
        ("mixed.example", &["10.1.2.3", "93.184.216.34", "fd00::1"]),
        ("metadata.example", &["169.254.169.254"]),
    ];
    let resolve = |allow_private: bool, name: &'static str| {
        let r = PublicOnly {
            allow_private,
            lookup: lookup(HOSTS),
        };
        async move {
            r.resolve(name.parse().unwrap())
                .await
                .map(|addrs| addrs.map(|a| a.ip().to_string()).collect::<Vec<_>>())
                .map_err(|e| e.to_string())
        }
    };
    assert_eq!(
        resolve(false, "mixed.example").await,
        Ok(vec!["93.184.216.34".to_owned()])
    );
    assert_eq!(
        resolve(false, "metadata.example").await,
        Err("callback host `metadata.example` resolves to 169.254.169.254, a link-local address (where cloud metadata services answer); expected a public address ([notify] allow_private_callbacks permits it)".to_owned())
    );
    assert_eq!(resolve(true, "mixed.example").await.map(|v| v.len()), Ok(3));
}
