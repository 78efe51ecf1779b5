//! Writes claims to Placement: `PUT /allocations/{consumer}` with the consumer's generation
//! (Placement checks it, and moves each provider's generation, refusing a write that raced
//! another with `placement.concurrent_update`: re-read and retry), `DELETE` when a
//! reservation no longer holds anything.
//!
//! Placement does not always refuse the second of two concurrent writes (on MariaDB both
//! answered 204 in 3 of 6 tries of two clients taking a provider's last units at once), so
//! Berth checks the provider after each claim it writes and at every sync: from a provider
//! holding more than its capacity, Berth withdraws its own claims and reports them refused.

use std::collections::BTreeMap;

use serde_json::json;

use crate::claims::{Claim, is_berth_consumer, plan};
use crate::client::{PLACEMENT_VERSION, Session, expect};
use crate::cloud::ProviderState;
use crate::error::OpenStackError;
use crate::wire;

/// Attempts of one write when generations keep moving.
const ATTEMPTS: u32 = 8;

/// What Berth's consumers hold, from the providers' allocations: consumer -> host -> units.
pub fn held(
    providers: &[ProviderState],
) -> BTreeMap<String, BTreeMap<String, BTreeMap<String, u64>>> {
    let mut out: BTreeMap<String, BTreeMap<String, BTreeMap<String, u64>>> = BTreeMap::new();
    for p in providers {
        for (c, h) in &p.allocations {
            if is_berth_consumer(c) {
                out.entry(c.clone())
                    .or_default()
                    .insert(p.provider.name.clone(), h.resources.clone());
            }
        }
    }
    out
}

/// The first resource class of which a provider's consumers hold more than its capacity,
/// said (`DISK_GB: 200 allocated of 100`), or `None`.
pub fn over_committed(p: &ProviderState) -> Option<String> {
    p.inventories.iter().find_map(|(rc, inv)| {
        let used: u64 = p
            .allocations
            .values()
            .filter_map(|h| h.resources.get(rc))
            .sum();
        (used > inv.capacity()).then(|| format!("{rc}: {used} allocated of {}", inv.capacity()))
    })
}

/// What a sync did.
#[derive(Debug, Default)]
pub struct Synced {
    /// Consumers written.
    pub written: Vec<String>,
    /// Consumers removed.
    pub removed: Vec<String>,
    /// Claims Placement refused (capacity gone to others), with why.
    pub refused: Vec<(String, OpenStackError)>,
}

/// Brings Berth's consumers in Placement in line with `desired`, from `providers` as just
/// read. A refused claim does not stop the others.
pub async fn sync(
    s: &Session,
    providers: &[ProviderState],
    desired: &BTreeMap<String, Claim>,
) -> Result<Synced, OpenStackError> {
    let mut out = Synced::default();
    let mut held = held(providers);
    // Berth yields on a provider Placement over-committed.
    for p in providers.iter().filter(|p| over_committed(p).is_some()) {
        let mine: Vec<String> = held
            .iter()
            .filter(|(_, hosts)| hosts.contains_key(&p.provider.name))
            .map(|(c, _)| c.clone())
            .collect();
        for c in mine {
            release(s, &c).await?;
            held.remove(&c);
            let message = over_committed(p).unwrap_or_default();
            tracing::warn!(consumer = %c, provider = %p.provider.name, %message, "placement over-committed: berth withdrew its claim");
            out.refused.push((
                c.clone(),
                OpenStackError::ClaimRefused {
                    consumer: c,
                    provider: p.provider.name.clone(),
                    message,
                },
            ));
        }
    }
    let withdrawn: Vec<String> = out.refused.iter().map(|(c, _)| c.clone()).collect();
    let mut todo = plan(desired, &held);
    todo.put.retain(|c| !withdrawn.contains(c));
    if todo.put.is_empty() && todo.delete.is_empty() {
        return Ok(out);
    }
    let (project, user) = s.identity().await?;
    for c in &todo.delete {
        release(s, c).await?;
        out.removed.push(c.clone());
    }
    for c in &todo.put {
        let Some(claim) = desired.get(c) else {
            continue;
        };
        let Some(rp) = providers.iter().find(|p| p.provider.name == claim.host) else {
            out.refused.push((
                c.clone(),
                OpenStackError::ClaimRefused {
                    consumer: c.clone(),
                    provider: claim.host.clone(),
                    message: "no resource provider has this name".into(),
                },
            ));
            continue;
        };
        match write(s, c, rp, claim, &project, &user).await {
            Ok(()) => out.written.push(c.clone()),
            Err(e @ OpenStackError::ClaimRefused { .. }) => out.refused.push((c.clone(), e)),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Writes one claim, re-reading the consumer's generation after each conflict.
pub async fn write(
    s: &Session,
    consumer: &str,
    rp: &ProviderState,
    claim: &Claim,
    project: &str,
    user: &str,
) -> Result<(), OpenStackError> {
    for (rc, n) in &claim.resources {
        if let Some(inv) = rp.inventories.get(rc) {
            crate::claims::check_units(rc, *n, inv).map_err(|message| {
                OpenStackError::ClaimRefused {
                    consumer: consumer.to_owned(),
                    provider: claim.host.clone(),
                    message,
                }
            })?;
        }
    }
    let path = format!("/allocations/{consumer}");
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let now: wire::ConsumerAllocations = wire::parse(
            "placement consumer allocations",
            &s.get("placement", &path, PLACEMENT_VERSION).await?,
        )?;
        let body = json!({
            "allocations": {rp.provider.uuid.clone(): {"resources": claim.resources}},
            "project_id": now.project_id.as_deref().unwrap_or(project),
            "user_id": now.user_id.as_deref().unwrap_or(user),
            "consumer_generation": now.consumer_generation,
            "consumer_type": "BERTH_RESERVATION",
        });
        let a = s
            .call(
                reqwest::Method::PUT,
                "placement",
                &path,
                PLACEMENT_VERSION,
                Some(&body),
            )
            .await?;
        match expect(a, "PUT", &format!("placement{path}"), &[204]) {
            Ok(_) => {
                // Read back: a concurrent write may have been let through beside this one.
                let after = crate::fetch::provider(s, &rp.provider).await?;
                if let Some(message) = over_committed(&after) {
                    release(s, consumer).await?;
                    return Err(OpenStackError::ClaimRefused {
                        consumer: consumer.to_owned(),
                        provider: claim.host.clone(),
                        message: format!("{message}; berth withdrew its claim"),
                    });
                }
                tracing::info!(consumer, host = %claim.host, record = %claim.record, resources = ?claim.resources, "placement claim written");
                return Ok(());
            }
            Err(e) if e.is_generation_conflict() => {
                tracing::debug!(consumer, "placement generation moved; reading again");
                last = Some(e);
            }
            Err(OpenStackError::Status {
                status: 409,
                message,
                ..
            }) => {
                return Err(OpenStackError::ClaimRefused {
                    consumer: consumer.to_owned(),
                    provider: claim.host.clone(),
                    message,
                });
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or(OpenStackError::ClaimRefused {
        consumer: consumer.to_owned(),
        provider: claim.host.clone(),
        message: "generations kept moving".into(),
    }))
}

/// Removes a consumer's allocations (gone already is fine).
pub async fn release(s: &Session, consumer: &str) -> Result<(), OpenStackError> {
    let path = format!("/allocations/{consumer}");
    let a = s
        .call(
            reqwest::Method::DELETE,
            "placement",
            &path,
            PLACEMENT_VERSION,
            None,
        )
        .await?;
    expect(a, "DELETE", &format!("placement{path}"), &[204, 404])?;
    tracing::info!(consumer, "placement claim removed");
    Ok(())
}
