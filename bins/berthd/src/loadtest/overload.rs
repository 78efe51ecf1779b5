//! Overload: the real `berthd` in its own process (pinned to one core when `taskset` exists,
//! the generator on the others), its saturation rate measured closed-loop, then `factor` times
//! that rate offered open-loop from a lean raw-HTTP generator whose connection pool grows as
//! a real client's would. Reports what was accepted and how fast, what was shed, the daemon's
//! memory, and whether any acknowledged reservation was lost.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Mutex;

use super::{Phase, phase, quantile};

const TOKEN: &str = "overload-token";
/// How long a generated request may take, connecting included, before its client gives up.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// What to run.
#[derive(Debug, Clone)]
pub struct OverloadOptions {
    /// The `berthd` binary.
    pub daemon: PathBuf,
    /// Offered rate as a multiple of the measured saturation rate.
    pub factor: f64,
    /// Seconds of the overload.
    pub seconds: f64,
    /// Closed-loop connections measuring the saturation rate.
    pub clients: usize,
    /// The daemon's `max_in_flight`.
    pub max_in_flight: usize,
    /// Most connections the generator opens (a request finding none free is not sent).
    pub max_connections: usize,
}

/// What an overload run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct OverloadReport {
    /// Closed-loop reservations: the saturation rate.
    pub saturation: Phase,
    /// Whether the daemon and the generator ran on separate cores.
    pub pinned: bool,
    /// Rate asked of the generator, per second.
    pub target_per_second: f64,
    /// Rate the generator did send, per second.
    pub offered_per_second: f64,
    /// Accepted reservations, with their latencies.
    pub accepted: Phase,
    /// Answered 503 with `Retry-After`.
    pub shed: usize,
    /// p99 latency of the shed answers, ms.
    pub shed_p99_ms: f64,
    /// Not sent: every one of `max_connections` was busy.
    pub not_sent: usize,
    /// Gave up after 10 s without an answer (waiting for a connection included).
    pub timed_out: usize,
    /// Any other answer or a transport error.
    pub other: usize,
    /// Acknowledged reservations the daemon does not list afterwards (must be 0).
    pub lost: usize,
    /// The daemon's resident memory before the overload and at its peak, MiB.
    pub daemon_rss_mib: Option<(f64, f64)>,
}

/// The daemon's process, killed when dropped.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn rss_mib(pid: u32) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// One request, as bytes, and how to read its answer.
struct Wire {
    addr: String,
    request: Vec<u8>,
}

/// An answer: status, whether `Retry-After` was there, the body.
struct Answer {
    status: u16,
    retry_after: bool,
    body: Vec<u8>,
}

async fn exchange(conn: &mut TcpStream, request: &[u8]) -> std::io::Result<Answer> {
    conn.write_all(request).await?;
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = conn.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = conn.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(Answer {
        status,
        retry_after: head.contains("\r\nretry-after:"),
        body: buf[head_end..head_end + length].to_vec(),
    })
}

fn reservation_id(body: &[u8]) -> Option<String> {
    serde_json::from_slice::<Value>(body)
        .ok()?
        .get("reservation-id")?
        .as_str()
        .map(str::to_owned)
}

/// Starts the daemon, measures, overloads, checks.
pub async fn overload(opts: &OverloadOptions) -> Result<OverloadReport> {
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let pin = cores() >= 2 && Command::new("taskset").arg("-V").output().is_ok();
    let mut cmd = if pin {
        let mut c = Command::new("taskset");
        c.args(["-c", "0"]).arg(&opts.daemon);
        c
    } else {
        Command::new(&opts.daemon)
    };
    cmd.env("BERTH_LISTEN", format!("127.0.0.1:{port}"))
        .env(
            "BERTH_DATABASE_URL",
            format!("sqlite://{}", dir.path().join("berth.db").display()),
        )
        .env("BERTH_TOKENS", TOKEN)
        .env("BERTH_LOG", "error")
        .env("BERTH_MAX_IN_FLIGHT", opts.max_in_flight.to_string())
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let daemon = Daemon(
        cmd.spawn()
            .with_context(|| format!("cannot start {}", opts.daemon.display()))?,
    );
    if pin {
        let others = format!("1-{}", cores() - 1);
        let _ = Command::new("taskset")
            .args(["-a", "-cp", &others, &std::process::id().to_string()])
            .stdout(Stdio::null())
            .status();
    }
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()?;
    let ready = Instant::now();
    while !http
        .get(format!("{base}/readyz"))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
    {
        if ready.elapsed() > Duration::from_secs(30) {
            bail!("berthd did not become ready");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let r = http
        .post(format!("{base}/increase-capacity"))
        .bearer_auth(TOKEN)
        .json(&json!({"zone": "overload", "capacity": {"instances": 1_000_000_000u64}}))
        .send()
        .await?;
    if !r.status().is_success() {
        bail!("increase-capacity failed: {}", r.status());
    }
    let end = (chrono::Utc::now() + chrono::TimeDelta::days(1)).to_rfc3339();
    let body = json!({"zone": "overload", "capacity": {"instances": "1"}, "end": end}).to_string();
    let wire = Arc::new(Wire {
        addr: format!("127.0.0.1:{port}"),
        request: format!(
            "POST /create-reservation HTTP/1.1\r\nHost: berth\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    });

    // Saturation: closed loop on keep-alive connections.
    let window = Duration::from_secs(3);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..opts.clients.max(1) {
        let wire = Arc::clone(&wire);
        tasks.push(tokio::spawn(async move {
            let (mut lat, mut errors) = (Vec::new(), 0usize);
            let Ok(mut conn) = TcpStream::connect(&wire.addr).await else {
                return (lat, 1);
            };
            while started.elapsed() < window {
                let t0 = Instant::now();
                match exchange(&mut conn, &wire.request).await {
                    Ok(a) if a.status == 200 => lat.push(t0.elapsed().as_secs_f64() * 1e3),
                    Ok(_) => errors += 1,
                    Err(_) => {
                        errors += 1;
                        match TcpStream::connect(&wire.addr).await {
                            Ok(c) => conn = c,
                            Err(_) => break,
                        }
                    }
                }
            }
            (lat, errors)
        }));
    }
    let (mut lat, mut errors) = (Vec::new(), 0);
    for t in tasks {
        if let Ok((l, e)) = t.await {
            lat.extend(l);
            errors += e;
        }
    }
    let saturation = phase(
        "saturation (closed)",
        lat,
        errors,
        started.elapsed().as_secs_f64(),
    );
    let target = saturation.per_second() * opts.factor;
    if target <= 0.0 {
        bail!("nothing was accepted while measuring the saturation rate");
    }

    // Overload: requests due at `target` per second, each on an idle connection or a new one.
    let pid = daemon.0.id();
    let rss_before = rss_mib(pid);
    let peak = Arc::new(std::sync::Mutex::new(rss_before.unwrap_or(0.0)));
    let sampler = {
        let peak = Arc::clone(&peak);
        tokio::spawn(async move {
            loop {
                if let (Some(now), Ok(mut p)) = (rss_mib(pid), peak.lock()) {
                    *p = p.max(now);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    let idle: Arc<Mutex<Vec<TcpStream>>> = Arc::new(Mutex::new(Vec::new()));
    let open = Arc::new(AtomicUsize::new(0));
    let total = (target * opts.seconds).ceil() as usize;
    let interval = Duration::from_secs_f64(1.0 / target);
    let mut not_sent = 0usize;
    let mut tasks = Vec::with_capacity(total);
    let started = Instant::now();
    for i in 0..total {
        let due = started + interval.mul_f64(i as f64);
        let now = Instant::now();
        if due > now {
            tokio::time::sleep(due - now).await;
        }
        let conn = idle.lock().await.pop();
        if conn.is_none() && open.load(Ordering::Relaxed) >= opts.max_connections {
            not_sent += 1;
            continue;
        }
        if conn.is_none() {
            open.fetch_add(1, Ordering::Relaxed);
        }
        let (wire, idle, open) = (Arc::clone(&wire), Arc::clone(&idle), Arc::clone(&open));
        tasks.push(tokio::spawn(async move {
            let t0 = Instant::now();
            // A client gives up after CLIENT_TIMEOUT, connecting included, as real ones do.
            let attempt = async {
                let mut conn = match conn {
                    Some(c) => c,
                    None => TcpStream::connect(&wire.addr).await?,
                };
                let answer = exchange(&mut conn, &wire.request).await?;
                Ok::<_, std::io::Error>((conn, answer))
            };
            let answer = tokio::time::timeout(CLIENT_TIMEOUT, attempt).await;
            let ms = t0.elapsed().as_secs_f64() * 1e3;
            let answer = match answer {
                Ok(a) => a,
                Err(_) => {
                    open.fetch_sub(1, Ordering::Relaxed);
                    return (3u8, ms, None);
                }
            };
            match answer {
                Ok((conn, a)) => {
                    idle.lock().await.push(conn);
                    match a.status {
                        200 => (0, ms, reservation_id(&a.body)),
                        503 if a.retry_after => (1, ms, None),
                        _ => (2, ms, None),
                    }
                }
                Err(_) => {
                    open.fetch_sub(1, Ordering::Relaxed);
                    (2, ms, None)
                }
            }
        }));
    }
    let sent_secs = started.elapsed().as_secs_f64();
    let sent = tasks.len();
    let (mut accepted, mut shed, mut other, mut timed_out, mut acked) =
        (Vec::new(), Vec::new(), 0, 0, Vec::new());
    for t in tasks {
        match t.await {
            Ok((0, ms, id)) => {
                accepted.push(ms);
                acked.extend(id);
            }
            Ok((1, ms, _)) => shed.push(ms),
            Ok((3, _, _)) => timed_out += 1,
            _ => other += 1,
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    sampler.abort();
    let peak = peak.lock().map(|p| *p).unwrap_or(0.0);
    shed.sort_by(f64::total_cmp);

    // Every acknowledged reservation is kept.
    let v: Value = http
        .post(format!("{base}/query-reservation"))
        .bearer_auth(TOKEN)
        .json(&json!({"zone": "overload"}))
        .send()
        .await?
        .json()
        .await?;
    let listed: std::collections::BTreeSet<&str> = v["reservations"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let lost = acked
        .iter()
        .filter(|id| !listed.contains(id.as_str()))
        .count();
    drop(daemon);
    Ok(OverloadReport {
        saturation,
        pinned: pin,
        target_per_second: target,
        offered_per_second: sent as f64 / sent_secs.max(1e-9),
        accepted: phase("accepted (overload)", accepted, 0, elapsed),
        shed: shed.len(),
        shed_p99_ms: quantile(&shed, 0.99),
        not_sent,
        timed_out,
        other,
        lost,
        daemon_rss_mib: rss_before.map(|b| (b, peak)),
    })
}
