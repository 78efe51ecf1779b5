//! Webhook delivery: notifications are POSTed as JSON with bounded retries and exponential
//! backoff, from a bounded queue, with bounded concurrency. Delivery is at least once.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc};

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
        }
    }
}

/// The sending side of the delivery queue; `disabled()` drops everything.
#[derive(Debug, Clone)]
pub struct Notifier {
    tx: Option<mpsc::Sender<Notification>>,
}

impl Notifier {
    /// A notifier that delivers nothing (tests, or webhooks turned off).
    pub fn disabled() -> Notifier {
        Notifier { tx: None }
    }

    /// Starts the delivery task on the current runtime.
    pub fn spawn(cfg: NotifyConfig) -> Notifier {
        let (tx, mut rx) = mpsc::channel::<Notification>(cfg.queue.max(1));
        let client = reqwest::Client::builder()
            .timeout(cfg.request_timeout)
            .build()
            .unwrap_or_default();
        let permits = Arc::new(Semaphore::new(cfg.concurrency.max(1)));
        tokio::spawn(async move {
            while let Some(n) = rx.recv().await {
                let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
                    break;
                };
                let client = client.clone();
                let cfg = cfg.clone();
                tokio::spawn(async move {
                    deliver(&client, &cfg, &n).await;
                    drop(permit);
                });
            }
        });
        Notifier { tx: Some(tx) }
    }

    /// Queues notifications without waiting; a full queue drops them.
    pub fn send_all(&self, notes: Vec<Notification>) {
        let Some(tx) = &self.tx else { return };
        for n in notes {
            if tx.try_send(n).is_err() {
                metrics::counter!("berth_notifications_dropped_total").increment(1);
                tracing::warn!("notification queue full; dropping a notification");
            }
        }
    }
}

/// The delay before retry `attempt` (1-based): `initial * 2^(attempt-1)`, capped.
pub fn backoff(cfg: &NotifyConfig, attempt: u32) -> Duration {
    let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
    cfg.initial_backoff
        .saturating_mul(factor)
        .min(cfg.max_backoff)
}

async fn deliver(client: &reqwest::Client, cfg: &NotifyConfig, n: &Notification) {
    let attempts = cfg.max_attempts.max(1);
    for attempt in 1..=attempts {
        match client.post(&n.callback).json(&n.body).send().await {
            Ok(r) if r.status().is_success() => {
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
    metrics::counter!("berth_notifications_total", "result" => "failed").increment(1);
    tracing::warn!(callback = %n.callback, attempts, "giving up on a webhook");
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
