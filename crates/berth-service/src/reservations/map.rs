//! The cluster's partition map as the store's leases show it: which daemon holds each
//! calendar stream's lease, where it answers, with which fencing token, until when. Clients
//! read it (`GET /v1/cluster`) to send each write straight to its holder.

use chrono::{DateTime, Utc};

use super::ReservationService;
use crate::ServiceError;

/// One live lease of a calendar stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The partition (`None`: the unpartitioned calendar).
    pub partition: Option<String>,
    /// The holding daemon's node id.
    pub node: String,
    /// Where it answers requests.
    pub url: String,
    /// Its fencing token.
    pub token: u64,
    /// When the lease lapses unless renewed.
    pub expires_at: DateTime<Utc>,
}

/// The map: this daemon's node id (`None` outside a cluster) and the live holders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterMap {
    /// This daemon's node id in the cluster.
    pub node: Option<String>,
    /// Live leases of the calendar's streams, by partition name (a lapsed lease is left out:
    /// its partition has no holder until a daemon takes it, and any daemon accepts its writes).
    pub holders: Vec<Holder>,
}

impl ReservationService {
    /// This daemon's node id in a cluster.
    pub fn node_id(&self) -> Option<String> {
        if let Some(c) = &self.opts.cluster {
            return Some(c.node_id.clone());
        }
        self.opts
            .ownership
            .as_ref()
            .map(|o| o.options().node_id.clone())
    }

    /// The partition map, read from the store's leases (one query). Empty outside a cluster.
    pub async fn cluster_map(&self) -> Result<ClusterMap, ServiceError> {
        let node = self.node_id();
        if node.is_none() {
            return Ok(ClusterMap {
                node,
                holders: Vec::new(),
            });
        }
        let now = self.clock.now();
        let stream = &self.opts.stream;
        let prefix = format!("{stream}/");
        let holders = self
            .store
            .leases()
            .await?
            .into_iter()
            .filter(|l| l.expires_at > now)
            .filter_map(|l| {
                let partition = if self.opts.partition_key.is_some() {
                    Some(l.lease.strip_prefix(&prefix)?.to_owned())
                } else if l.lease == *stream {
                    None
                } else {
                    return None;
                };
                Some(Holder {
                    partition,
                    node: l.owner,
                    url: l.owner_url,
                    token: l.token,
                    expires_at: l.expires_at,
                })
            })
            .collect();
        Ok(ClusterMap { node, holders })
    }
}
