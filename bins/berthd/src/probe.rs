//! `berthd --healthcheck URL`: a one-shot health probe for container images without curl.

use std::time::Duration;

use anyhow::{Context, Result, bail};

/// GETs `url` once; `Ok(status)` for a 2xx answer within `timeout`, else an error saying what
/// was answered (or why nothing was).
pub async fn probe(url: &str, timeout: Duration) -> Result<u16> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        bail!("health check URL `{url}`: expected http://HOST:PORT/healthz or https://…");
    }
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .build()
        .context("cannot build the HTTP client")?;
    let r = client
        .get(url)
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
