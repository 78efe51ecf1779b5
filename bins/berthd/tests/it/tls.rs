//! HTTPS on berthd's own listener (`[server] tls_cert`/`tls_key`) with a CA made in the test,
//! `[notify] require_https` at subscription time, and start-up refusals naming a bad
//! certificate, key or webhook CA file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use reqwest::blocking::Client;

use serde_json::json;

use super::{Daemon, Db, TOKEN, free_port, get, post, site, terminate, wait_ready};

/// PEM files of a test CA and of a `localhost`/`127.0.0.1` certificate it signed.
pub(super) struct Pki {
    pub(super) ca: PathBuf,
    pub(super) cert: PathBuf,
    pub(super) key: PathBuf,
}

pub(super) fn pki(dir: &Path) -> Pki {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
        KeyPair, KeyUsagePurpose,
    };
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "berthd test ca");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap();
    let mut leaf =
        CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let cert = leaf.signed_by(&key, &issuer).unwrap();
    let p = Pki {
        ca: dir.join("ca.pem"),
        cert: dir.join("cert.pem"),
        key: dir.join("key.pem"),
    };
    std::fs::write(&p.ca, ca_cert.pem()).unwrap();
    std::fs::write(&p.cert, cert.pem()).unwrap();
    std::fs::write(&p.key, key.serialize_pem()).unwrap();
    p
}

pub(super) fn berthd(dir: &Path, port: u16) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_berthd"));
    cmd.env("BERTH_LISTEN", format!("127.0.0.1:{port}"))
        .env("BERTH_INVENTORY", dir.join("inventory.yaml"))
        .env("BERTH_TOKENS", TOKEN)
        .env("BERTH_LOG", "warn")
        .env("BERTH_NOTIFY_ALLOW_PRIVATE", "true")
        .current_dir(dir);
    Db::sqlite(dir).configure(&mut cmd);
    cmd
}

fn trusting(ca: Option<&Path>) -> Client {
    let mut b = Client::builder().timeout(Duration::from_secs(20));
    if let Some(ca) = ca {
        let pem = std::fs::read(ca).unwrap();
        b = b.add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap());
    }
    b.build().unwrap()
}

#[test]
fn the_listener_serves_https_to_clients_that_trust_its_ca() {
    let dir = site();
    let pki = pki(dir.path());
    let port = free_port();
    let child = berthd(dir.path(), port)
        .env("BERTH_TLS_CERT", &pki.cert)
        .env("BERTH_TLS_KEY", &pki.key)
        .env("BERTH_NOTIFY_REQUIRE_HTTPS", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let with_ca = trusting(Some(&pki.ca));
    let mut d = wait_ready(
        Daemon {
            child,
            base: format!("https://localhost:{port}"),
        },
        &with_ca,
    );
    let (s, v) = get(&with_ca, &d, "/v1/plans");
    assert_eq!(s, 200, "{v}");
    assert!(v["plans"].is_array(), "{v}");
    // `[notify] require_https`: a plain http callback is refused at subscription time.
    let (s, v) = post(
        &with_ca,
        &d,
        "/reservation/subscribe",
        json!({"filters": {}, "callback": "http://127.0.0.1:9/cb"}),
    );
    assert_eq!(s, 400, "{v}");
    assert!(
        v.to_string().contains("callback `http://127.0.0.1:9/cb`")
            && v.to_string().contains("require_https"),
        "{v}"
    );
    let (s, v) = post(
        &with_ca,
        &d,
        "/reservation/subscribe",
        json!({"filters": {}, "callback": "https://127.0.0.1:9/cb"}),
    );
    assert_eq!(s, 201, "{v}");
    // By IP address too: the certificate names 127.0.0.1.
    let by_ip = with_ca
        .get(format!("https://127.0.0.1:{port}/healthz"))
        .send()
        .unwrap();
    assert_eq!(by_ip.status().as_u16(), 200);
    // A client without the CA refuses the certificate; plain HTTP gets no answer.
    let refused = trusting(None)
        .get(format!("https://localhost:{port}/healthz"))
        .send()
        .unwrap_err();
    assert!(refused.is_connect(), "{refused:?}");
    let plain = trusting(None)
        .get(format!("http://127.0.0.1:{port}/healthz"))
        .send();
    assert!(
        plain.is_err(),
        "plain HTTP was answered: {:?}",
        plain.map(|r| r.status())
    );
    terminate(&mut d);
}

/// Runs berthd with `env` and returns its exit code and stderr; it must stop by itself.
fn refused_start(dir: &Path, env: &[(&str, &Path)]) -> (Option<i32>, String) {
    let mut cmd = berthd(dir, free_port());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_tls_and_ca_files_stop_the_start_naming_the_file() {
    let dir = site();
    let pki = pki(dir.path());
    let missing = dir.path().join("missing-ca.pem");
    let (code, err) = refused_start(dir.path(), &[("BERTH_NOTIFY_CA_FILE", &missing)]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&missing.display().to_string()), "{err}");
    let junk = dir.path().join("junk.pem");
    std::fs::write(&junk, "not pem\n").unwrap();
    let (code, err) = refused_start(dir.path(), &[("BERTH_NOTIFY_CA_FILE", &junk)]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("junk.pem") && err.contains("no certificate"),
        "{err}"
    );
    // A key that is not the certificate's, and a certificate file without certificates.
    let (code, err) = refused_start(
        dir.path(),
        &[("BERTH_TLS_CERT", &pki.ca), ("BERTH_TLS_KEY", &pki.key)],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("does not fit"), "{err}");
    let (code, err) = refused_start(
        dir.path(),
        &[("BERTH_TLS_CERT", &junk), ("BERTH_TLS_KEY", &pki.key)],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("tls_cert") && err.contains("junk.pem"),
        "{err}"
    );
    assert!(
        !dir.path().join("berth.db").exists(),
        "the store was opened"
    );
}
