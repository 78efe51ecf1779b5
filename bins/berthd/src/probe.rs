//! `berthd --healthcheck [URL]`: a one-shot health probe for container images without curl.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::Config;

/// The `/healthz` URL of the daemon `cfg` describes, as seen from the same host: `https` when
/// it serves TLS, loopback when it listens on every address.
pub fn local_url(cfg: &Config) -> String {
    let scheme = if cfg.server.tls_cert.is_some() {
        "https"
    } else {
        "http"
    };
    let ip = match cfg.listen.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    let addr = std::net::SocketAddr::new(ip, cfg.listen.port());
    format!("{scheme}://{addr}/healthz")
}

/// Whether `url` names this host (`localhost` or a loopback address).
fn is_loopback(url: &reqwest::Url) -> bool {
    url.host_str().is_some_and(|h| {
        h == "localhost"
            || h.trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    })
}

/// GETs `url` once; `Ok(status)` for a 2xx answer within `timeout`, else an error saying what
/// was answered (or why nothing was). On loopback the certificate of an `https` URL is not
/// checked: the probe asks whether the daemon serves, not who it is.
pub async fn probe(url: &str, timeout: Duration) -> Result<u16> {
    let parsed = reqwest::Url::parse(url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"));
    let Some(parsed) = parsed else {
        bail!("health check URL `{url}`: expected http://HOST:PORT/healthz or https://…");
    };
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .danger_accept_invalid_certs(is_loopback(&parsed))
        .build()
        .context("cannot build the HTTP client")?;
    let r = client
        .get(parsed)
        .send()
        .await
        .with_context(|| format!("health check {url}: no answer"))?;
    let status = r.status();
    if !status.is_success() {
        bail!("health check {url}: answered {status}; expected 2xx");
    }
    Ok(status.as_u16())
}

#[cfg(test)]
mod tests;
