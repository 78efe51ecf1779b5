//! The reservation service: one in-memory [`Calendar`] over the store's command log, a single
//! writer task that checks queued commands on the calendar and commits them in groups
//! (`writer`), and snapshots that make restarts replay only the log's tail (`load`).

mod hooks;
mod load;
mod map;
mod part;
mod partitions;
mod providers;
mod reconcile;
mod spanning;
mod spread;
mod writer;

pub use map::{ClusterMap, Holder};
pub use partitions::{ClusterOptions, PartitionKey, qualify};

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use berth_calendar::{Calendar, Command, Outcome, Policy};
use berth_store::{CredentialKey, Store};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::{Mutex, broadcast};

use crate::changes::{self, Change};
use crate::clock::WallClock;
use crate::notify::Notifier;
use crate::provider::ProviderInfo;
use crate::{ErrorKind, ServiceError};
use part::Part;
use partitions::replayed_in;

/// How often a commit is retried after another writer appended first.
const MAX_ATTEMPTS: u32 = 8;

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

/// Own commits in a row, with nobody else's between, after which the writer stops reading the
/// log before each commit: a round trip per commit, almost always empty for a lease holder.
/// The cost of being wrong is one refused compare-and-set and a rebuild.
const QUIET_COMMITS: u32 = 64;

#[derive(Clone)]
struct Inner {
    cal: Calendar,
    seq: u64,
    /// Set when the calendar may hold an unlogged change: rebuild before the next use.
    stale: bool,
    /// An unlogged advance changed the calendar: log an `Advance` before the next command.
    advanced: bool,
    /// Sequence number of the newest snapshot written or restored (0: none).
    snapshot_seq: u64,
    /// This writer's commits since it last saw another writer's (or loaded): from
    /// [`QUIET_COMMITS`] on, a commit skips its catch-up read and lets the compare-and-set
    /// tell it when someone else wrote.
    quiet: u32,
    hooks: BTreeMap<String, Webhook>,
    /// `<partition>:` in a partitioned calendar, else empty: ids outside carry it.
    prefix: String,
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
    /// Most commands the writer commits in one transaction (at least 1; one request is never
    /// split, so a larger all-or-nothing batch still goes alone).
    pub max_batch: usize,
    /// Write a calendar snapshot after this many logged commands (0: only on request, e.g. at
    /// graceful shutdown).
    pub snapshot_every: u64,
    /// Providers the daemon knows from its configuration or inventory (besides
    /// [`DEFAULT_PROVIDER`] and those registered with `add-provider`), with their flavors.
    pub static_providers: Vec<ProviderInfo>,
    /// In a cluster: the stream's lease (named after the stream). Only its holder commits,
    /// each commit fenced by its token; `None` (one daemon per database) writes unfenced.
    /// Unpartitioned calendars only; partitions get a lease each from `cluster`.
    pub ownership: Option<Arc<crate::ownership::Ownership>>,
    /// Split the calendar by this key: one stream `<stream>/<partition>` per partition, each
    /// with its own calendar and writer. `None`: one calendar on `stream`.
    pub partition_key: Option<PartitionKey>,
    /// With `partition_key`, in a cluster: this daemon's identity in the partitions' leases
    /// and its node heartbeat ([`ReservationService::spawn_leases`]).
    pub cluster: Option<ClusterOptions>,
}

impl Default for ReservationOptions {
    fn default() -> Self {
        ReservationOptions {
            stream: "calendar".into(),
            policy: Policy::default(),
            credential_key: None,
            max_batch: 512,
            snapshot_every: 10_000,
            static_providers: Vec::new(),
            ownership: None,
            partition_key: None,
            cluster: None,
        }
    }
}

/// Counters of the writer since the service opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Transactions that committed commands.
    pub commits: u64,
    /// Requests acknowledged by those commits (replays included).
    pub requests: u64,
    /// Snapshots written.
    pub snapshots: u64,
    /// Calendars rebuilt from the store (snapshot and log tail): at open, after a failed or
    /// lost commit, and where the log's next entries did not apply (a calendar advanced past
    /// them).
    pub rebuilds: u64,
}

/// What the writer task and the request paths share.
struct Core {
    /// The partition's name; `None` for the unpartitioned calendar.
    partition: Option<String>,
    store: Arc<dyn Store>,
    opts: ReservationOptions,
    clock: Arc<dyn WallClock>,
    notifier: Notifier,
    inner: Mutex<Inner>,
    /// A snapshot is being written in the background.
    snapshotting: AtomicBool,
    commits: AtomicU64,
    requests: AtomicU64,
    snapshots: AtomicU64,
    rebuilds: AtomicU64,
    /// Change notices for live views.
    changes: broadcast::Sender<Change>,
}

/// What a committed (or replayed) command did.
#[derive(Debug, Clone, PartialEq)]
pub struct Committed {
    /// The outcome (the first one, for a replayed idempotency key).
    pub outcome: Outcome,
    /// True when the key had been used: nothing new was applied.
    pub replayed: bool,
    /// The partition that took it (`None`: the calendar is not partitioned); ids in the
    /// outcome are local to it ([`qualify`]).
    pub partition: Option<String>,
}

/// Requests waiting for the writer; senders wait when it is full.
const QUEUE: usize = 4096;

/// The reservation service: one calendar over the store's command stream, or one per
/// partition of it (`ReservationOptions::partition_key`), each with its own stream, writer
/// and (in a cluster) lease. Share it behind an `Arc`.
///
/// Commands are routed to their partition: a reservation or unreserved allocation by its zone
/// (and provider, by the key), capacity changes by pool, commands naming an id by the id's
/// partition (`command_at`). Reads spanning partitions (`read_all`) see each partition in
/// name order. Without a partition key everything goes to the one calendar and ids are as
/// the calendar writes them (`r<n>`).
pub struct ReservationService {
    store: Arc<dyn Store>,
    opts: ReservationOptions,
    clock: Arc<dyn WallClock>,
    notifier: Notifier,
    changes: broadcast::Sender<Change>,
    /// By partition name (`""` for the unpartitioned calendar); name order is the fixed order
    /// of every read and attempt spanning partitions.
    parts: std::sync::RwLock<BTreeMap<String, Arc<Part>>>,
    /// Serializes opening partitions: one writer per stream and process.
    opening: Mutex<()>,
    /// `opts.static_providers` as they stand (an inventory reload replaces its provider's).
    statics: std::sync::RwLock<Vec<ProviderInfo>>,
    /// The VIM that boots the instances of the providers it serves.
    vim: std::sync::RwLock<Option<Arc<dyn crate::Vim>>>,
}

impl ReservationService {
    /// Opens the service: restores each calendar from its newest usable snapshot plus the
    /// log's tail (or replays the whole log), loads the webhooks, starts the writers, then
    /// advances to the clock's now. Refuses a store whose calendar was written with another
    /// layout (partitioned or not) than `opts` asks for.
    pub async fn open(
        store: Arc<dyn Store>,
        opts: ReservationOptions,
        clock: Arc<dyn WallClock>,
        notifier: Notifier,
    ) -> Result<Arc<ReservationService>, ServiceError> {
        let statics = std::sync::RwLock::new(opts.static_providers.clone());
        let svc = ReservationService {
            statics,
            vim: std::sync::RwLock::new(None),
            store,
            opts,
            clock,
            notifier,
            changes: broadcast::channel(changes::CAPACITY).0,
            parts: std::sync::RwLock::new(BTreeMap::new()),
            opening: Mutex::new(()),
        };
        svc.check_layout().await?;
        if svc.opts.partition_key.is_none() {
            svc.open_part(None).await?;
        } else {
            svc.discover().await?;
        }
        let svc = Arc::new(svc);
        svc.tick().await?;
        Ok(svc)
    }

    /// Every calendar, in name order.
    fn all_parts(&self) -> Vec<Arc<Part>> {
        self.parts
            .read()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    fn part(&self, name: &str) -> Option<Arc<Part>> {
        self.parts.read().ok().and_then(|m| m.get(name).cloned())
    }

    /// The names of the partitions this daemon follows, in order (empty when unpartitioned).
    pub fn partitions(&self) -> Vec<String> {
        if self.opts.partition_key.is_none() {
            return Vec::new();
        }
        self.parts
            .read()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The partition key, when the calendar is partitioned.
    pub fn partition_key(&self) -> Option<PartitionKey> {
        self.opts.partition_key
    }

    /// Applies one calendar command durably, routed to its partition. With `key`, a repeated
    /// request with the same command returns the first outcome (`replayed`); with another
    /// command it is refused.
    pub async fn command(
        &self,
        command: Command,
        key: Option<String>,
    ) -> Result<Committed, ServiceError> {
        self.command_at(None, command, key).await
    }

    /// [`ReservationService::command`] in `partition` (from a partition-qualified id); `None`
    /// routes by the command's content.
    pub async fn command_at(
        &self,
        partition: Option<&str>,
        command: Command,
        key: Option<String>,
    ) -> Result<Committed, ServiceError> {
        let idem = key.map(|k| IdempotencyKey::for_command(k, &command));
        // Hashed as the client sent it (a retry hashes alike); logged with the end resolved.
        let command = self.resolve_defaults(command);
        let targets = self.targets(partition, &command).await?;
        // A retry of a known key is answered without queueing; the writer checks again.
        if let Some(k) = &idem
            && let Some(rec) = self.store.lookup_idempotent(&k.key).await?
        {
            let (outcomes, replayed, part) = replayed_in(k, &rec.request_hash, rec.response)?;
            if let Some(outcome) = outcomes.into_iter().next() {
                let partition = part.or_else(|| {
                    self.opts
                        .partition_key
                        .and_then(|_| targets.first().cloned())
                });
                return Ok(Committed {
                    outcome,
                    replayed,
                    partition,
                });
            }
        }
        if let [one] = targets.as_slice() {
            // The common case (and the only one unpartitioned): no copy of the command.
            let part = self.part_for(one, &command).await?;
            return part.command(command, idem).await;
        }
        // Several candidates (a zone whose pools lie in several partitions): the first, in
        // name order, that knows the zone and admits the request takes it.
        let mut first_err = None;
        for name in &targets {
            let part = self
                .open_part(Some(name).filter(|n| !n.is_empty()).cloned())
                .await?;
            match part.command(command.clone(), idem.clone()).await {
                Ok(c) => return Ok(c),
                Err(e) if targets.len() > 1 && e.kind() != ErrorKind::Unavailable => {
                    // An unknown zone is the least telling reason; keep a better one.
                    let unknown = matches!(
                        e,
                        ServiceError::Calendar {
                            source: berth_calendar::CalendarError::UnknownZone { .. }
                                | berth_calendar::CalendarError::UnknownPool { .. }
                        }
                    );
                    if first_err.as_ref().is_none_or(|(u, _)| *u && !unknown) {
                        first_err = Some((unknown, e));
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Err(first_err
            .map(|(_, e)| e)
            .unwrap_or_else(|| ServiceError::Calendar {
                source: berth_calendar::CalendarError::UnknownZone {
                    zone: berth_calendar::ZoneId(zone_of(&command).unwrap_or_default()),
                },
            }))
    }

    /// Fills what a request left to the service's clock so the logged command replays alike:
    /// a reservation without `end` lasts the policy's `max_duration_hours` from its start (or
    /// from now), as Promise's `max-duration` default; without that limit it stays open.
    fn resolve_defaults(&self, command: Command) -> Command {
        match command {
            Command::CreateReservation(mut req) if req.end.is_none() => {
                if let Some(h) = self.opts.policy.max_duration_hours {
                    let start = req.start.unwrap_or_else(|| self.clock.now());
                    req.end = Some(start + chrono::TimeDelta::hours(i64::from(h)));
                }
                Command::CreateReservation(req)
            }
            other => other,
        }
    }

    /// Applies every command or none (a plan's reservations). Commands of one partition go
    /// through its writer in one append; commands spanning partitions are committed in one
    /// store transaction appending to every touched stream (`spanning`). Outcomes come back
    /// in the commands' order, each with its partition.
    pub async fn batch(&self, commands: Vec<Command>) -> Result<Vec<Committed>, ServiceError> {
        if commands.is_empty() {
            return Ok(Vec::new());
        }
        let commands: Vec<Command> = commands
            .into_iter()
            .map(|c| self.resolve_defaults(c))
            .collect();
        let groups = self.group(&commands).await?;
        if let Some(part) = self.single_local(&groups) {
            let partition = part.core.partition.clone();
            let (outcomes, _) = part.submit(commands, None).await?;
            return Ok(outcomes
                .into_iter()
                .map(|outcome| Committed {
                    outcome,
                    replayed: false,
                    partition: partition.clone(),
                })
                .collect());
        }
        spanning::commit(self, groups, commands, None)
            .await
            .map(|(c, _)| c)
    }

    /// Applies every command or none, at most once per `key` among all daemons sharing the
    /// store: `Ok(true)` when this call applied them, `Ok(false)` when a batch under `key` was
    /// applied before. berthd seeds an empty calendar so; daemons starting together on one
    /// database would otherwise each seed it.
    pub async fn batch_once(
        &self,
        key: &str,
        commands: Vec<Command>,
    ) -> Result<bool, ServiceError> {
        if commands.is_empty() {
            return Ok(false);
        }
        // One fixed fingerprint: any batch under this key counts as the same request.
        let idem = IdempotencyKey {
            key: key.to_owned(),
            request_hash: "once".to_owned(),
        };
        let groups = self.group(&commands).await?;
        if let Some(part) = self.single_local(&groups) {
            return Ok(!part.submit(commands, Some(idem)).await?.1);
        }
        if self.store.lookup_idempotent(key).await?.is_some() {
            return Ok(false);
        }
        spanning::commit(self, groups, commands, Some(idem))
            .await
            .map(|(_, applied)| applied)
    }

    /// The calendar of partition `name` for `command`. A partition nobody has written yet is
    /// opened only for a command an empty calendar would accept (capacity, a subscription);
    /// any other gets the empty calendar's refusal (unknown zone or pool), so requests naming
    /// arbitrary zones cannot make a daemon open partitions (a writer thread each).
    async fn part_for(&self, name: &str, command: &Command) -> Result<Arc<Part>, ServiceError> {
        if name.is_empty() {
            return self.open_part(None).await;
        }
        if let Some(p) = self.part(name) {
            return Ok(p);
        }
        self.discover().await?;
        if let Some(p) = self.part(name) {
            return Ok(p);
        }
        let mut empty = Calendar::new(self.opts.policy.clone());
        empty.apply(command.clone(), self.clock.now())?;
        let part = self.open_part(Some(name.to_owned())).await?;
        if let Some(o) = part.ownership() {
            // A new partition's lease is free: the daemon creating it holds it first.
            o.refresh().await?;
        }
        Ok(part)
    }

    /// The one calendar all `groups` go to, when its writer may commit them.
    fn single_local(&self, groups: &BTreeMap<String, Vec<usize>>) -> Option<Arc<Part>> {
        if groups.len() != 1 {
            return None;
        }
        let part = self.part(groups.keys().next()?)?;
        // A partition another daemon holds is written by the spanning protocol (its holder's
        // token as the fence), which any daemon may run; its writer would refuse.
        (self.opts.partition_key.is_none() || part.writes_here()).then_some(part)
    }

    /// The indexes of `commands` per partition; a command whose zone has pools in several
    /// partitions goes to the first (name order) whose calendar knows the zone.
    async fn group(
        &self,
        commands: &[Command],
    ) -> Result<BTreeMap<String, Vec<usize>>, ServiceError> {
        let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, c) in commands.iter().enumerate() {
            let targets = self.targets(None, c).await?;
            let mut chosen = None;
            if targets.len() == 1 {
                chosen = targets.into_iter().next();
            } else if let Some(zone) = zone_of(c) {
                for name in targets {
                    let Some(part) = self.part(&name) else {
                        continue;
                    };
                    let q = berth_calendar::CapacityQuery {
                        zone: Some(berth_calendar::ZoneId(zone.clone())),
                        provider: None,
                        window: berth_calendar::Window {
                            start: self.clock.now(),
                            end: None,
                        },
                        timeline: false,
                    };
                    let knows = part.read(|cal| cal.query_capacity(&q)).await?;
                    if knows.is_ok_and(|r| !r.pools.is_empty()) {
                        chosen = Some(name);
                        break;
                    }
                }
            }
            let name = chosen.ok_or_else(|| ServiceError::Calendar {
                source: berth_calendar::CalendarError::UnknownZone {
                    zone: berth_calendar::ZoneId(zone_of(c).unwrap_or_default()),
                },
            })?;
            self.part_for(&name, c).await?;
            groups.entry(name).or_default().push(i);
        }
        Ok(groups)
    }

    /// The service's clock now (never before the calendars' clocks matter: callers only
    /// stamp records with it).
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// Runs `f` on the calendar brought up to now (due events are dispatched). Partitioned:
    /// on the only partition, or an empty calendar when there is none; a calendar of several
    /// partitions is read with [`ReservationService::read_all`] or
    /// [`ReservationService::read_at`] (an invalid-input error here).
    pub async fn read<R>(&self, f: impl FnOnce(&Calendar) -> R) -> Result<R, ServiceError> {
        let parts = self.all_parts();
        match parts.as_slice() {
            [one] => one.read(f).await,
            [] => Ok(f(&Calendar::new(self.opts.policy.clone()))),
            _ => Err(ServiceError::invalid(
                "the calendar has several partitions; expected a read of one partition or of all",
            )),
        }
    }

    /// Runs `f` on the calendar of `partition` (`None`: the unpartitioned calendar, or the
    /// only partition).
    pub async fn read_at<R>(
        &self,
        partition: Option<&str>,
        f: impl FnOnce(&Calendar) -> R,
    ) -> Result<R, ServiceError> {
        match partition {
            None => self.read(f).await,
            Some(p) => match self.part(p) {
                Some(part) => part.read(f).await,
                None => Err(unknown_partition(p, &self.partitions())),
            },
        }
    }

    /// Runs `f` on every calendar brought up to now, in partition name order (one call with
    /// `None` when unpartitioned). Partitions other daemons created since the last look are
    /// opened first.
    pub async fn read_all<R>(
        &self,
        mut f: impl FnMut(Option<&str>, &Calendar) -> R,
    ) -> Result<Vec<R>, ServiceError> {
        if self.opts.partition_key.is_some() {
            self.discover().await?;
        }
        let mut out = Vec::new();
        for part in self.all_parts() {
            let name = part.core.partition.clone();
            out.push(part.read(|c| f(name.as_deref(), c)).await?);
        }
        Ok(out)
    }

    /// Advances every calendar to now and dispatches the due events (the timer calls this).
    pub async fn tick(&self) -> Result<(), ServiceError> {
        if self.opts.partition_key.is_some() {
            self.discover().await?;
        }
        for part in self.all_parts() {
            part.tick().await?;
        }
        Ok(())
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

    /// The last sequence number applied: of the one calendar, or the sum over partitions (a
    /// position that grows with every commit).
    pub async fn seq(&self) -> u64 {
        let mut sum = 0;
        for part in self.all_parts() {
            sum += part.core.inner.lock().await.seq;
        }
        sum
    }

    /// Change notices from now on: calendar commits and timer events, and plan changes (the
    /// plan service announces through this service). A receiver that lags gets
    /// `RecvError::Lagged` and should refetch what it shows.
    pub fn changes(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    /// Tells the listeners of [`ReservationService::changes`] about `change`.
    pub(crate) fn announce(&self, change: Change) {
        let _ = self.changes.send(change);
    }

    /// The store (for readiness probes).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// What the writers did since the service opened (summed over partitions).
    pub fn writer_stats(&self) -> WriterStats {
        let mut s = WriterStats::default();
        for part in self.all_parts() {
            s.commits += part.core.commits.load(Ordering::Relaxed);
            s.requests += part.core.requests.load(Ordering::Relaxed);
            s.snapshots += part.core.snapshots.load(Ordering::Relaxed);
            s.rebuilds += part.core.rebuilds.load(Ordering::Relaxed);
        }
        s
    }

    /// Whether this daemon may commit a plan's reservations: always outside a cluster; in an
    /// unpartitioned cluster only while it holds the calendar's lease; with partitions always
    /// (a batch for partitions held elsewhere is fenced with their holders' tokens).
    pub fn writes_here(&self) -> bool {
        if self.opts.partition_key.is_some() {
            return true;
        }
        self.all_parts().iter().all(|p| p.writes_here())
    }

    /// Writes a snapshot of every calendar this daemon writes now (graceful shutdown calls
    /// this) and returns the newest sequence number covered, or `None` when nothing was
    /// written. An unlogged advance is logged first, so a snapshot equals a replay of the log
    /// up to its number.
    pub async fn snapshot(&self) -> Result<Option<u64>, ServiceError> {
        let mut out = None;
        for part in self.all_parts() {
            if let Some(seq) = part.snapshot().await? {
                out = Some(out.map_or(seq, |o: u64| o.max(seq)));
            }
        }
        Ok(out)
    }
}

/// Where a command's zone is named, for routing and errors.
fn zone_of(c: &Command) -> Option<String> {
    match c {
        Command::CreateReservation(r) => Some(r.zone.0.clone()),
        Command::CreateAllocation(a) => a.zone.as_ref().map(|z| z.0.clone()),
        Command::IncreaseCapacity(c) | Command::DecreaseCapacity(c) => Some(c.pool.zone.0.clone()),
        Command::DeclareCapacity(d) => Some(d.pool.zone.0.clone()),
        Command::RetirePool { pool } => Some(pool.zone.0.clone()),
        Command::Subscribe(s) => Some(s.zone.0.clone()),
        _ => None,
    }
}

fn unknown_partition(p: &str, known: &[String]) -> ServiceError {
    ServiceError::invalid(format!(
        "partition `{p}` is unknown; expected one of: {}",
        if known.is_empty() {
            "(none yet)".to_owned()
        } else {
            known.join(", ")
        }
    ))
}
impl Core {
    /// No listener is not an error: nobody is watching.
    fn announce(&self, change: Change) {
        let _ = self.changes.send(change);
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

#[cfg(test)]
mod tests;
