//! Spreading partition leases over the daemons of a cluster: each daemon renews a heartbeat
//! lease `node/<id>` and holds at most its fair share, ceil(partitions / live nodes), of the
//! partitions' leases. It takes a lapsed or free partition lease only below its share, and
//! hands one over per round while above it (a daemon that started first and took
//! everything), so N daemons settle at about P/N partitions each. A dead daemon's leases
//! lapse and the others take them within a lease time plus a refresh period.

use std::sync::Arc;
use std::time::Duration;

use berth_store::Lease;

use super::ReservationService;
use crate::ServiceError;
use crate::ownership::{Ownership, OwnershipOptions};

/// Prefix of the node heartbeat leases.
pub const NODE_LEASE_PREFIX: &str = "node/";

impl ReservationService {
    /// In a partitioned cluster: refreshes the heartbeat and the partition leases every third
    /// of the lease time until `shutdown` fires, then releases every lease held (after the
    /// caller wrote its snapshots). `None` when the calendar is not partitioned in a cluster.
    pub fn spawn_leases(
        self: &Arc<Self>,
        mut shutdown: tokio::sync::watch::Receiver<bool>,
    ) -> Option<tokio::task::JoinHandle<()>> {
        let cluster = self.opts.cluster.clone()?;
        self.opts.partition_key?;
        let svc = Arc::clone(self);
        let node = Ownership::new(
            Arc::clone(&self.store),
            Arc::clone(&self.clock),
            OwnershipOptions {
                lease: format!("{NODE_LEASE_PREFIX}{}", cluster.node_id),
                node_id: cluster.node_id.clone(),
                advertise_url: cluster.advertise_url.clone(),
                lease_time: cluster.lease_time,
            },
        );
        Some(tokio::spawn(async move {
            let period = (cluster.lease_time / 3).max(Duration::from_millis(100));
            let mut interval = tokio::time::interval(period);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = interval.tick() => {
                        if let Err(e) = svc.spread(&node).await {
                            tracing::warn!(error = %e, "cannot refresh the partition leases");
                        }
                    }
                    _ = shutdown.changed() => break,
                }
            }
            for (name, o) in svc.ownerships() {
                if let Err(e) = o.release().await {
                    tracing::warn!(partition = %name, error = %e, "cannot release a partition lease");
                }
            }
            if let Err(e) = node.release().await {
                tracing::warn!(error = %e, "cannot release the node heartbeat");
            }
        }))
    }

    /// One round: heartbeat, then renew, take (below the fair share), hand over (above it) or
    /// learn the holder of every partition lease. Returns how many partitions this daemon
    /// holds afterwards.
    pub async fn spread(&self, node: &Ownership) -> Result<usize, ServiceError> {
        node.refresh().await?;
        self.discover().await?;
        let leases = self.store.leases().await?;
        let now = self.clock.now();
        let live = leases
            .iter()
            .filter(|l| l.lease.starts_with(NODE_LEASE_PREFIX) && l.expires_at > now)
            .count()
            .max(1);
        let owned = self.ownerships();
        let share = owned.len().div_ceil(live);
        let mut held = owned.iter().filter(|(_, o)| o.token().is_some()).count();
        let mut handed_over = false;
        for (name, o) in &owned {
            let row: Option<&Lease> = leases.iter().find(|l| l.lease == o.options().lease);
            if o.token().is_some() {
                if held > share && !handed_over {
                    tracing::info!(partition = %name, held, share, live, "handing a partition over (above the fair share)");
                    o.release().await?;
                    held -= 1;
                    handed_over = true;
                    continue;
                }
                if o.refresh().await?.is_me() {
                    continue;
                }
                held -= 1;
            } else if row.is_none_or(|l| l.expires_at <= now) && held < share {
                if o.refresh().await?.is_me() {
                    held += 1;
                }
            } else {
                o.observe(row, now);
            }
        }
        Ok(held)
    }
}
