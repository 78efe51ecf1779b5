//! Webhook delivery: notifications are POSTed as JSON with bounded retries and exponential
//! backoff, from a bounded queue, with bounded concurrency. Delivery is at least once.
//! `https://` callbacks are verified with rustls against the webpki and platform roots plus an
//! optional operator CA bundle; `require_https` refuses plain `http://` callbacks. Unless
//! private callbacks are allowed, host names are resolved by [`PublicOnly`], which drops
//! non-public addresses at connect time (a name pointing at the metadata service or the
//! intranet, or re-pointed there after the subscription was checked, reaches nothing).

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc};

use crate::ServiceError;

/// One notification to POST.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// Callback URL.
    pub callback: String,
    /// JSON body.
    pub body: serde_json::Value,
}

/// Delivery settings.
#[derive(Debug, Clone)]
pub struct NotifyConfig {
    /// Attempts per notification (at least 1).
    pub max_attempts: u32,
    /// Delay before the first retry; doubled after each failure.
    pub initial_backoff: Duration,
    /// Ceiling of the delay.
    pub max_backoff: Duration,
    /// Timeout of one POST.
    pub request_timeout: Duration,
    /// Notifications waiting; more are dropped (and counted).
    pub queue: usize,
    /// Deliveries in flight.
    pub concurrency: usize,
    /// Refuse `http://` callbacks: at subscription time ([`Notifier::check_callback`]) and at
    /// delivery (a subscription stored before the setting was turned on is not POSTed).
    pub require_https: bool,
    /// PEM bundle of extra trusted CAs (an operator's private PKI), besides the built-in roots.
    pub ca_file: Option<PathBuf>,
    /// Allow callbacks to loopback, private (RFC 1918, unique local), link-local (cloud metadata
    /// services live there) and other non-public addresses. Off: such callbacks are refused
    /// at subscription and not delivered, so a subscriber cannot point berthd at the inside.
    pub allow_private_callbacks: bool,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(10),
            request_timeout: Duration::from_secs(5),
            queue: 4096,
            concurrency: 32,
            require_https: false,
            ca_file: None,
            allow_private_callbacks: false,
        }
    }
}

/// Delivery counts since the notifier started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NotifyStats {
    /// POSTs sent (each retry counts).
    pub attempts: u64,
    /// Notifications a subscriber accepted (2xx).
    pub delivered: u64,
    /// Notifications given up on after every attempt, or refused by `require_https`.
    pub failed: u64,
    /// Notifications dropped because the queue was full.
    pub dropped: u64,
}

#[derive(Debug, Default)]
struct Counters {
    attempts: AtomicU64,
    delivered: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
}

/// The sending side of the delivery queue; `disabled()` drops everything.
#[derive(Debug, Clone)]
pub struct Notifier {
    tx: Option<mpsc::Sender<Notification>>,
    require_https: bool,
    allow_private: bool,
    counters: Arc<Counters>,
}

impl Notifier {
    /// A notifier that delivers nothing (tests, or webhooks turned off).
    pub fn disabled() -> Notifier {
        Notifier {
            tx: None,
            require_https: false,
            // Nothing is ever sent: no address is a risk.
            allow_private: true,
            counters: Arc::default(),
        }
    }

    /// Starts the delivery task on the current runtime; an unreadable or invalid `ca_file`
    /// (or an HTTP client that cannot be built) is an error naming the file.
    pub fn try_spawn(cfg: NotifyConfig) -> Result<Notifier, ServiceError> {
        Notifier::try_spawn_with(cfg, system_lookup())
    }

    /// [`Notifier::try_spawn`] resolving host names with `lookup`.
    pub(crate) fn try_spawn_with(
        cfg: NotifyConfig,
        lookup: Lookup,
    ) -> Result<Notifier, ServiceError> {
        let client = client(&cfg, lookup)?;
        Ok(Notifier::start(cfg, client))
    }

    /// [`Notifier::try_spawn`] for callers that cannot stop: when the client cannot be built
    /// (only a bad `ca_file` does that) the error is logged and delivery uses the built-in roots.
    pub fn spawn(cfg: NotifyConfig) -> Notifier {
        let client = client(&cfg, system_lookup()).unwrap_or_else(|e| {
            tracing::error!(error = %e, "webhook client without the configured CA bundle");
            reqwest::Client::builder()
                .timeout(cfg.request_timeout)
                .build()
                .unwrap_or_default()
        });
        Notifier::start(cfg, client)
    }

    fn start(cfg: NotifyConfig, client: reqwest::Client) -> Notifier {
        let (tx, mut rx) = mpsc::channel::<Notification>(cfg.queue.max(1));
        let permits = Arc::new(Semaphore::new(cfg.concurrency.max(1)));
        let counters = Arc::new(Counters::default());
        let notifier = Notifier {
            tx: Some(tx),
            require_https: cfg.require_https,
            allow_private: cfg.allow_private_callbacks,
            counters: Arc::clone(&counters),
        };
        tokio::spawn(async move {
            while let Some(n) = rx.recv().await {
                let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
                    break;
                };
                let client = client.clone();
                let cfg = cfg.clone();
                let counters = Arc::clone(&counters);
                tokio::spawn(async move {
                    deliver(&client, &cfg, &counters, &n).await;
                    drop(permit);
                });
            }
        });
        notifier
    }

    /// Queues notifications without waiting; a full queue drops them.
    pub fn send_all(&self, notes: Vec<Notification>) {
        let Some(tx) = &self.tx else { return };
        for n in notes {
            if tx.try_send(n).is_err() {
                self.counters.dropped.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("berth_notifications_dropped_total").increment(1);
                tracing::warn!("notification queue full; dropping a notification");
            }
        }
    }

    /// Checks a subscriber's `callback` URL: `http://` or `https://`, and only `https://` when
    /// `require_https` is set. The error names the field and what was expected.
    pub fn check_callback(&self, url: &str) -> Result<(), ServiceError> {
        let https = url.starts_with("https://");
        if !https && !url.starts_with("http://") {
            return Err(ServiceError::invalid(format!(
                "callback `{url}` is not an http(s) URL"
            )));
        }
        if self.require_https && !https {
            return Err(ServiceError::invalid(format!(
                "callback `{url}` must be an https:// URL ([notify] require_https is on)"
            )));
        }
        if !self.allow_private
            && let Some(what) = non_public(url)
        {
            return Err(ServiceError::invalid(format!(
                "callback `{url}` points at {what}; expected a public address ([notify] allow_private_callbacks permits it)"
            )));
        }
        Ok(())
    }

    /// Delivery counts so far (all zero for a disabled notifier).
    pub fn stats(&self) -> NotifyStats {
        let c = &self.counters;
        NotifyStats {
            attempts: c.attempts.load(Ordering::Relaxed),
            delivered: c.delivered.load(Ordering::Relaxed),
            failed: c.failed.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
        }
    }
}

/// Resolves a host name to its addresses.
pub(crate) type Lookup = Arc<
    dyn Fn(String) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>>
        + Send
        + Sync,
>;

/// The system's resolver.
fn system_lookup() -> Lookup {
    Arc::new(|name: String| {
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((name.as_str(), 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    })
}

/// Webhook host names resolved to public addresses only (unless private ones are allowed):
/// the check happens where the connection is made, so no later change of the name's records
/// can point a delivery at the local network.
pub(crate) struct PublicOnly {
    allow_private: bool,
    lookup: Lookup,
}

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let lookup = Arc::clone(&self.lookup);
        let allow_private = self.allow_private;
        let name = name.as_str().to_owned();
        Box::pin(async move {
            let ips = lookup(name.clone()).await?;
            let mut refused = None;
            let public: Vec<SocketAddr> = ips
                .into_iter()
                .filter(|&ip| match non_public_ip(ip) {
                    Some(what) if !allow_private => {
                        refused = Some((ip, what));
                        false
                    }
                    _ => true,
                })
                .map(|ip| SocketAddr::new(ip, 0))
                .collect();
            if public.is_empty()
                && let Some((ip, what)) = refused
            {
                let e: Box<dyn std::error::Error + Send + Sync> = format!(
                    "callback host `{name}` resolves to {ip}, {what}; expected a public address ([notify] allow_private_callbacks permits it)"
                )
                .into();
                return Err(e);
            }
            let addrs: reqwest::dns::Addrs = Box::new(public.into_iter());
            Ok(addrs)
        })
    }
}

/// The HTTP client: rustls with the webpki and platform roots, plus `cfg.ca_file`'s CAs;
/// host names resolved by `lookup` through [`PublicOnly`].
fn client(cfg: &NotifyConfig, lookup: Lookup) -> Result<reqwest::Client, ServiceError> {
    let resolver = PublicOnly {
        allow_private: cfg.allow_private_callbacks,
        lookup,
    };
    let mut b = reqwest::Client::builder()
        .use_rustls_tls()
        .dns_resolver(Arc::new(resolver))
        .timeout(cfg.request_timeout);
    if let Some(path) = &cfg.ca_file {
        let bad =
            |why: String| ServiceError::invalid(format!("CA file `{}`: {why}", path.display()));
        let pem = std::fs::read(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| bad(format!("not a PEM certificate bundle: {e}")))?;
        if certs.is_empty() {
            return Err(bad(
                "no certificate in it; expected PEM `-----BEGIN CERTIFICATE-----` blocks".into(),
            ));
        }
        for c in certs {
            b = b.add_root_certificate(c);
        }
        return b
            .build()
            .map_err(|e| bad(format!("not usable as a trust anchor: {e}")));
    }
    b.build().map_err(|e| ServiceError::Unavailable {
        message: format!("cannot build the webhook client: {e}"),
    })
}

/// The delay before retry `attempt` (1-based): `initial * 2^(attempt-1)`, capped.
pub fn backoff(cfg: &NotifyConfig, attempt: u32) -> Duration {
    let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
    cfg.initial_backoff
        .saturating_mul(factor)
        .min(cfg.max_backoff)
}

async fn deliver(
    client: &reqwest::Client,
    cfg: &NotifyConfig,
    counters: &Counters,
    n: &Notification,
) {
    if !cfg.allow_private_callbacks
        && let Some(what) = non_public(&n.callback)
    {
        counters.failed.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(callback = %n.callback, "not delivered: the callback points at {what}");
        return;
    }
    if cfg.require_https && !n.callback.starts_with("https://") {
        counters.failed.fetch_add(1, Ordering::Relaxed);
        metrics::counter!("berth_notifications_total", "result" => "failed").increment(1);
        tracing::warn!(callback = %n.callback, "not delivered: require_https is on and the callback is not https");
        return;
    }
    let attempts = cfg.max_attempts.max(1);
    for attempt in 1..=attempts {
        counters.attempts.fetch_add(1, Ordering::Relaxed);
        match client.post(&n.callback).json(&n.body).send().await {
            Ok(r) if r.status().is_success() => {
                counters.delivered.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("berth_notifications_total", "result" => "delivered")
                    .increment(1);
                return;
            }
            Ok(r) => {
                tracing::debug!(callback = %n.callback, status = %r.status(), attempt, "webhook refused")
            }
            Err(e) => {
                tracing::debug!(callback = %n.callback, error = %e, attempt, "webhook failed")
            }
        }
        if attempt < attempts {
            tokio::time::sleep(backoff(cfg, attempt)).await;
        }
    }
    counters.failed.fetch_add(1, Ordering::Relaxed);
    metrics::counter!("berth_notifications_total", "result" => "failed").increment(1);
    tracing::warn!(callback = %n.callback, attempts, "giving up on a webhook");
}

#[cfg(test)]
mod tests;

/// What non-public place `url` names by its host: loopback, private, link-local, unspecified,
/// multicast or broadcast addresses and `localhost` names. Other names are not resolved here.
pub(crate) fn non_public(url: &str) -> Option<&'static str> {
    let parsed = reqwest::Url::parse(url).ok()?;
    let host = parsed.host_str()?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<IpAddr>() {
        Ok(ip) => non_public_ip(ip),
        Err(_) => {
            let d = host.trim_end_matches('.').to_ascii_lowercase();
            (d == "localhost" || d.ends_with(".localhost")).then_some("the local host")
        }
    }
}

/// What non-public kind of address `ip` is, if it is one.
pub(crate) fn non_public_ip(ip: IpAddr) -> Option<&'static str> {
    use std::net::Ipv4Addr;
    let v4 = |ip: Ipv4Addr| {
        if ip.is_loopback() {
            Some("a loopback address")
        } else if ip.is_private() || (ip.octets()[0] == 100 && ip.octets()[1] & 0xc0 == 64) {
            Some("a private address")
        } else if ip.is_link_local() {
            Some("a link-local address (where cloud metadata services answer)")
        } else if ip.is_unspecified() || ip.is_broadcast() || ip.is_multicast() {
            Some("a non-unicast address")
        } else {
            None
        }
    };
    match ip {
        IpAddr::V4(ip) => v4(ip),
        IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
            Some(m) => v4(m),
            None if ip.is_loopback() => Some("a loopback address"),
            None if ip.is_unspecified() || ip.is_multicast() => Some("a non-unicast address"),
            None if ip.segments()[0] & 0xfe00 == 0xfc00 => Some("a private address"),
            None if ip.segments()[0] & 0xffc0 == 0xfe80 => {
                Some("a link-local address (where cloud metadata services answer)")
            }
            None => None,
        },
    }
}
