//! Admin routes (admin credentials only): the inventory's reload and status. Answers are
//! Berth's own dialect (problem+json errors); pools are named `<zone>/<provider>`, records
//! `r4`/`a2` (qualified by partition), dimensions by their canonical names.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use berth_calendar::{Amounts, RecordRef};
use berth_service::inventory::record_id;
use berth_service::{InventoryDiff, ReconcileRecord, ServiceError, Trigger, qualify};
use serde::Serialize;
use utoipa::ToSchema;

use crate::AppState;
use crate::error::{ApiError, DiagnosticBody, Dialect};

/// A dimension's capacity before and after.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DimensionChangeView {
    /// Declared before (0: absent).
    pub before: u64,
    /// Declared now (0: absent).
    pub after: u64,
}

/// A pool the reconcile added.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct PoolAddedView {
    /// `<zone>/<provider>`.
    pub pool_id: String,
    /// Its partition, in a partitioned calendar.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Its capacity by dimension.
    pub capacity: BTreeMap<String, u64>,
    /// Records at risk in it, as `decrease-capacity` lists them (`r4`, `a2`).
    pub at_risk: Vec<String>,
}

/// A pool whose capacity changed.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct PoolChangedView {
    /// `<zone>/<provider>`.
    pub pool_id: String,
    /// Its partition, in a partitioned calendar.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Every dimension that changed.
    pub dimensions: BTreeMap<String, DimensionChangeView>,
    /// Records put at risk, as `decrease-capacity` lists them (`r4`, `a2`).
    pub at_risk: Vec<String>,
}

/// A pool retired because its candidate is gone.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct PoolRemovedView {
    /// `<zone>/<provider>`.
    pub pool_id: String,
    /// Its partition, in a partitioned calendar.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// The capacity it had.
    pub capacity: BTreeMap<String, u64>,
    /// Its live reservations (`r4`).
    pub reservations: Vec<String>,
    /// Records put at risk, as `decrease-capacity` lists them (`r4`, `a2`).
    pub at_risk: Vec<String>,
}

/// What a reconcile changed in the calendar.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InventoryDiffView {
    /// The provider of the pools reconciled (`inventory`).
    pub provider: String,
    /// Pools created, or retired ones selling again.
    pub added: Vec<PoolAddedView>,
    /// Pools whose capacity changed.
    pub changed: Vec<PoolChangedView>,
    /// Pools retired: their candidate is gone.
    pub removed: Vec<PoolRemovedView>,
    /// Pools that already matched.
    pub unchanged: usize,
}

/// One reconcile of the inventory.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ReconcileView {
    /// When it finished (RFC 3339).
    pub at: String,
    /// Why it ran: `start`, `signal` (SIGHUP), `request` (this route), `refresh`.
    pub trigger: String,
    /// Where the inventory was read (`file /etc/berth/inventory.yaml`).
    pub source: String,
    /// A fingerprint of the content (equal contents, equal fingerprints).
    pub fingerprint: String,
    /// Its candidates.
    pub candidates: usize,
    /// Warnings found while loading it.
    pub warnings: Vec<String>,
    /// False when `seed_capacity` is off: the inventory serves plans and the calendar is not
    /// touched.
    pub reconciled: bool,
    /// What changed.
    pub diff: InventoryDiffView,
}

/// A reload that was refused: nothing changed.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FailedReloadView {
    /// When (RFC 3339).
    pub at: String,
    /// Why it ran.
    pub trigger: String,
    /// Why it was refused.
    pub error: String,
    /// Every problem found, located.
    pub diagnostics: Vec<DiagnosticBody>,
}

/// The inventory served and how the calendar stands against it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InventoryStatusView {
    /// Where the inventory is read.
    pub source: String,
    /// The reconcile of the inventory served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last: Option<ReconcileView>,
    /// A reload refused since (the inventory served is older than the source).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<FailedReloadView>,
    /// What a reconcile of the inventory served would change now (empty: the calendar
    /// matches it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift: Option<InventoryDiffView>,
}

fn amounts(a: &Amounts) -> BTreeMap<String, u64> {
    a.iter().map(|(d, v)| (d.to_string(), *v)).collect()
}

fn ids(partition: Option<&str>, recs: &[RecordRef]) -> Vec<String> {
    recs.iter().map(|r| record_id(partition, *r)).collect()
}

/// The wire form of a diff.
pub fn diff_view(d: &InventoryDiff) -> InventoryDiffView {
    InventoryDiffView {
        provider: d.provider.clone(),
        added: d
            .added
            .iter()
            .map(|p| PoolAddedView {
                pool_id: p.pool.to_string(),
                partition: p.partition.clone(),
                capacity: amounts(&p.capacity),
                at_risk: ids(p.partition.as_deref(), &p.at_risk),
            })
            .collect(),
        changed: d
            .changed
            .iter()
            .map(|p| PoolChangedView {
                pool_id: p.pool.to_string(),
                partition: p.partition.clone(),
                dimensions: p
                    .dimensions
                    .iter()
                    .map(|(k, c)| {
                        let v = DimensionChangeView {
                            before: c.before,
                            after: c.after,
                        };
                        (k.to_string(), v)
                    })
                    .collect(),
                at_risk: ids(p.partition.as_deref(), &p.at_risk),
            })
            .collect(),
        removed: d
            .removed
            .iter()
            .map(|p| PoolRemovedView {
                pool_id: p.pool.to_string(),
                partition: p.partition.clone(),
                capacity: amounts(&p.capacity),
                reservations: p
                    .reservations
                    .iter()
                    .map(|id| qualify(p.partition.as_deref(), id))
                    .collect(),
                at_risk: ids(p.partition.as_deref(), &p.at_risk),
            })
            .collect(),
        unchanged: d.unchanged,
    }
}

/// The wire form of a reconcile.
pub fn reconcile_view(r: &ReconcileRecord) -> ReconcileView {
    ReconcileView {
        at: r.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        trigger: r.trigger.as_str().to_owned(),
        source: r.source.clone(),
        fingerprint: r.fingerprint.clone(),
        candidates: r.candidates,
        warnings: r.warnings.clone(),
        reconciled: r.reconciled,
        diff: diff_view(&r.diff),
    }
}

fn diagnostics(e: &ServiceError) -> Vec<DiagnosticBody> {
    match e {
        ServiceError::InvalidInventory { diagnostics, .. } => diagnostics
            .iter()
            .map(|d| DiagnosticBody {
                path: d.path.clone(),
                line: d.line,
                column: d.column,
                message: d.message.clone(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn no_reconciler() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "this daemon serves no reloadable inventory",
        Dialect::Problem,
    )
}

/// `POST /admin/inventory/reload`: reads the inventory again and reconciles the calendar with
/// it; an inventory with errors is a 400 naming each at `file:line:column`, and changes
/// nothing.
pub async fn reload_inventory(State(st): State<AppState>) -> Response {
    let Some(rec) = st.inventory.clone() else {
        return no_reconciler().into_response();
    };
    match rec.reload(Trigger::Request).await {
        Ok(r) => (StatusCode::OK, axum::Json(reconcile_view(&r))).into_response(),
        Err(e) => {
            let mut err = ApiError::from_service(&e, Dialect::Problem);
            err.diagnostics = diagnostics(&e);
            err.into_response()
        }
    }
}

/// `GET /admin/inventory`: the inventory served, its last reconcile, a reload refused since,
/// and the drift now.
pub async fn inventory_status(State(st): State<AppState>) -> Response {
    let Some(rec) = st.inventory.clone() else {
        return no_reconciler().into_response();
    };
    let s = rec.status().await;
    let drift = match &s.drift {
        Ok(d) => Some(diff_view(d)),
        Err(e) => {
            tracing::warn!(error = %e, "cannot compute the inventory drift");
            None
        }
    };
    let view = InventoryStatusView {
        source: s.source,
        last: s.last.as_ref().map(reconcile_view),
        failed: s.failed.as_ref().map(|f| FailedReloadView {
            at: f.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            trigger: f.trigger.as_str().to_owned(),
            error: f.error.to_string(),
            diagnostics: diagnostics(&f.error),
        }),
        drift,
    };
    (StatusCode::OK, axum::Json(view)).into_response()
}

#[cfg(test)]
mod tests;
