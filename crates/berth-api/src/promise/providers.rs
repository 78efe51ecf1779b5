//! `add-provider`: registers a provider with its flavor catalog, or discovers both (and the
//! hosts' capacity) from a Keystone v3 endpoint.

use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use berth_calendar::PoolKey;
use berth_service::{ProviderFlavor, ProviderInfo};
use serde_json::{Value, json};

use super::bodies::{FlavorBody, ProviderBody};
use super::{D, DEFAULT_ZONE, Result, names, ok, svc_err, svc_err_at};
use crate::AppState;
use crate::error::{ApiError, parse_body};
use crate::promise_wire::promise_amounts;

fn flavors(list: Vec<FlavorBody>) -> Result<Vec<ProviderFlavor>> {
    let mut out: Vec<ProviderFlavor> = Vec::new();
    for (i, f) in list.into_iter().enumerate() {
        let at = format!("flavors[{i}]");
        let (id, name) = match (f.id, f.name) {
            (Some(id), Some(name)) => (id, name),
            (Some(x), None) | (None, Some(x)) => (x.clone(), x),
            (None, None) => {
                return Err(ApiError::bad_request(
                    format!("`{at}` has neither `id` nor `name`; expected at least one"),
                    D,
                ));
            }
        };
        if out.iter().any(|o| o.is(&id) || o.is(&name)) {
            return Err(ApiError::bad_request(
                format!("`{at}`: flavor `{name}` is listed twice"),
                D,
            ));
        }
        out.push(ProviderFlavor {
            vcpus: f.vcpus.value(&format!("{at}.vcpus"))?,
            ram: f.ram.value(&format!("{at}.ram"))?,
            disk: f
                .disk
                .map(|d| d.value(&format!("{at}.disk")))
                .transpose()?
                .unwrap_or(0),
            id,
            name,
        });
    }
    Ok(out)
}

/// `POST /add-provider`.
pub async fn add_provider(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: ProviderBody = parse_body(&body, D)?;
    names(&[
        ("provider-type", Some(b.provider_type.as_str())),
        ("name", b.name.as_deref()),
        ("region", b.region.as_deref()),
        ("username", b.username.as_deref()),
    ])?;
    let tenant = b
        .tenant
        .as_ref()
        .and_then(|t| t.get("name").or_else(|| t.get("id")))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let given_flavors = b.flavors.is_some();
    let info = ProviderInfo {
        id: String::new(),
        name: b.name,
        provider_type: b.provider_type,
        endpoint: b.endpoint,
        region: b.region,
        tenant,
        flavors: flavors(b.flavors.unwrap_or_default())?,
    };
    // A Keystone v3 endpoint and no catalog in the body: the cloud is asked.
    let v3 = info
        .endpoint
        .as_deref()
        .is_some_and(|e| e.trim_end_matches('/').ends_with("/v3"));
    let discovery = match (st.reservations.vim(), v3 && !given_flavors) {
        (Some(vim), true) => {
            let (Some(username), Some(password)) = (b.username.clone(), b.password.clone()) else {
                return Err(ApiError::bad_request(
                    "`username` and `password` are needed to discover a Keystone v3 endpoint; or give `flavors` to register it as written",
                    D,
                ));
            };
            let d = berth_service::Discovery {
                endpoint: info.endpoint.clone().unwrap_or_default(),
                username,
                password,
                tenant: info.tenant.clone(),
                region: info.region.clone(),
            };
            Some(
                vim.discover(&d)
                    .await
                    .map_err(|e| svc_err_at(&e, "endpoint"))?,
            )
        }
        _ => None,
    };
    let mut info = info;
    if let Some(d) = &discovery {
        info.flavors = d.info.flavors.clone();
        info.region = info.region.or_else(|| d.info.region.clone());
    }
    let credentials = match (b.username, b.password) {
        (Some(u), Some(p)) => Some(json!({"username": u, "password": p}).to_string()),
        _ => None,
    };
    let flavors = info.flavors.clone();
    let id = st
        .reservations
        .add_provider(info, credentials)
        .await
        .map_err(|e| svc_err(&e))?;
    let pool = PoolKey::new(DEFAULT_ZONE, id.as_str()).to_string();
    let mut body = json!({"provider-id": id, "pool-id": pool});
    if let Some(d) = discovery {
        // Each host's free capacity becomes pool `<host>/<provider-id>`.
        let mut pools = berth_service::InventoryPools::new(id.clone());
        pools.pools = d.capacity.clone();
        st.reservations
            .reconcile(&pools)
            .await
            .map_err(|e| svc_err(&e))?;
        let capacity: serde_json::Map<String, Value> = d
            .capacity
            .iter()
            .map(|(host, a)| {
                (
                    PoolKey::new(host.as_str(), id.as_str()).to_string(),
                    promise_amounts(a),
                )
            })
            .collect();
        if let Some(first) = capacity.keys().next() {
            body["pool-id"] = json!(first);
        }
        body["capacity"] = Value::Object(capacity);
        body["flavors"] = json!(flavors
            .iter()
            .map(|f| json!({"id": f.id, "name": f.name, "vcpus": f.vcpus, "ram": f.ram, "disk": f.disk}))
            .collect::<Vec<_>>());
    }
    Ok(ok(body, "provider added"))
}
