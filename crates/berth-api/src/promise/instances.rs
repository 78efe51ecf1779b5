//! `create-instance` and `destroy-instance`: instances drawn from a pool or a reservation,
//! booted on and deleted from a real cloud when their provider is one.

use std::collections::BTreeSet;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use berth_calendar::{
    AllocationId, AllocationRequest, Amounts, Applied, Command, Dimension, PoolKey, ProviderId,
};
use berth_service::{ProviderFlavor, ProviderInfo};
use serde_json::json;

use super::amounts::amounts;
use super::bodies::{IdBody, InstanceBody};
use super::partitions::{pool_dimensions, reservation_id};
use super::source::known_provider;
use super::{D, DEFAULT_ZONE, Result, idem_key, names, not_found, ok, svc_err, svc_err_at};
use crate::AppState;
use crate::error::{ApiError, parse_body};
use crate::promise_wire::promise_amounts;

/// The amounts one instance of `flavor` consumes: its vCPUs (`vcpu`, Promise's `cores`) and
/// memory (`ram_mib`, `ram`); one `instances` when the pool (or the reservation drawn from)
/// counts instances, and its disk (`disk_gib`, `gigabytes`) when the flavor gives one and the
/// pool tracks disk. Pools seeded from an inventory name the same dimensions.
fn flavor_amounts(f: &ProviderFlavor, pool_dims: &BTreeSet<Dimension>) -> Amounts {
    let mut a = Amounts::new();
    a.set(Dimension::vcpu(), f.vcpus);
    a.set(Dimension::ram_mib(), f.ram);
    if pool_dims.contains(&Dimension::instances()) {
        a.set(Dimension::instances(), 1);
    }
    if f.disk > 0 && pool_dims.contains(&Dimension::disk_gib()) {
        a.set(Dimension::disk_gib(), f.disk);
    }
    a
}

/// Finds `name` in `provider`'s catalog, or (no provider) in the first known provider that
/// offers it; answers the provider id with the flavor.
async fn find_flavor(
    st: &AppState,
    name: &str,
    provider: Option<&ProviderInfo>,
) -> Result<(String, ProviderFlavor)> {
    if let Some(p) = provider {
        return p
            .flavors
            .iter()
            .find(|f| f.is(name))
            .map(|f| (p.id.clone(), f.clone()))
            .ok_or_else(|| {
                let known: Vec<&str> = p.flavors.iter().map(|f| f.name.as_str()).collect();
                ApiError::bad_request(
                    format!(
                        "`flavor`: flavor `{name}` is unknown to provider `{}`; expected one of [{}]",
                        p.id,
                        known.join(", ")
                    ),
                    D,
                )
            });
    }
    let all = st
        .reservations
        .all_providers()
        .await
        .map_err(|e| svc_err(&e))?;
    all.iter()
        .find_map(|p| {
            p.flavors
                .iter()
                .find(|f| f.is(name))
                .map(|f| (p.id.clone(), f.clone()))
        })
        .ok_or_else(|| {
            ApiError::bad_request(
                format!("`flavor`: no known provider offers flavor `{name}`"),
                D,
            )
        })
}

/// `POST /create-instance`: draws the flavor's amounts (or `capacity`) from the pool at low
/// priority, or from `reservation-id` at high priority (ending with the reservation).
pub async fn create_instance(
    State(st): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response> {
    let b: InstanceBody = parse_body(&body, D)?;
    names(&[
        ("zone", b.zone.as_deref()),
        ("provider-id", b.provider_id.as_deref()),
        ("name", b.name.as_deref()),
        ("flavor", b.flavor.as_deref()),
    ])?;
    let provider = match &b.provider_id {
        Some(p) => Some(known_provider(&st, p, "provider-id").await?),
        None => None,
    };
    let rid = b
        .reservation_id
        .as_deref()
        .map(|r| reservation_id(&st, Some(r)))
        .transpose()?;
    let partition = rid.as_ref().and_then(|(p, _)| p.clone());
    let rid = rid.map(|(_, id)| id);
    // The pool and dimensions of the reservation drawn from.
    let reserved = match rid {
        Some(id) => Some(
            st.reservations
                .read_at(partition.as_deref(), |c| {
                    c.reservation(id).map(|r| {
                        let dims: BTreeSet<Dimension> =
                            r.amounts.iter().map(|(d, _)| d.clone()).collect();
                        (r.pool, dims)
                    })
                })
                .await
                .map_err(|e| svc_err(&e))?
                .ok_or_else(|| {
                    not_found(format!("`reservation-id`: reservation `{id}` is unknown"))
                })?,
        ),
        None => None,
    };
    // Without `provider-id`, an unreserved instance of a flavor goes to the provider offering
    // it (Promise takes the first provider).
    let mut provider_id = b.provider_id.clone();
    let amounts = match (&b.capacity, &b.flavor) {
        (Some(c), _) => amounts(c, "capacity")?,
        (None, Some(name)) => {
            let catalog = match (&provider, &reserved) {
                (Some(p), _) => Some(p.clone()),
                (None, Some((pool, _))) => {
                    Some(known_provider(&st, &pool.provider.0, "reservation-id").await?)
                }
                (None, None) => None,
            };
            let (pid, flavor) = find_flavor(&st, name, catalog.as_ref()).await?;
            let dims = match &reserved {
                Some((_, dims)) => dims.clone(),
                None => {
                    let zone = b.zone.as_deref().unwrap_or(DEFAULT_ZONE);
                    let dims = pool_dimensions(&st, &PoolKey::new(zone, pid.as_str())).await?;
                    provider_id.get_or_insert(pid);
                    dims
                }
            };
            flavor_amounts(&flavor, &dims)
        }
        (None, None) => Amounts::new().with(Dimension::instances().0, 1),
    };
    let mut req = match rid {
        Some(r) => AllocationRequest::reserved(r, amounts),
        None => AllocationRequest::unreserved(b.zone.as_deref().unwrap_or(DEFAULT_ZONE), amounts),
    };
    req.provider = provider_id.map(ProviderId);
    req.end = b.end;
    let c = st
        .reservations
        .command_at(
            partition.as_deref(),
            Command::CreateAllocation(req),
            idem_key(&headers),
        )
        .await
        .map_err(|e| svc_err(&e))?;
    let Applied::AllocationCreated { id, .. } = c.outcome.applied else {
        return Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error",
            D,
        ));
    };
    let record = st
        .reservations
        .read_at(c.partition.as_deref(), |c| c.allocation(id))
        .await
        .map_err(|e| svc_err(&e))?;
    let part = c.partition.as_deref();
    let instance = berth_service::qualify(part, id);
    // A pool of a real cloud: the server boots on its host, or the instance is undone.
    let vim = record.as_ref().and_then(|a| {
        st.reservations
            .vim()
            .filter(|v| v.serves(&a.pool.provider.0))
    });
    let booted = match (vim, &record) {
        (Some(vim), Some(a)) => {
            let Some(flavor) = b.flavor.clone() else {
                undo_instance(&st, part, id).await;
                return Err(ApiError::bad_request(
                    format!(
                        "`flavor` is missing; provider `{}` boots servers, which need a flavor",
                        a.pool.provider
                    ),
                    D,
                ));
            };
            let req = berth_service::BootRequest {
                instance: instance.clone(),
                host: a.pool.zone.0.clone(),
                name: b
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("berth-{instance}")),
                flavor,
                image: b.image.clone(),
            };
            match vim.boot(&req).await {
                Ok(v) => Some(v),
                Err(e) => {
                    undo_instance(&st, part, id).await;
                    return Err(svc_err_at(&e, "flavor"));
                }
            }
        }
        _ => None,
    };
    let mut body = json!({"instance-id": instance});
    if let Some(v) = booted {
        body["server-id"] = json!(v.server);
        body["host"] = json!(v.host);
        body["status"] = json!(v.status);
    }
    if let Some(a) = record {
        body["priority"] = serde_json::to_value(a.priority).unwrap_or_default();
        body["pool-id"] = json!(a.pool.to_string());
        body["capacity"] = promise_amounts(&a.amounts);
        body["reservation-id"] = json!(a.reservation.map(|r| berth_service::qualify(part, r)));
        body["end"] = json!(a.end);
    }
    Ok(ok(body, "created-instance request accepted"))
}

/// Destroys an instance whose server could not boot (logged if even that fails).
async fn undo_instance(st: &AppState, partition: Option<&str>, id: AllocationId) {
    if let Err(e) = st
        .reservations
        .command_at(partition, Command::DestroyAllocation { id }, None)
        .await
    {
        tracing::warn!(instance = %id, error = %e, "an instance whose server did not boot is left in the calendar");
    }
}

/// `POST /destroy-instance`: deletes the instance's server first when its provider is a real
/// cloud, then releases its amounts.
pub async fn destroy_instance(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: IdBody = parse_body(&body, D)?;
    let s = b
        .instance_id
        .ok_or_else(|| ApiError::bad_request("`instance-id` is missing", D))?;
    let (partition, local) = st
        .reservations
        .split_id(&s)
        .map_err(|e| not_found(format!("`instance-id`: instance `{s}` is unknown ({e})")))?;
    let id = local
        .strip_prefix('a')
        .and_then(|n| n.parse().ok())
        .map(AllocationId)
        .ok_or_else(|| not_found(format!("`instance-id`: instance `{s}` is unknown")))?;
    if let Some(vim) = st.reservations.vim() {
        let pool = st
            .reservations
            .read_at(partition.as_deref(), |c| c.allocation(id).map(|a| a.pool))
            .await
            .map_err(|e| svc_err(&e))?;
        if pool.is_some_and(|p| vim.serves(&p.provider.0)) {
            let instance = berth_service::qualify(partition.as_deref(), id);
            vim.destroy(&instance)
                .await
                .map_err(|e| svc_err_at(&e, "instance-id"))?;
        }
    }
    st.reservations
        .command_at(
            partition.as_deref(),
            Command::DestroyAllocation { id },
            None,
        )
        .await
        .map_err(|e| svc_err_at(&e, "instance-id"))?;
    Ok(ok(
        json!({}),
        "instance destroyed and resource released back to pool",
    ))
}
