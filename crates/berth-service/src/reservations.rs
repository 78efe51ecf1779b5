//! The reservation service: one in-memory [`Calendar`] rebuilt from the store's command log, a
//! single writer (a mutex) that checks on the calendar, appends optimistically, acknowledges.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use berth_calendar::{
    Applied, Calendar, CalendarError, Command, Event, LogEntry, Outcome, Policy, RecordRef,
    SubscriptionId, ThresholdSubscription,
};
use berth_store::{
    BatchOutcome, CredentialKey, IdempotentResponse, NewProvider, NewSubscription, Secret, Store,
    StoreError, SubscriptionKind,
};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::ServiceError;
use crate::notify::{Notification, Notifier};

/// How often a commit is retried after another writer appended first.
const MAX_ATTEMPTS: u32 = 8;

/// The source of wall-clock time; the service is where the clock is read.
pub trait WallClock: Send + Sync {
    /// The current time.
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl WallClock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock moved by hand (tests).
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<std::sync::Mutex<DateTime<Utc>>>);

impl ManualClock {
    /// A clock showing `t`.
    pub fn new(t: DateTime<Utc>) -> Self {
        ManualClock(Arc::new(std::sync::Mutex::new(t)))
    }

    /// Moves the clock to `t`.
    pub fn set(&self, t: DateTime<Utc>) {
        if let Ok(mut g) = self.0.lock() {
            *g = t;
        }
    }
}

impl WallClock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        self.0.lock().map(|g| *g).unwrap_or_else(|_| Utc::now())
    }
}

/// A registered resource provider (`add-provider`), without credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderInfo {
    /// Its id.
    pub id: String,
    /// `provider-type`, e.g. `openstack`.
    pub provider_type: String,
    /// Endpoint URL.
    pub endpoint: Option<String>,
    /// Region.
    pub region: Option<String>,
    /// Tenant name or id.
    pub tenant: Option<String>,
}

/// Which reservation events a webhook receives. Empty fields do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReservationFilter {
    /// Only events of this reservation.
    pub reservation: Option<String>,
    /// Only reservations in this zone.
    pub zone: Option<String>,
    /// Only these event names (`reservation-started`, ...).
    pub events: Vec<String>,
}

/// A webhook subscription.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Webhook {
    /// Id: `s<n>` for capacity thresholds, `w<n>` for reservation events.
    pub id: String,
    /// Where notifications are POSTed.
    pub callback: String,
    /// Reservation filter (reservation webhooks only).
    pub filter: Option<ReservationFilter>,
}

/// What an idempotent request asks: the key and a hash of the request body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey {
    /// The client's key.
    pub key: String,
    /// A hash of the request (same key with another hash is refused).
    pub request_hash: String,
}

impl IdempotencyKey {
    /// A key for `command`, hashed from its JSON.
    pub fn for_command(key: impl Into<String>, command: &Command) -> IdempotencyKey {
        let text = serde_json::to_string(command).unwrap_or_default();
        IdempotencyKey {
            key: key.into(),
            request_hash: fnv_hex(text.as_bytes()),
        }
    }
}

/// FNV-1a 64, hex: a stable request fingerprint (not a security boundary).
fn fnv_hex(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[derive(Clone)]
struct Inner {
    cal: Calendar,
    seq: u64,
    /// Set when the calendar may hold an unlogged change: rebuild before the next use.
    stale: bool,
    /// An unlogged advance changed the calendar: log an `Advance` before the next command.
    advanced: bool,
    hooks: BTreeMap<String, Webhook>,
}

impl Inner {
    /// Notifications for `events`, one per matching webhook.
    fn notifications(&self, events: &[Event]) -> Vec<Notification> {
        let mut out = Vec::new();
        for e in events {
            let body = serde_json::to_value(e).unwrap_or_default();
            let name = body
                .get("event")
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned();
            for hook in self.hooks.values() {
                let matches = match (e, &hook.filter) {
                    (Event::CapacityThreshold { subscription, .. }, None) => {
                        subscription.to_string() == hook.id
                    }
                    (Event::CapacityThreshold { .. }, Some(_)) | (_, None) => false,
                    (_, Some(f)) => self.filter_matches(f, e, &name),
                };
                if matches && !hook.callback.is_empty() {
                    let body = serde_json::json!({"subscription-id": hook.id, "event": body});
                    out.push(Notification {
                        callback: hook.callback.clone(),
                        body,
                    });
                }
            }
        }
        out
    }

    fn filter_matches(&self, f: &ReservationFilter, e: &Event, name: &str) -> bool {
        if !f.events.is_empty() && !f.events.iter().any(|x| x == name) {
            return false;
        }
        let reservation = match e {
            Event::ReservationStarted { reservation, .. }
            | Event::ReservationExpiringSoon { reservation, .. }
            | Event::ReservationExpired { reservation, .. }
            | Event::ReservationEnded { reservation, .. }
            | Event::ReservationPreempted { reservation, .. } => Some(*reservation),
            Event::AllocationTerminated { reservation, .. } => *reservation,
            Event::CommitmentAtRisk {
                record: RecordRef::Reservation(r),
                ..
            } => Some(*r),
            _ => None,
        };
        if let Some(want) = &f.reservation
            && reservation.map(|r| r.to_string()).as_deref() != Some(want.as_str())
        {
            return false;
        }
        if let Some(zone) = &f.zone {
            let z = reservation
                .and_then(|r| self.cal.reservation(r))
                .map(|r| r.pool.zone.0);
            if z.as_deref() != Some(zone.as_str()) {
                return false;
            }
        }
        true
    }
}

/// Settings of the reservation service.
#[derive(Debug, Clone)]
pub struct ReservationOptions {
    /// Command stream of the calendar.
    pub stream: String,
    /// Reservation policy.
    pub policy: Policy,
    /// Key sealing provider credentials; without one credentials are not stored at all.
    pub credential_key: Option<CredentialKey>,
}

impl Default for ReservationOptions {
    fn default() -> Self {
        ReservationOptions {
            stream: "calendar".into(),
            policy: Policy::default(),
            credential_key: None,
        }
    }
}

/// The reservation service over one command stream of a [`Store`]. Share it behind an `Arc`.
pub struct ReservationService {
    store: Arc<dyn Store>,
    opts: ReservationOptions,
    clock: Arc<dyn WallClock>,
    notifier: Notifier,
    inner: Mutex<Inner>,
}

/// What a committed (or replayed) command did.
#[derive(Debug, Clone, PartialEq)]
pub struct Committed {
    /// The outcome (the first one, for a replayed idempotency key).
    pub outcome: Outcome,
    /// True when the key had been used: nothing new was applied.
    pub replayed: bool,
}

impl ReservationService {
    /// Opens the service: replays the command stream into a calendar, loads the webhooks, then
    /// advances to the clock's now.
    pub async fn open(
        store: Arc<dyn Store>,
        opts: ReservationOptions,
        clock: Arc<dyn WallClock>,
        notifier: Notifier,
    ) -> Result<Arc<ReservationService>, ServiceError> {
        let inner = Inner {
            cal: Calendar::new(opts.policy.clone()),
            seq: 0,
            stale: false,
            advanced: false,
            hooks: BTreeMap::new(),
        };
        let svc = ReservationService {
            store,
            opts,
            clock,
            notifier,
            inner: Mutex::new(inner),
        };
        {
            let mut inner = svc.inner.lock().await;
            svc.rebuild(&mut inner).await?;
        }
        svc.tick().await?;
        Ok(Arc::new(svc))
    }

    /// Rebuilds the calendar from the whole stream and reloads the webhooks.
    async fn rebuild(&self, inner: &mut Inner) -> Result<(), ServiceError> {
        let (cal, seq) =
            berth_store::load_calendar(&*self.store, &self.opts.stream, self.opts.policy.clone())
                .await?;
        inner.cal = cal;
        inner.seq = seq;
        inner.stale = false;
        inner.advanced = false;
        self.reload_hooks(inner).await
    }

    async fn reload_hooks(&self, inner: &mut Inner) -> Result<(), ServiceError> {
        let mut hooks = BTreeMap::new();
        for s in self.store.list_subscriptions(None).await? {
            let filter = match s.kind {
                SubscriptionKind::Reservation => {
                    Some(serde_json::from_value(s.spec).unwrap_or_default())
                }
                _ => None,
            };
            hooks.insert(
                s.id.clone(),
                Webhook {
                    id: s.id,
                    callback: s.callback_url,
                    filter,
                },
            );
        }
        inner.hooks = hooks;
        Ok(())
    }

    /// Applies what other writers appended since `inner.seq`; rebuilds when that fails (an
    /// unlogged advance may have moved this calendar past their times) or when stale.
    async fn catch_up(&self, inner: &mut Inner) -> Result<(), ServiceError> {
        if inner.stale {
            return self.rebuild(inner).await;
        }
        for c in self
            .store
            .commands_since(&self.opts.stream, inner.seq)
            .await?
        {
            if inner.cal.apply(c.entry.command, c.entry.at).is_err() {
                return self.rebuild(inner).await;
            }
            inner.seq = c.seq;
        }
        Ok(())
    }

    fn now(&self, inner: &Inner) -> DateTime<Utc> {
        let wall = self.clock.now();
        inner.cal.clock().map_or(wall, |c| c.max(wall))
    }

    /// Checks `commands` on the calendar (all or none), appends them durably (with the
    /// idempotency record, in one transaction), then acknowledges. Retried after a concurrent
    /// append by catching up from the log.
    async fn commit(
        &self,
        idem: Option<&IdempotencyKey>,
        commands: &[Command],
    ) -> Result<(Vec<Outcome>, bool), ServiceError> {
        let mut inner = self.inner.lock().await;
        self.catch_up(&mut inner).await?;
        if let Some(k) = idem
            && let Some(rec) = self.store.lookup_idempotent(&k.key).await?
        {
            return replayed(k, &rec.request_hash, rec.response);
        }
        for attempt in 1..=MAX_ATTEMPTS {
            let now = self.now(&inner);
            let mut events = inner.cal.advance(now)?;
            let log_advance = inner.advanced || !events.is_empty();
            inner.advanced = log_advance;
            let backup = (commands.len() > 1).then(|| inner.cal.clone());
            let mut outcomes = Vec::with_capacity(commands.len());
            for c in commands {
                match inner.cal.apply(c.clone(), now) {
                    Ok(o) => {
                        events.extend(o.events.iter().cloned());
                        outcomes.push(o);
                    }
                    Err(e) => {
                        if let Some(b) = backup {
                            inner.cal = b;
                        }
                        if matches!(e, CalendarError::Conflict(_)) {
                            metrics::counter!("berth_admission_conflicts_total").increment(1);
                        }
                        let notes = inner.notifications(&events);
                        drop(inner);
                        self.notifier.send_all(notes);
                        return Err(e.into());
                    }
                }
            }
            let mut entries = Vec::with_capacity(commands.len() + 1);
            if log_advance {
                entries.push(LogEntry {
                    at: now,
                    command: Command::Advance,
                });
            }
            entries.extend(commands.iter().map(|c| LogEntry {
                at: now,
                command: c.clone(),
            }));
            let expected = inner.seq;
            let written = match idem {
                Some(k) => {
                    let response =
                        serde_json::to_value(outcomes.first()).map_err(ServiceError::store)?;
                    let r = IdempotentResponse {
                        key: k.key.clone(),
                        request_hash: k.request_hash.clone(),
                        response,
                        created_at: now,
                    };
                    self.store
                        .append_commands_idempotent(&self.opts.stream, expected, &entries, &r)
                        .await
                }
                None => self
                    .store
                    .append_commands(&self.opts.stream, expected, &entries)
                    .await
                    .map(|seq| BatchOutcome::Committed {
                        seq: Some(seq),
                        plan: None,
                    }),
            };
            match written {
                Ok(BatchOutcome::Committed { seq, .. }) => {
                    inner.seq = seq.unwrap_or(expected + entries.len() as u64);
                    inner.advanced = false;
                    let notes = inner.notifications(&events);
                    drop(inner);
                    self.notifier.send_all(notes);
                    return Ok((outcomes, false));
                }
                Ok(BatchOutcome::Replayed(rec)) => {
                    // Another writer committed this key meanwhile: drop our application.
                    self.rebuild(&mut inner).await?;
                    let Some(k) = idem else {
                        return Err(ServiceError::store("unexpected replay"));
                    };
                    return replayed(k, &rec.request_hash, rec.response);
                }
                Err(StoreError::Conflict { .. }) => {
                    tracing::debug!(stream = %self.opts.stream, attempt, "append conflict; catching up");
                    metrics::counter!("berth_append_conflicts_total").increment(1);
                    self.rebuild(&mut inner).await?;
                }
                Err(e) => {
                    match backup {
                        Some(b) => inner.cal = b,
                        None => inner.stale = true,
                    }
                    if inner.stale {
                        let _ = self.rebuild(&mut inner).await;
                    }
                    return Err(e.into());
                }
            }
        }
        Err(ServiceError::Contention {
            stream: self.opts.stream.clone(),
            attempts: MAX_ATTEMPTS,
        })
    }

    /// Applies one calendar command durably. With `key`, a repeated request with the same
    /// command returns the first outcome (`replayed`); with another command it is refused.
    pub async fn command(
        &self,
        command: Command,
        key: Option<String>,
    ) -> Result<Committed, ServiceError> {
        let idem = key.map(|k| IdempotencyKey::for_command(k, &command));
        let (outcomes, replayed) = self
            .commit(idem.as_ref(), std::slice::from_ref(&command))
            .await?;
        match outcomes.into_iter().next() {
            Some(outcome) => Ok(Committed { outcome, replayed }),
            None => Err(ServiceError::Unavailable {
                message: "command produced no outcome".into(),
            }),
        }
    }

    /// Applies every command or none (a plan's reservations), in one append.
    pub async fn batch(&self, commands: Vec<Command>) -> Result<Vec<Outcome>, ServiceError> {
        if commands.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.commit(None, &commands).await?.0)
    }

    /// Adds a capacity-threshold webhook; returns its id (`s<n>`, the calendar's).
    pub async fn subscribe_capacity(
        &self,
        sub: ThresholdSubscription,
        callback: String,
    ) -> Result<String, ServiceError> {
        check_callback(&callback)?;
        let spec = serde_json::to_value(&sub).map_err(ServiceError::store)?;
        let c = self.command(Command::Subscribe(sub), None).await?;
        let Applied::Subscribed { id } = c.outcome.applied else {
            return Err(ServiceError::Unavailable {
                message: "subscribe produced no id".into(),
            });
        };
        let id = id.to_string();
        self.add_hook(NewSubscription {
            id: id.clone(),
            kind: SubscriptionKind::Capacity,
            spec,
            callback_url: callback,
            created_at: self.clock.now(),
        })
        .await?;
        Ok(id)
    }

    /// Adds a reservation-events webhook; returns its id (`w-<uuid>`).
    pub async fn subscribe_reservations(
        &self,
        filter: ReservationFilter,
        callback: String,
    ) -> Result<String, ServiceError> {
        check_callback(&callback)?;
        let id = format!("w-{}", uuid::Uuid::new_v4());
        let spec = serde_json::to_value(&filter).map_err(ServiceError::store)?;
        self.add_hook(NewSubscription {
            id: id.clone(),
            kind: SubscriptionKind::Reservation,
            spec,
            callback_url: callback,
            created_at: self.clock.now(),
        })
        .await?;
        Ok(id)
    }

    async fn add_hook(&self, sub: NewSubscription) -> Result<(), ServiceError> {
        let rec = self.store.create_subscription(&sub).await?;
        let filter = (rec.kind == SubscriptionKind::Reservation)
            .then(|| serde_json::from_value(rec.spec).unwrap_or_default());
        let hook = Webhook {
            id: rec.id.clone(),
            callback: rec.callback_url,
            filter,
        };
        self.inner.lock().await.hooks.insert(rec.id, hook);
        Ok(())
    }

    /// Removes a webhook of either kind.
    pub async fn unsubscribe(&self, id: &str) -> Result<(), ServiceError> {
        if let Some(n) = id.strip_prefix('s').and_then(|n| n.parse::<u64>().ok()) {
            self.command(
                Command::Unsubscribe {
                    id: SubscriptionId(n),
                },
                None,
            )
            .await?;
            match self.store.delete_subscription(id).await {
                Ok(()) | Err(StoreError::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        } else {
            self.store.delete_subscription(id).await?;
        }
        self.inner.lock().await.hooks.remove(id);
        Ok(())
    }

    /// Registers a provider and returns its id. Credentials are sealed with the configured
    /// key, or dropped when there is none; they are never returned.
    pub async fn add_provider(
        &self,
        info: ProviderInfo,
        credentials: Option<String>,
    ) -> Result<String, ServiceError> {
        let id = uuid::Uuid::new_v4().to_string();
        let key = self.opts.credential_key.as_ref();
        let provider = NewProvider {
            name: id.clone(),
            endpoint: info.endpoint.clone().unwrap_or_default(),
            metadata: serde_json::json!({
                "provider-type": info.provider_type,
                "region": info.region,
                "tenant": info.tenant,
            }),
            credentials: key.and(credentials).map(Secret::new),
            now: self.clock.now(),
        };
        self.store.put_provider(&provider, key).await?;
        Ok(id)
    }

    /// Registered providers (without credentials).
    pub async fn providers(&self) -> Result<Vec<ProviderInfo>, ServiceError> {
        let text =
            |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
        Ok(self
            .store
            .list_providers()
            .await?
            .into_iter()
            .map(|p| ProviderInfo {
                provider_type: text(&p.metadata, "provider-type").unwrap_or_default(),
                region: text(&p.metadata, "region"),
                tenant: text(&p.metadata, "tenant"),
                endpoint: Some(p.endpoint).filter(|e| !e.is_empty()),
                id: p.name,
            })
            .collect())
    }

    /// Webhooks, by id.
    pub async fn webhooks(&self) -> Vec<Webhook> {
        self.inner.lock().await.hooks.values().cloned().collect()
    }

    /// Runs `f` on the calendar brought up to now (due events are dispatched).
    pub async fn read<R>(&self, f: impl FnOnce(&Calendar) -> R) -> Result<R, ServiceError> {
        let mut inner = self.inner.lock().await;
        self.catch_up(&mut inner).await?;
        let now = self.now(&inner);
        let events = inner.cal.advance(now)?;
        if !events.is_empty() {
            inner.advanced = true;
        }
        let notes = inner.notifications(&events);
        let r = f(&inner.cal);
        drop(inner);
        self.notifier.send_all(notes);
        Ok(r)
    }

    /// Advances the calendar to now and dispatches the due events (the timer calls this).
    pub async fn tick(&self) -> Result<(), ServiceError> {
        {
            let mut inner = self.inner.lock().await;
            self.reload_hooks(&mut inner).await?;
        }
        self.read(|_| ()).await
    }

    /// Ticks every `period` until `shutdown` fires.
    pub fn spawn_timer(
        self: &Arc<Self>,
        period: Duration,
        mut shutdown: tokio::sync::watch::Receiver<bool>,
    ) -> tokio::task::JoinHandle<()> {
        let svc = Arc::clone(self);
        tokio::spawn(async move {
            let mut interval = tokio::time::interval(period);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = interval.tick() => {
                        if let Err(e) = svc.tick().await {
                            tracing::warn!(error = %e, "calendar tick failed");
                        }
                    }
                    _ = shutdown.changed() => break,
                }
            }
        })
    }

    /// The last sequence number applied.
    pub async fn seq(&self) -> u64 {
        self.inner.lock().await.seq
    }

    /// The store (for readiness probes).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }
}

fn replayed(
    k: &IdempotencyKey,
    hash: &str,
    response: serde_json::Value,
) -> Result<(Vec<Outcome>, bool), ServiceError> {
    if hash != k.request_hash {
        return Err(ServiceError::KeyReused { key: k.key.clone() });
    }
    let outcome: Outcome = serde_json::from_value(response).map_err(|e| ServiceError::Corrupt {
        stream: "idempotency".into(),
        seq: 0,
        message: e.to_string(),
    })?;
    Ok((vec![outcome], true))
}

fn check_callback(url: &str) -> Result<(), ServiceError> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(ServiceError::invalid(format!(
            "callback `{url}` is not an http(s) URL"
        )))
    }
}

#[cfg(test)]
mod tests;
