//! Partitions of the calendar: the key that maps a pool to its partition, partition-qualified
//! ids (`<partition>:r<n>`), routing a command to its partition, and finding and opening the
//! partitions a store holds.

use std::sync::Arc;
use std::time::Duration;

use berth_calendar::{Command, Outcome, PoolKey};

use super::{IdempotencyKey, Part, ReservationService};
use crate::ServiceError;
use crate::ownership::{Owner, Ownership, OwnershipOptions};

/// What splits the calendar into partitions: each pool belongs to the partition named by its
/// zone, its provider, or both (`<zone>~<provider>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionKey {
    /// One partition per zone (the default).
    Zone,
    /// One partition per provider.
    Provider,
    /// One partition per pool.
    Pool,
}

impl PartitionKey {
    /// `zone`, `provider` or `pool`.
    pub fn parse(text: &str) -> Option<PartitionKey> {
        match text {
            "zone" => Some(PartitionKey::Zone),
            "provider" => Some(PartitionKey::Provider),
            "pool" => Some(PartitionKey::Pool),
            _ => None,
        }
    }

    /// The key's name in configuration.
    pub fn name(self) -> &'static str {
        match self {
            PartitionKey::Zone => "zone",
            PartitionKey::Provider => "provider",
            PartitionKey::Pool => "pool",
        }
    }

    /// The partition of `pool`.
    pub fn of_pool(self, pool: &PoolKey) -> String {
        self.of(&pool.zone.0, Some(&pool.provider.0))
            .unwrap_or_default()
    }

    /// The partition of a request naming `zone` and maybe a provider; `None` when the request
    /// may land in any of the zone's pools and those may lie in several partitions.
    pub fn of(self, zone: &str, provider: Option<&str>) -> Option<String> {
        match (self, provider) {
            (PartitionKey::Zone, _) => Some(zone.to_owned()),
            (PartitionKey::Provider, Some(p)) => Some(p.to_owned()),
            (PartitionKey::Pool, Some(p)) => Some(format!("{zone}~{p}")),
            (_, None) => None,
        }
    }
}

/// A daemon's identity in a cluster with partitions.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// Node id (unique per process).
    pub node_id: String,
    /// Where it answers forwarded requests.
    pub advertise_url: String,
    /// How long a lease lasts unless renewed.
    pub lease_time: Duration,
}

/// The id an API shows for `local` (`r3`, `a2`, `s1`) of `partition`: `<partition>:<local>`,
/// or `local` alone when the calendar is not partitioned.
pub fn qualify(partition: Option<&str>, local: impl std::fmt::Display) -> String {
    match partition {
        Some(p) => format!("{p}:{local}"),
        None => local.to_string(),
    }
}

/// A stored idempotent response: the outcome, and in a partitioned calendar the partition that
/// took it (`{"partition": …, "outcome": …}`).
pub(super) fn replayed_in(
    k: &IdempotencyKey,
    hash: &str,
    response: serde_json::Value,
) -> Result<(Vec<Outcome>, bool, Option<String>), ServiceError> {
    let (partition, response) = unwrap_response(response);
    let (outcomes, replayed) = super::replayed(k, hash, response)?;
    Ok((outcomes, replayed, partition))
}

/// Splits a stored response into its partition (if recorded) and the outcome.
pub(super) fn unwrap_response(response: serde_json::Value) -> (Option<String>, serde_json::Value) {
    match response {
        serde_json::Value::Object(mut m)
            if m.contains_key("outcome") && m.contains_key("partition") =>
        {
            let partition = m
                .get("partition")
                .and_then(|p| p.as_str())
                .map(str::to_owned);
            (partition, m.remove("outcome").unwrap_or_default())
        }
        other => (None, other),
    }
}

/// The stored form of `outcome` taken by `partition` (see [`replayed_in`]).
pub(super) fn wrap_response(
    partition: Option<&str>,
    outcome: serde_json::Value,
) -> serde_json::Value {
    match partition {
        Some(p) => serde_json::json!({"partition": p, "outcome": outcome}),
        None => outcome,
    }
}

impl ReservationService {
    /// Splits an API id into its partition and local id: `<partition>:r<n>` → (`partition`,
    /// `r<n>`). An unqualified id is the unpartitioned calendar's, or the only partition's.
    /// The partition must be one this daemon follows.
    pub fn split_id(&self, id: &str) -> Result<(Option<String>, String), ServiceError> {
        if self.opts.partition_key.is_none() {
            return Ok((None, id.to_owned()));
        }
        let known = self.partitions();
        match id.rsplit_once(':') {
            Some((p, local)) => {
                if !known.iter().any(|k| k == p) {
                    return Err(unknown_id(id, &format!("partition `{p}` is unknown")));
                }
                Ok((Some(p.to_owned()), local.to_owned()))
            }
            None => match known.as_slice() {
                [one] => Ok((Some(one.clone()), id.to_owned())),
                _ => Err(unknown_id(
                    id,
                    "the calendar has several partitions; expected a partition-qualified id `<partition>:<id>`",
                )),
            },
        }
    }

    /// The partition of a request naming `zone` and maybe `provider`: `None` when unpartitioned
    /// or when the zone's pools may lie in several partitions.
    pub fn partition_for(&self, zone: &str, provider: Option<&str>) -> Option<String> {
        self.opts.partition_key?.of(zone, provider)
    }

    /// Who writes `partition` as this daemon last saw it (a partition written by another
    /// daemon since the last look is opened; its lease is then read). `Unknown` for a
    /// partition nobody has written yet: the daemon receiving its first request serves it.
    pub async fn owner_of(&self, partition: &str) -> Result<Owner, ServiceError> {
        let fresh = self.part(partition).is_none();
        if fresh {
            self.discover().await?;
        }
        let Some(part) = self.part(partition) else {
            return Ok(Owner::Unknown);
        };
        match part.ownership() {
            None => Ok(Owner::Unknown),
            Some(o) if fresh || matches!(o.owner(), Owner::Unknown) => o.refresh().await,
            Some(o) => Ok(o.owner()),
        }
    }

    /// Every partition's lease view (name order), in a partitioned cluster.
    pub fn ownerships(&self) -> Vec<(String, Arc<Ownership>)> {
        self.all_parts()
            .into_iter()
            .filter_map(|p| {
                Some((
                    p.core.partition.clone()?,
                    Arc::clone(p.core.opts.ownership.as_ref()?),
                ))
            })
            .collect()
    }

    /// The partitions `command` may go to, in the order they are tried: `partition` when
    /// given (from a qualified id), else by the command's zone, provider or pool. `[""]` when
    /// the calendar is not partitioned.
    pub(super) async fn targets(
        &self,
        partition: Option<&str>,
        command: &Command,
    ) -> Result<Vec<String>, ServiceError> {
        let Some(key) = self.opts.partition_key else {
            if let Some(p) = partition {
                return Err(unknown_partition_unpartitioned(p));
            }
            return Ok(vec![String::new()]);
        };
        if let Some(p) = partition {
            if self.part(p).is_none() {
                self.discover().await?;
            }
            return match self.part(p) {
                Some(_) => Ok(vec![p.to_owned()]),
                None => Err(super::unknown_partition(p, &self.partitions())),
            };
        }
        let named = |zone: &str, provider: Option<&str>| key.of(zone, provider);
        let one = match command {
            Command::IncreaseCapacity(c) | Command::DecreaseCapacity(c) => {
                Some(key.of_pool(&c.pool))
            }
            Command::DeclareCapacity(d) => Some(key.of_pool(&d.pool)),
            Command::RetirePool { pool } => Some(key.of_pool(pool)),
            Command::CreateReservation(r) => {
                named(&r.zone.0, r.provider.as_ref().map(|p| p.0.as_str()))
            }
            Command::CreateAllocation(a) if a.reservation.is_none() => match &a.zone {
                Some(z) => named(&z.0, a.provider.as_ref().map(|p| p.0.as_str())),
                None => None,
            },
            Command::Subscribe(s) => named(&s.zone.0, s.provider.as_ref().map(|p| p.0.as_str())),
            _ => {
                // Commands naming an id belong to the id's partition.
                let known = self.partitions();
                return match known.as_slice() {
                    [one] => Ok(vec![one.clone()]),
                    _ => Err(ServiceError::invalid(
                        "the calendar has several partitions; expected a partition-qualified id `<partition>:<id>`",
                    )),
                };
            }
        };
        match one {
            Some(p) => Ok(vec![p]),
            None => {
                self.discover().await?;
                Ok(self.partitions())
            }
        }
    }

    /// Refuses a store written with another layout: commands in the unpartitioned stream while
    /// partitions are asked for, or partition streams while none are.
    pub(super) async fn check_layout(&self) -> Result<(), ServiceError> {
        let stream = &self.opts.stream;
        match self.opts.partition_key {
            Some(key) => {
                let head = self.store.head(stream).await?;
                if head > 0 {
                    return Err(ServiceError::invalid(format!(
                        "the store holds {head} commands in the unpartitioned calendar stream `{stream}`, but the calendar is partitioned by {}; expected no partition key for this store (or a new store)",
                        key.name()
                    )));
                }
            }
            None => {
                let found = self.store.streams(&format!("{stream}/")).await?;
                if let Some((first, _)) = found.first() {
                    return Err(ServiceError::invalid(format!(
                        "the store holds {} partitioned calendar streams (`{first}`, …), but no partition key is set; expected the partition key the store was written with",
                        found.len()
                    )));
                }
            }
        }
        Ok(())
    }

    /// Opens the partitions the store holds that this daemon does not follow yet.
    pub(super) async fn discover(&self) -> Result<(), ServiceError> {
        let prefix = format!("{}/", self.opts.stream);
        for (stream, _) in self.store.streams(&prefix).await? {
            let name = stream[prefix.len()..].to_owned();
            if self.part(&name).is_none() {
                self.open_part(Some(name)).await?;
            }
        }
        Ok(())
    }

    /// The calendar of `name` (`None`: the unpartitioned one), opened on first use: its
    /// stream `<stream>/<name>`, and in a cluster its own lease named after the stream.
    pub(super) async fn open_part(&self, name: Option<String>) -> Result<Arc<Part>, ServiceError> {
        let key = name.clone().unwrap_or_default();
        if let Some(p) = self.part(&key) {
            return Ok(p);
        }
        let _one = self.opening.lock().await;
        if let Some(p) = self.part(&key) {
            return Ok(p);
        }
        let mut opts = self.opts.clone();
        if let Some(n) = &name {
            if self.opts.partition_key.is_none() {
                return Err(unknown_partition_unpartitioned(n));
            }
            opts.stream = format!("{}/{n}", self.opts.stream);
            opts.ownership = self.opts.cluster.as_ref().map(|c| {
                Ownership::new(
                    Arc::clone(&self.store),
                    Arc::clone(&self.clock),
                    OwnershipOptions {
                        lease: opts.stream.clone(),
                        node_id: c.node_id.clone(),
                        advertise_url: c.advertise_url.clone(),
                        lease_time: c.lease_time,
                    },
                )
            });
        }
        let part = Arc::new(
            Part::open(
                Arc::clone(&self.store),
                opts,
                Arc::clone(&self.clock),
                self.notifier.clone(),
                self.changes.clone(),
                name.clone(),
            )
            .await?,
        );
        if let (Some(key), Some(n)) = (self.opts.partition_key, &name) {
            // A store partitioned by another key would put pools in the wrong calendars.
            let pools = part
                .read(|cal| {
                    cal.query_capacity(&berth_calendar::CapacityQuery {
                        zone: None,
                        provider: None,
                        window: berth_calendar::Window {
                            start: cal.clock().unwrap_or_else(chrono::Utc::now),
                            end: None,
                        },
                        timeline: false,
                    })
                })
                .await?;
            if let Ok(report) = pools
                && let Some(p) = report.pools.iter().find(|p| &key.of_pool(&p.pool) != n)
            {
                return Err(ServiceError::invalid(format!(
                    "partition `{n}` holds pool `{}`, which partitioning by {} puts in partition `{}`; expected the partition key the store was written with",
                    p.pool,
                    key.name(),
                    key.of_pool(&p.pool)
                )));
            }
        }
        if let Ok(mut m) = self.parts.write() {
            m.insert(key, Arc::clone(&part));
        }
        tracing::debug!(partition = ?name, "calendar partition opened");
        Ok(part)
    }
}

fn unknown_id(id: &str, why: &str) -> ServiceError {
    ServiceError::invalid(format!("id `{id}`: {why}"))
}

fn unknown_partition_unpartitioned(p: &str) -> ServiceError {
    ServiceError::invalid(format!(
        "partition `{p}` is unknown: the calendar is not partitioned; expected an id without a partition"
    ))
}

#[cfg(test)]
pub(super) mod tests;
