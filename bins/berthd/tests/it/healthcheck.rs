//! `berthd --healthcheck [URL]`, the container image's probe: exit 0 while a daemon serves
//! `/healthz`, 1 (naming the URL) once it is gone or for a path that is not 2xx; without a URL,
//! the daemon its config describes, over TLS when it serves TLS; and the Dockerfile's own ENTRYPOINT,
//! ENV and HEALTHCHECK command line run outside a container.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{free_port, site, start, terminate};
use crate::db::Db;

fn probe(url: &str) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_berthd"))
        .args(["--healthcheck", url])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

#[test]
fn healthcheck_flag_exits_0_while_serving_and_1_after() {
    let dir = site();
    let db = Db::sqlite(dir.path());
    let mut d = start(dir.path(), free_port(), &db);
    let url = format!("{}/healthz", d.base);
    assert_eq!(
        probe(&url),
        (Some(0), format!("berthd: {url} answered 200\n"))
    );
    // An authenticated route without credentials: 401, not healthy.
    let (code, text) = probe(&format!("{}/v1/plans", d.base));
    assert_eq!(code, Some(1));
    assert!(
        text.contains("answered 401 Unauthorized; expected 2xx"),
        "{text}"
    );
    terminate(&mut d);
    let (code, text) = probe(&url);
    assert_eq!(code, Some(1));
    assert!(
        text.starts_with(&format!("berthd: health check {url}: no answer")),
        "{text}"
    );
}

#[test]
fn bare_healthcheck_probes_the_configured_daemon_over_tls() {
    let dir = site();
    let pki = super::tls::pki(dir.path());
    let port = free_port();
    let mut child = super::tls::berthd(dir.path(), port)
        .env("BERTH_TLS_CERT", &pki.cert)
        .env("BERTH_TLS_KEY", &pki.key)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The probe's own config: every address, TLS; its certificate's CA is not trusted here.
    let bare = || {
        let out = Command::new(env!("CARGO_BIN_EXE_berthd"))
            .arg("--healthcheck")
            .env("BERTH_LISTEN", format!("0.0.0.0:{port}"))
            .env("BERTH_TLS_CERT", &pki.cert)
            .env("BERTH_TLS_KEY", &pki.key)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let t = Instant::now();
    let mut last = bare();
    while last.0 != Some(0) && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
        last = bare();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        last,
        (
            Some(0),
            format!("berthd: https://127.0.0.1:{port}/healthz answered 200\n")
        )
    );
    // Plain http to the TLS listener is no answer.
    let (code, _) = probe(&format!("http://127.0.0.1:{port}/healthz"));
    assert_eq!(code, Some(1));
}

/// The Dockerfile's runtime stage as a container runs it: its ENV, ENTRYPOINT, WORKDIR and the
/// HEALTHCHECK's CMD, each read from the file.
struct Image {
    env: Vec<(String, String)>,
    entrypoint: Vec<String>,
    workdir: String,
    health: Vec<String>,
}

fn image() -> Image {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join("Dockerfile")).unwrap();
    let joined = text.replace("\\\n", " ");
    let runtime = joined.rsplit_once("\nFROM ").unwrap().1;
    let mut img = Image {
        env: Vec::new(),
        entrypoint: Vec::new(),
        workdir: String::new(),
        health: Vec::new(),
    };
    let array = |s: &str| -> Vec<String> { serde_json::from_str(s.trim()).unwrap() };
    for line in runtime.lines().map(str::trim) {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "ENV" => img.env.extend(rest.split_whitespace().map(|kv| {
                let (k, v) = kv.split_once('=').unwrap();
                (k.to_owned(), v.to_owned())
            })),
            "ENTRYPOINT" => img.entrypoint = array(rest),
            "WORKDIR" => img.workdir = rest.trim().to_owned(),
            "HEALTHCHECK" => img.health = array(rest.split_once("CMD").unwrap().1),
            _ => {}
        }
    }
    img
}

/// The image's paths, on this machine: the binary under test, the data volume `data`, the
/// inventory the build stage copies in.
fn local(path: &str, data: &std::path::Path) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if path == "/usr/local/bin/berthd" {
        return env!("CARGO_BIN_EXE_berthd").to_owned();
    }
    if path == "/etc/berth/inventory.yaml" {
        return root.join("examples/inventory.yaml").display().to_string();
    }
    path.replace("/var/lib/berth", &data.display().to_string())
}

fn image_command(argv: &[String], img: &Image, data: &std::path::Path, port: u16) -> Command {
    let mut cmd = Command::new(local(&argv[0], data));
    cmd.args(argv[1..].iter().map(|a| local(a, data)))
        .current_dir(local(&img.workdir, data))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in &img.env {
        let v = local(v, data);
        // Every address, as in the container; the port is one free here.
        let v = if k == "BERTH_LISTEN" {
            format!("{}:{port}", v.rsplit_once(':').unwrap().0)
        } else {
            v
        };
        cmd.env(k, v);
    }
    cmd
}

#[test]
fn the_images_entrypoint_and_healthcheck_run_as_the_dockerfile_says() {
    let img = image();
    assert_eq!(img.entrypoint, ["/usr/local/bin/berthd"]);
    assert_eq!(img.health, ["/usr/local/bin/berthd", "--healthcheck"]);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("var-lib-berth");
    std::fs::create_dir(&data).unwrap();
    let port = free_port();

    // Without credentials, on every address, the entrypoint refuses to start and says why.
    let out = image_command(&img.entrypoint, &img, &data, port)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a loopback address"), "{err}");
    // The deploy files' placeholder is refused by name.
    let out = image_command(&img.entrypoint, &img, &data, port)
        .env("BERTH_BASIC_AUTH", "admin1:REPLACE-WITH-A-GENERATED-SECRET")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("basic user `admin1` has the placeholder password"),
        "{err}"
    );

    // With a generated password it serves, and the image's health check passes, then fails
    // once the daemon is gone.
    let mut daemon = image_command(&img.entrypoint, &img, &data, port)
        .env("BERTH_BASIC_AUTH", "admin1:Qm3vR8tZp1Lx6wNc")
        .env("BERTH_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let health = || {
        let out = image_command(&img.health, &img, &data, port)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let t = Instant::now();
    let mut last = health();
    while last.0 != Some(0) && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
        last = health();
    }
    assert_eq!(
        last,
        (
            Some(0),
            format!("berthd: http://127.0.0.1:{port}/healthz answered 200\n")
        )
    );
    assert!(
        data.join("berth.db").exists(),
        "the store is in the data volume"
    );
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    assert_eq!(health().0, Some(1));
}
