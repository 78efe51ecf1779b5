//! Failover under load (`--kill-after S`): a partition holder gets SIGKILL mid-run while the
//! clients retry every write under its idempotency key until it is acknowledged. Reports, per
//! partition, how long no write of it was acknowledged after the kill, and checks that every
//! acknowledged reservation exists afterwards (acknowledged-then-lost must be 0).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use serde::Serialize;
use serde_json::json;

use super::Target;

/// A write acknowledged during the run.
#[derive(Debug, Clone)]
pub struct Ack {
    /// When the answer came.
    pub at: Instant,
    /// Its zone (partition) index.
    pub partition: usize,
    /// The reservation id the daemon gave.
    pub id: String,
}

/// One partition's write unavailability after the kill.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PartitionWindow {
    /// The partition (zone).
    pub partition: String,
    /// Whether the killed daemon held it.
    pub held_by_victim: bool,
    /// Seconds from the kill to the first acknowledged write of the partition sent at or
    /// after it (`null`: none was acknowledged).
    pub unavailable_s: Option<f64>,
}

/// What the failover part of a run measured.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FailoverReport {
    /// The killed daemon's node id.
    pub victim: String,
    /// Seconds into the measured window it was killed.
    pub killed_at_s: f64,
    /// Per partition, in name order.
    pub partitions: Vec<PartitionWindow>,
    /// The longest window of the victim's partitions.
    pub max_unavailable_s: f64,
    /// Reservations acknowledged during the run.
    pub acknowledged: usize,
    /// Acknowledged reservations a surviving daemon does not have afterwards.
    pub lost: usize,
    /// Ids acknowledged twice (a retried write applied twice would show here).
    pub duplicates: usize,
    /// Sends retried after a failure (transport error, 5xx, 503).
    pub retries: usize,
}

/// Windows per partition: from `killed` to the first ack after it.
pub fn windows(
    acks: &[Ack],
    killed: Instant,
    names: &[String],
    victim_holds: &BTreeSet<usize>,
) -> Vec<PartitionWindow> {
    let mut first: BTreeMap<usize, Instant> = BTreeMap::new();
    for a in acks.iter().filter(|a| a.at >= killed) {
        first
            .entry(a.partition)
            .and_modify(|t| *t = (*t).min(a.at))
            .or_insert(a.at);
    }
    names
        .iter()
        .enumerate()
        .map(|(i, name)| PartitionWindow {
            partition: name.clone(),
            held_by_victim: victim_holds.contains(&i),
            unavailable_s: first.get(&i).map(|t| (*t - killed).as_secs_f64()),
        })
        .collect()
}

/// Acknowledged ids missing from `t`'s reservations of `zones`, and ids acknowledged twice.
pub async fn lost(t: &Target, zones: &[String], acks: &[Ack]) -> anyhow::Result<(usize, usize)> {
    let mut present = BTreeSet::new();
    for z in zones {
        let r = t
            .post("/query-reservation", &json!({"zone": z}))
            .send()
            .await?;
        if !r.status().is_success() {
            anyhow::bail!("query-reservation of {z} failed: {}", r.status());
        }
        let v: serde_json::Value = r.json().await?;
        for d in v["details"].as_array().into_iter().flatten() {
            if let Some(id) = d["reservation-id"].as_str() {
                present.insert(id.to_owned());
            }
        }
    }
    let mut seen = BTreeSet::new();
    let mut duplicates = 0;
    let mut missing = 0;
    for a in acks {
        if !seen.insert(a.id.as_str()) {
            duplicates += 1;
        }
        if !present.contains(&a.id) {
            missing += 1;
        }
    }
    Ok((missing, duplicates))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn windows_run_from_the_kill_to_the_first_ack_after_it() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let ack = |ms, p| Ack {
            at: at(ms),
            partition: p,
            id: format!("{p}-{ms}"),
        };
        let acks = [ack(100, 0), ack(900, 0), ack(2600, 0), ack(1050, 1)];
        let names = ["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let w = windows(&acks, at(1000), &names, &BTreeSet::from([0]));
        let got: Vec<(bool, Option<u64>)> = w
            .iter()
            .map(|w| {
                (
                    w.held_by_victim,
                    w.unavailable_s.map(|s| (s * 1000.0).round() as u64),
                )
            })
            .collect();
        assert_eq!(got, [(true, Some(1600)), (false, Some(50)), (false, None)]);
    }
}
