//! The cluster's partition map on the wire (`GET /v1/cluster`) and routing a write by it:
//! clients send each write straight to the holder of the partition it names, so the write
//! skips the forwarding hop a non-holder would add. The forwarder marks a relayed answer with
//! [`FORWARDED_TO`], which tells a client its map is stale.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use berth_service::PartitionKey;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::AppState;
use crate::error::{ApiError, Dialect};

/// Response header of a write a daemon relayed to the holder (value: the holder's node id).
pub const FORWARDED_TO: &str = "x-berth-forwarded-to";

/// Who writes which partition of the calendar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ClusterView {
    /// The answering daemon's node id; absent outside a cluster (one daemon writes everything).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// What splits the calendar: `zone`, `provider`, `pool`, or `none` (one calendar, one
    /// lease: every write goes to its holder).
    pub partition_key: String,
    /// The live leases by partition name; a partition missing here has no holder now and any
    /// daemon accepts its writes.
    pub partitions: Vec<PartitionHolderView>,
}

/// One partition's lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PartitionHolderView {
    /// The partition; absent for the one calendar of `partition_key = none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// The holding daemon's node id.
    pub holder: String,
    /// Its base URL: send the partition's writes here.
    pub url: String,
    /// The lease's fencing token (it moves whenever the lease changes hands).
    pub token: u64,
    /// When the lease lapses unless renewed (RFC 3339).
    pub expires_at: String,
}

impl ClusterView {
    /// The base URL to send a write with JSON `body` to: the holder of the partition it names
    /// (with `partition_key = none`, the calendar's holder for every write). `None`: any
    /// daemon (no cluster, a write naming no partition, or a partition without a holder).
    pub fn route(&self, body: &Value) -> Option<&str> {
        self.node.as_ref()?;
        if self.partition_key == "none" {
            return self.partitions.first().map(|p| p.url.as_str());
        }
        let p = partition_of(PartitionKey::parse(&self.partition_key), body)?;
        self.partitions
            .iter()
            .find(|h| h.partition.as_deref() == Some(p.as_str()))
            .map(|h| h.url.as_str())
    }
}

/// The partition a write's JSON body names under `key`: the partition of a qualified
/// `reservation-id` or `instance-id` (`<partition>:r<n>`), else of its `zone` (default
/// `default`) with `provider` or a `source` pool or provider. `None` when unpartitioned, when
/// it names none, or a zone whose pools may lie in several partitions (the daemon tries them).
pub fn partition_of(key: Option<PartitionKey>, body: &Value) -> Option<String> {
    let key = key?;
    let text = |k: &str| body.get(k).and_then(|x| x.as_str());
    for k in ["reservation-id", "instance-id"] {
        if let Some(id) = text(k) {
            return id.rsplit_once(':').map(|(p, _)| p.to_owned());
        }
    }
    let mut zone = text("zone");
    let mut provider = text("provider").or_else(|| text("provider-id"));
    let source = body
        .get("source")
        .and_then(|s| s.as_str().or_else(|| s.get("id").and_then(|x| x.as_str())));
    if let Some(src) = source {
        if let Some(p) = src.strip_prefix("ResourceProvider:") {
            provider = Some(p);
        } else {
            let pool = src.strip_prefix("ResourcePool:").unwrap_or(src);
            match pool.split_once('/') {
                Some((z, p)) => {
                    zone = Some(z);
                    provider = Some(p);
                }
                None => provider = Some(pool),
            }
        }
    }
    if zone.is_none() && provider.is_none() {
        return None;
    }
    key.of(zone.unwrap_or("default"), provider)
}

/// `GET /v1/cluster`: the partition map from the store's leases.
pub async fn cluster_map(State(st): State<AppState>) -> Response {
    match st.reservations.cluster_map().await {
        Ok(m) => {
            let view = ClusterView {
                node: m.node,
                partition_key: st
                    .reservations
                    .partition_key()
                    .map_or("none", PartitionKey::name)
                    .to_owned(),
                partitions: m
                    .holders
                    .into_iter()
                    .map(|h| PartitionHolderView {
                        partition: h.partition,
                        holder: h.node,
                        url: h.url,
                        token: h.token,
                        expires_at: h
                            .expires_at
                            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                    })
                    .collect(),
            };
            (StatusCode::OK, axum::Json(view)).into_response()
        }
        Err(e) => ApiError::from_service(&e, Dialect::Has).into_response(),
    }
}

#[cfg(test)]
mod tests;
