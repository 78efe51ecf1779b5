//! ONAP OOF-HAS compatible homing routes: versions, plans (create, list, get, delete) and the
//! triage tool; errors as HAS writes them (`{"error_message": {"explanation", "code", "error":
//! {"message", "type"}, "title"}}`, see `error`), with Berth's located `diagnostics` added.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use berth_service::{Plan, PlanRequest};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use utoipa::ToSchema;

use crate::AppState;
use crate::error::{ApiError, Dialect, parse_body};

const D: Dialect = Dialect::Has;
type Result<T> = std::result::Result<T, ApiError>;

/// `POST /v1/plans` body, as HAS accepts it.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct PlanBody {
    /// Plan name.
    pub name: String,
    /// Optional client id.
    pub id: Option<String>,
    /// Homing template: an object, or YAML/JSON text.
    #[schema(value_type = Object)]
    pub template: Value,
    /// `"N"`, `"all"` or a number.
    #[schema(value_type = Object)]
    pub num_solution: Option<Value>,
    /// Seconds (number or numeric string).
    #[schema(value_type = Object)]
    pub timeout: Option<Value>,
    /// Cap on solutions.
    #[schema(value_type = Object)]
    pub limit: Option<Value>,
    /// `get_file` contents by name.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub files: Option<Value>,
}

fn number(v: Option<&Value>, field: &str, all_ok: bool) -> Result<Option<u64>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_u64().map(Some).ok_or_else(|| {
            ApiError::bad_field(
                field,
                format!("`{field}` is {n}; expected a non-negative integer"),
                D,
            )
        }),
        Some(Value::String(s)) if all_ok && s.eq_ignore_ascii_case("all") => Ok(None),
        Some(Value::String(s)) => s.trim().parse().map(Some).map_err(|_| {
            let expected = if all_ok {
                "a non-negative integer or `all`"
            } else {
                "a non-negative integer"
            };
            ApiError::bad_field(field, format!("`{field}` is `{s}`; expected {expected}"), D)
        }),
        Some(other) => Err(ApiError::bad_field(
            field,
            format!(
                "`{field}` is {}; expected a number or a numeric string",
                json_type(other)
            ),
            D,
        )),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn base(headers: &HeaderMap) -> String {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(|h| format!("http://{h}"))
        .unwrap_or_default()
}

fn links(base: &str, id: &str) -> Value {
    json!([[{"href": format!("{base}/v1/plans/{id}"), "rel": "self"}]])
}

/// `GET /`: the API versions document, a list of version descriptors as HAS writes it.
pub async fn versions(headers: HeaderMap) -> Response {
    let b = base(&headers);
    Json(json!({"versions": [version_descriptor(&b)]})).into_response()
}

/// `GET /v1`: the descriptor of version 1.
pub async fn version_v1(headers: HeaderMap) -> Response {
    let b = base(&headers);
    Json(json!({"version": version_descriptor(&b)})).into_response()
}

fn version_descriptor(b: &str) -> Value {
    json!({
        "id": "v1",
        "version": format!("berth:{}", env!("CARGO_PKG_VERSION")),
        "status": "CURRENT",
        "updated": "2026-11-25T00:00:00Z",
        "media-types": [{"base": "application/json", "type": "application/vnd.onap.has-v1+json"}],
        "links": [
            {"href": format!("{b}/v1"), "rel": "self"},
            {"href": format!("{b}/openapi.json"), "rel": "describedby", "type": "application/json"}
        ]
    })
}

/// `GET /v1/plans/healthcheck`: HAS's health probe, answered like a solved plan named
/// `healthcheck` once the store answers; open to callers without credentials, as in HAS.
pub async fn healthcheck(State(st): State<AppState>, headers: HeaderMap) -> Result<Response> {
    if let Err(e) = st.reservations.store().ping().await {
        tracing::warn!(error = %e, "healthcheck: store does not answer");
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the store does not answer",
            D,
        ));
    }
    let plan = json!({
        "id": "healthcheck",
        "name": "healthcheck",
        "status": "solved",
        "message": "",
        "recommendations": [],
        "links": links(&base(&headers), "healthcheck"),
    });
    Ok(Json(json!({"plans": [plan]})).into_response())
}

fn allow(methods: &'static str) -> Response {
    let mut r = StatusCode::NO_CONTENT.into_response();
    r.headers_mut()
        .insert(header::ALLOW, header::HeaderValue::from_static(methods));
    r
}

/// `OPTIONS /v1/plans` -> 204 with `Allow: GET,POST`.
pub async fn options_plans() -> Response {
    allow("GET,POST")
}

/// `OPTIONS /v1/plans/{id}` -> 204 with `Allow: GET,DELETE`, or 404 for an unknown plan (as HAS).
pub async fn options_plan(State(st): State<AppState>, Path(id): Path<String>) -> Result<Response> {
    find(&st, &id).await?;
    Ok(allow("GET,DELETE"))
}

/// `POST /v1/plans` -> 201 `{name, id, status, links}`.
pub async fn create_plan(
    State(st): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response> {
    let b: PlanBody = parse_body(&body, D)?;
    let files = match b.files {
        None | Some(Value::Null) => Default::default(),
        Some(Value::Object(m)) => m
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k, s)),
                other => Ok((k, other.to_string())),
            })
            .collect::<Result<_>>()?,
        Some(other) => {
            return Err(ApiError::bad_field(
                "files",
                format!(
                    "`files` is {}; expected an object of name -> text",
                    json_type(&other)
                ),
                D,
            ));
        }
    };
    let to_usize = |x: Option<u64>| x.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    // An Idempotency-Key names the plan when the body does not: a retry finds the same plan.
    let key = headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .filter(|k| !k.is_empty());
    let request = PlanRequest {
        name: b.name,
        id: b.id.or_else(|| key.map(str::to_owned)),
        template: b.template,
        num_solution: to_usize(number(b.num_solution.as_ref(), "num_solution", true)?),
        timeout: number(b.timeout.as_ref(), "timeout", false)?,
        limit: to_usize(number(b.limit.as_ref(), "limit", false)?),
        files,
    };
    let plan = st
        .plans
        .accept(request)
        .await
        .map_err(|e| ApiError::from_service(&e, D))?;
    let body = json!({"name": plan.name, "id": plan.id, "status": plan.status.as_str(), "links": links(&base(&headers), &plan.id)});
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// HAS recommendations: one map per solution, demand -> `{inventory_provider,
/// service_resource_id, candidate, attributes}`.
pub fn recommendations(outcome: Option<&Value>) -> Vec<Value> {
    let Some(solutions) = outcome
        .and_then(|o| o.get("solutions"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    solutions
        .iter()
        .map(|s| {
            let mut rec = Map::new();
            if let Some(placements) = s.get("placements").and_then(Value::as_object) {
                for (demand, p) in placements {
                    rec.insert(demand.clone(), recommendation(p));
                }
            }
            Value::Object(rec)
        })
        .collect()
}

fn recommendation(p: &Value) -> Value {
    let s = |k: &str| p.get(k).filter(|v| !v.is_null()).cloned();
    let text = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_owned);
    let mut candidate = Map::new();
    for k in [
        "candidate_id",
        "inventory_type",
        "cloud_owner",
        "location_type",
        "location_id",
        "host_id",
    ] {
        if let Some(v) = s(k) {
            candidate.insert(k.to_owned(), v);
        }
    }
    if let (Some(owner), Some(loc)) = (text("cloud_owner"), text("location_id")) {
        candidate.insert("vim-id".into(), json!(format!("{owner}_{loc}")));
    }
    // HAS's slicing candidates (nsi, nssi, nst, slice_profiles, ...) are flat: clients read
    // `candidate.instance_name`, `candidate.latency`.
    if !matches!(text("inventory_type").as_deref(), Some("cloud" | "service"))
        && let Some(Value::Object(extra)) = p.get("attributes")
    {
        for (k, v) in extra {
            candidate.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    let mut attributes = Map::new();
    if let Some(v) = s("physical_location_id") {
        attributes.insert("physical-location-id".into(), v);
    }
    if let Some(v) = s("cloud_owner") {
        attributes.insert("cloud_owner".into(), v);
    }
    if let Some(v) = s("cloud_region_version") {
        attributes.insert("aic_version".into(), v);
    }
    // HPA: OSDF reads the flavor label -> flavor name map as `flavors`; HAS adds the score
    // and the VDU directives with the flavors filled in.
    if let Some(v) = s("flavor_map") {
        attributes.insert("flavors".into(), v);
    }
    for k in ["hpa_score", "directives"] {
        if let Some(v) = s(k) {
            attributes.insert(k.into(), v);
        }
    }
    // Seed 002: the region's realized deployment intent and its price go back with it.
    for k in ["realized_intent", "deployment_cost", "cloud_net_value"] {
        if let Some(v) = s(k) {
            attributes.insert(k.into(), v);
        }
    }
    // HAS copies a demand's `passthrough_attributes` into its recommendation's attributes.
    if let Some(Value::Object(pass)) = p.get("passthrough_attributes") {
        for (k, v) in pass {
            attributes.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    if let Some(Value::Object(extra)) = p.get("attributes") {
        for (k, v) in extra {
            attributes.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    json!({
        "inventory_provider": text("inventory_provider").unwrap_or_else(|| "aai".to_owned()),
        "service_resource_id": text("service_resource_id").or_else(|| text("service_id")).or_else(|| text("candidate_id")).unwrap_or_default(),
        "candidate": candidate,
        "attributes": attributes,
    })
}

fn plan_json(p: &Plan, base: &str) -> Value {
    let mut v = json!({
        "name": p.name,
        "id": p.id,
        "status": p.status.as_str(),
        "recommendations": recommendations(p.outcome.as_ref()),
        "links": links(base, &p.id),
    });
    if let Some(m) = &p.message {
        v["message"] = json!(m);
    }
    if let Some(o) = &p.outcome {
        let objectives: Vec<Value> = o
            .get("solutions")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|s| s["objective"].clone()).collect())
            .unwrap_or_default();
        v["objectives"] = json!(objectives);
        v["optimal"] = o.get("optimal").cloned().unwrap_or(Value::Bool(false));
        // Beside HAS's fields (OSDF reads `status` and `recommendations`): the objective
        // the search proved no plan beats and the best plan's relative gap to it.
        for k in ["bound", "gap"] {
            v[k] = o.get(k).cloned().unwrap_or(Value::Null);
        }
    }
    if !p.reservations.is_empty() {
        v["reservations"] = json!(p.reservations);
    }
    v
}

/// `GET /v1/plans`.
pub async fn list_plans(State(st): State<AppState>, headers: HeaderMap) -> Result<Response> {
    let b = base(&headers);
    let plans = st
        .plans
        .list()
        .await
        .map_err(|e| ApiError::from_service(&e, D))?;
    let plans: Vec<Value> = plans.iter().map(|p| plan_json(p, &b)).collect();
    Ok(Json(json!({"plans": plans})).into_response())
}

async fn find(st: &AppState, id: &str) -> Result<Plan> {
    st.plans
        .get(id)
        .await
        .map_err(|e| ApiError::from_service(&e, D))?
        .ok_or_else(|| no_plan(id))
}

fn no_plan(id: &str) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, format!("plan `{id}` not found"), D)
}

/// `GET /v1/plans/{id}` -> `{"plans": [plan]}`. With `Prefer: wait=N` (RFC 7240) the answer
/// comes once the plan is final, or after N seconds (capped below the request timeout), and
/// says `Preference-Applied: wait=N`; a daemon with every waiting slot taken answers at once.
pub async fn get_plan(
    State(st): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    waiting: Option<axum::Extension<crate::Waiting>>,
) -> Result<Response> {
    // Watching from before the read, so an end between the two is not missed.
    let watch = waiting.as_ref().map(|_| st.plans.watch_final());
    let mut p = find(&st, &id).await?;
    let mut applied = None;
    if let (Some(axum::Extension(w)), Some(watch)) = (waiting, watch)
        && !p.status.is_final()
    {
        applied = Some(w.max.as_secs());
        let waited = watch.until_final(&st.plans, &id, Some(p), w.max);
        let mut stop = st.stop.clone();
        p = tokio::select! {
            r = waited => r.map_err(|e| ApiError::from_service(&e, D))?.ok_or_else(|| no_plan(&id))?,
            () = crate::ui::stopped(&mut stop) => find(&st, &id).await?,
        };
    }
    let mut r = Json(json!({"plans": [plan_json(&p, &base(&headers))]})).into_response();
    if let Some(secs) = applied
        && let Ok(v) = header::HeaderValue::from_str(&format!("wait={secs}"))
    {
        r.headers_mut().insert("preference-applied", v);
    }
    Ok(r)
}

/// The `wait` preference of `Prefer` headers in seconds (RFC 7240: `Prefer: wait=10`, among
/// other preferences, case-insensitive, the value maybe quoted); none when absent, zero or
/// unreadable (a preference the server cannot read is ignored, not refused).
pub(crate) fn prefer_wait(headers: &HeaderMap) -> Option<std::time::Duration> {
    headers
        .get_all("prefer")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .find_map(|pref| {
            let token = pref.split(';').next()?.trim();
            let (name, value) = token.split_once('=')?;
            if !name.trim().eq_ignore_ascii_case("wait") {
                return None;
            }
            value.trim().trim_matches('"').parse::<u64>().ok()
        })
        .filter(|s| *s > 0)
        .map(std::time::Duration::from_secs)
}

/// `DELETE /v1/plans/{id}` -> 204.
pub async fn delete_plan(State(st): State<AppState>, Path(id): Path<String>) -> Result<Response> {
    st.plans
        .delete(&id)
        .await
        .map_err(|e| ApiError::from_service(&e, D))?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `GET /v1/triage_tool/{id}`: which constraint removed which candidate, per demand.
pub async fn triage(State(st): State<AppState>, Path(id): Path<String>) -> Result<Response> {
    let p = find(&st, &id).await?;
    let triage = p
        .outcome
        .as_ref()
        .and_then(|o| o.get("triage"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    Ok(Json(json!({"plan_id": p.id, "plan_name": p.name, "status": p.status.as_str(), "message": p.message, "triage": triage})).into_response())
}

#[cfg(test)]
mod tests;
