//! The pool a request names: a `source` in any of its forms (the module docs' "Pool
//! identity"), or a provider in a zone, and whether the daemon knows that provider.

use berth_calendar::PoolKey;
use berth_service::ProviderInfo;
use serde_json::Value;

use super::{D, DEFAULT_PROVIDER, DEFAULT_ZONE, Result, not_found, svc_err};
use crate::AppState;
use crate::error::ApiError;

/// What a `source` names: a pool id, or a provider whose pool is in the request's zone.
#[derive(Debug, Clone, PartialEq, Eq)]
enum SourceRef {
    Pool(PoolKey),
    Provider(String),
}

/// Reads a `source` (see the module docs for the accepted forms); `field` names it in errors.
fn source_ref(v: &Value, field: &str) -> Result<SourceRef> {
    let text = match v {
        Value::String(s) => s.as_str(),
        Value::Object(o) => match o.get("id") {
            Some(Value::String(s)) => s.as_str(),
            _ => {
                return Err(ApiError::bad_request(
                    format!(
                        "`{field}.id` is missing or not a string; expected a provider or pool id"
                    ),
                    D,
                ));
            }
        },
        _ => {
            return Err(ApiError::bad_request(
                format!("`{field}` is {v}; expected a provider or pool id, or an object with `id`"),
                D,
            ));
        }
    };
    let text = text.trim();
    let pool = |id: &str| match id.rsplit_once('/') {
        Some((z, p)) if !z.is_empty() && !p.is_empty() => Ok(SourceRef::Pool(PoolKey::new(z, p))),
        Some(_) => Err(ApiError::bad_request(
            format!("`{field}` is `{text}`; expected a pool id `<zone>/<provider-id>`"),
            D,
        )),
        None => Ok(SourceRef::Provider(id.to_owned())),
    };
    if let Some(id) = text.strip_prefix("ResourcePool:") {
        pool(id)
    } else if let Some(id) = text.strip_prefix("ResourceProvider:") {
        if id.is_empty() || id.contains('/') {
            return Err(ApiError::bad_request(
                format!("`{field}` is `{text}`; expected `ResourceProvider:<provider-id>`"),
                D,
            ));
        }
        Ok(SourceRef::Provider(id.to_owned()))
    } else if text.is_empty() {
        Err(ApiError::bad_request(
            format!("`{field}` is empty; expected a provider or pool id"),
            D,
        ))
    } else {
        pool(text)
    }
}

/// The pool a capacity request or subscription names: `source`, else `provider`, in `zone`.
pub(super) fn pool_of(
    source: Option<&Value>,
    zone: Option<&str>,
    provider: Option<&str>,
    field: &str,
) -> Result<PoolKey> {
    let zone = zone.unwrap_or(DEFAULT_ZONE);
    match source.map(|s| source_ref(s, field)).transpose()? {
        Some(SourceRef::Pool(k)) => Ok(k),
        Some(SourceRef::Provider(p)) => Ok(PoolKey::new(zone, p)),
        None => Ok(PoolKey::new(zone, provider.unwrap_or(DEFAULT_PROVIDER))),
    }
}

/// Refuses a provider the daemon does not know (`field` names where it came from).
pub(super) async fn known_provider(st: &AppState, id: &str, field: &str) -> Result<ProviderInfo> {
    st.reservations
        .provider(id)
        .await
        .map_err(|e| svc_err(&e))?
        .ok_or_else(|| {
            not_found(format!(
                "`{field}`: provider `{id}` is unknown; register it with add-provider or list it in the inventory"
            ))
        })
}
