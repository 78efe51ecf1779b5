//! The OpenAPI 3.1 document, built from the wire types' schemas (utoipa) and the route table.

use utoipa::PartialSchema;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::{
    ComponentsBuilder, ContentBuilder, InfoBuilder, OpenApiBuilder, PathsBuilder, Ref,
    ResponseBuilder,
};

use crate::admin::{
    DimensionChangeView, FailedReloadView, InventoryDiffView, InventoryStatusView, PoolAddedView,
    PoolChangedView, PoolRemovedView, ReconcileView,
};
use crate::cluster::{ClusterView, PartitionHolderView};
use crate::error::{
    DiagnosticBody, HasError, HasErrorKind, HasErrorMessage, Problem, PromiseError,
};
use crate::has::PlanBody;
use crate::promise::{
    CapacityBody, CapacitySubscribeBody, ElementsBody, FilterBody, FlavorBody, InstanceBody,
    ProviderBody, QueryBody, ReservationBody, ReservationSubscribeBody, WindowBody,
};
use crate::ui::{
    AllocationView, CalendarView, CapacityChangeView, LevelsView, PlaceBody, PlaceView, PlanView,
    PoolView, ReservationView, SessionView, SiteView, StepView,
};

/// (method, path, operation id, summary, request schema, success status)
type Route = (
    HttpMethod,
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static str,
);

/// The error bodies a route answers: (content type, schema), by its dialect.
fn error_bodies(path: &str) -> &'static [(&'static str, &'static str)] {
    match path {
        "/healthz" | "/readyz" | "/metrics" | "/openapi.json" => {
            &[("application/problem+json", "Problem")]
        }
        p if p.starts_with("/ui/") || p.starts_with("/admin/") => {
            &[("application/problem+json", "Problem")]
        }
        _ if crate::Dialect::of_path(path) == crate::Dialect::Has => {
            &[("application/json", "HasError")]
        }
        // Promise routes; refused credentials are a problem before their handler runs.
        _ => &[
            ("application/json", "PromiseError"),
            ("application/problem+json", "Problem"),
        ],
    }
}

const ROUTES: &[Route] = &[
    (
        HttpMethod::Get,
        "/",
        "versions",
        "API versions (HAS)",
        None,
        "200",
    ),
    (
        HttpMethod::Get,
        "/v1",
        "version_v1",
        "Version 1 descriptor (HAS)",
        None,
        "200",
    ),
    (
        HttpMethod::Get,
        "/v1/plans/healthcheck",
        "healthcheck",
        "Health probe answered as a solved plan, open without credentials (HAS)",
        None,
        "200",
    ),
    (
        HttpMethod::Options,
        "/v1/plans",
        "options_plans",
        "Allowed methods: 204 with `Allow: GET,POST` (HAS)",
        None,
        "204",
    ),
    (
        HttpMethod::Options,
        "/v1/plans/{id}",
        "options_plan",
        "Allowed methods of a plan: 204 with `Allow: GET,DELETE` (HAS)",
        None,
        "204",
    ),
    (
        HttpMethod::Post,
        "/v1/plans",
        "create_plan",
        "Accept a homing plan (HAS)",
        Some("PlanBody"),
        "201",
    ),
    (
        HttpMethod::Get,
        "/v1/plans",
        "list_plans",
        "Every plan (HAS)",
        None,
        "200",
    ),
    (
        HttpMethod::Get,
        "/v1/plans/{id}",
        "get_plan",
        "One plan with its recommendations (HAS). With `Prefer: wait=N` the answer comes once the \
         plan is final or after N seconds (capped below the request timeout), with \
         `Preference-Applied: wait=N`",
        None,
        "200",
    ),
    (
        HttpMethod::Delete,
        "/v1/plans/{id}",
        "delete_plan",
        "Delete a plan (HAS)",
        None,
        "204",
    ),
    (
        HttpMethod::Get,
        "/v1/triage_tool/{id}",
        "triage",
        "Which constraint removed which candidate",
        None,
        "200",
    ),
    (
        HttpMethod::Get,
        "/v1/cluster",
        "cluster_map",
        "The partition map: each partition's lease holder, its URL and fencing token (send a \
         write to its partition's holder; any daemon forwards it otherwise)",
        None,
        "200",
    ),
    (
        HttpMethod::Post,
        "/add-provider",
        "add_provider",
        "Register a resource provider (Promise)",
        Some("ProviderBody"),
        "200",
    ),
    (
        HttpMethod::Post,
        "/create-reservation",
        "create_reservation",
        "Reserve capacity (Promise)",
        Some("ReservationBody"),
        "200",
    ),
    (
        HttpMethod::Post,
        "/update-reservation",
        "update_reservation",
        "Change a reservation (Promise)",
        Some("ReservationBody"),
        "200",
    ),
    (
        HttpMethod::Post,
        "/cancel-reservation",
        "cancel_reservation",
        "Cancel a reservation (Promise)",
        None,
        "200",
    ),
    (
        HttpMethod::Post,
        "/query-reservation",
        "query_reservation",
        "Find reservations (Promise)",
        Some("QueryBody"),
        "200",
    ),
    (
        HttpMethod::Post,
        "/create-instance",
        "create_instance",
        "Allocate an instance (Promise)",
        Some("InstanceBody"),
        "200",
    ),
    (
        HttpMethod::Post,
        "/destroy-instance",
        "destroy_instance",
        "Release an instance (Promise)",
        None,
        "200",
    ),
    (
        HttpMethod::Post,
        "/increase-capacity",
        "increase_capacity",
        "Add capacity to a pool (Promise)",
        Some("CapacityBody"),
        "200",
    ),
    (
        HttpMethod::Post,
        "/decrease-capacity",
        "decrease_capacity",
        "Remove capacity from a pool (Promise)",
        Some("CapacityBody"),
        "200",
    ),
    (
        HttpMethod::Post,
        "/query-capacity",
        "query_capacity",
        "Capacity per pool (Promise)",
        Some("QueryBody"),
        "200",
    ),
    (
        HttpMethod::Post,
        "/capacity/{kind}/subscribe",
        "capacity_subscribe",
        "Threshold webhook",
        Some("CapacitySubscribeBody"),
        "201",
    ),
    (
        HttpMethod::Delete,
        "/capacity/{kind}/subscribe/{id}",
        "capacity_unsubscribe",
        "Remove a threshold webhook",
        None,
        "200",
    ),
    (
        HttpMethod::Post,
        "/reservation/subscribe",
        "reservation_subscribe",
        "Reservation events webhook",
        Some("ReservationSubscribeBody"),
        "201",
    ),
    (
        HttpMethod::Delete,
        "/reservation/subscribe/{id}",
        "reservation_unsubscribe",
        "Remove a reservation webhook",
        None,
        "200",
    ),
    (
        HttpMethod::Get,
        "/admin/inventory",
        "admin_inventory",
        "Admin: the inventory served, its last reconcile with the calendar, a reload refused \
         since, and what a reconcile would change now",
        None,
        "200",
    ),
    (
        HttpMethod::Post,
        "/admin/inventory/reload",
        "admin_inventory_reload",
        "Admin: read the inventory again and reconcile the calendar with it (pools added, \
         capacities changed with the records put at risk, pools retired with their \
         reservations); an invalid inventory is a 400 naming each problem at \
         file:line:column, and changes nothing",
        None,
        "200",
    ),
    (
        HttpMethod::Get,
        "/healthz",
        "healthz",
        "Liveness",
        None,
        "200",
    ),
    (
        HttpMethod::Get,
        "/readyz",
        "readyz",
        "Readiness (the store answers)",
        None,
        "200",
    ),
    (
        HttpMethod::Get,
        "/metrics",
        "metrics",
        "Prometheus metrics",
        None,
        "200",
    ),
    (
        HttpMethod::Get,
        "/openapi.json",
        "openapi",
        "This document",
        None,
        "200",
    ),
    (
        HttpMethod::Get,
        "/ui/api/calendar",
        "console_calendar",
        "Console: pools with utilization timelines, reservations, allocations, capacity changes \
         and preemptions over `?from=&to=` (RFC 3339; default 6 h ago to 2 days ahead)",
        None,
        "200",
    ),
    (
        HttpMethod::Get,
        "/ui/api/plans",
        "console_plans",
        "Console: the newest 500 plans with their outcome (recommendations, objective, proof, \
         triage), newest first",
        None,
        "200",
    ),
    (
        HttpMethod::Get,
        "/ui/api/session",
        "console_session",
        "Console: what the caller's credentials allow (`read`, `write` or `admin`)",
        None,
        "200",
    ),
    (
        HttpMethod::Get,
        "/ui/api/events",
        "console_events",
        "Console: server-sent events `ready`, `calendar` {kind, seq}, `plan` {kind, id, \
         status}, `lagged` {missed}",
        None,
        "200",
    ),
    (
        HttpMethod::Get,
        "/ui/api/place",
        "console_place_site",
        "Console: the datacenter topology placements go to, with a sample Heat template",
        None,
        "200",
    ),
    (
        HttpMethod::Post,
        "/ui/api/place",
        "console_place",
        "Console: place a Heat template on the topology and draw the racks (nothing is stored; \
         read-only credentials may call it)",
        Some("PlaceBody"),
        "200",
    ),
];

/// The success body of an operation, when it is JSON with a schema: (content type, schema,
/// is an array).
fn success_body(id: &str) -> Option<(&'static str, &'static str, bool)> {
    Some(match id {
        "console_calendar" => ("application/json", "CalendarView", false),
        "console_plans" => ("application/json", "PlanView", true),
        "console_session" => ("application/json", "SessionView", false),
        "console_place_site" => ("application/json", "SiteView", false),
        "console_place" => ("application/json", "PlaceView", false),
        "admin_inventory" => ("application/json", "InventoryStatusView", false),
        "cluster_map" => ("application/json", "ClusterView", false),
        "admin_inventory_reload" => ("application/json", "ReconcileView", false),
        _ => return None,
    })
}

/// The OpenAPI document as pretty JSON (what `docs/openapi.json` holds).
pub fn openapi_json() -> String {
    let components = ComponentsBuilder::new()
        .schema("PlanBody", PlanBody::schema())
        .schema("ProviderBody", ProviderBody::schema())
        .schema("ReservationBody", ReservationBody::schema())
        .schema("QueryBody", QueryBody::schema())
        .schema("WindowBody", WindowBody::schema())
        .schema("ElementsBody", ElementsBody::schema())
        .schema("FlavorBody", FlavorBody::schema())
        .schema("FilterBody", FilterBody::schema())
        .schema("InstanceBody", InstanceBody::schema())
        .schema("CapacityBody", CapacityBody::schema())
        .schema("CapacitySubscribeBody", CapacitySubscribeBody::schema())
        .schema(
            "ReservationSubscribeBody",
            ReservationSubscribeBody::schema(),
        )
        .schema("HasError", HasError::schema())
        .schema("HasErrorMessage", HasErrorMessage::schema())
        .schema("HasErrorKind", HasErrorKind::schema())
        .schema("Problem", Problem::schema())
        .schema("PromiseError", PromiseError::schema())
        .schema("DiagnosticBody", DiagnosticBody::schema())
        .schema("CalendarView", CalendarView::schema())
        .schema("PoolView", PoolView::schema())
        .schema("StepView", StepView::schema())
        .schema("LevelsView", LevelsView::schema())
        .schema("ReservationView", ReservationView::schema())
        .schema("AllocationView", AllocationView::schema())
        .schema("CapacityChangeView", CapacityChangeView::schema())
        .schema("PlanView", PlanView::schema())
        .schema("SessionView", SessionView::schema())
        .schema("SiteView", SiteView::schema())
        .schema("PlaceBody", PlaceBody::schema())
        .schema("PlaceView", PlaceView::schema())
        .schema("InventoryStatusView", InventoryStatusView::schema())
        .schema("ReconcileView", ReconcileView::schema())
        .schema("FailedReloadView", FailedReloadView::schema())
        .schema("InventoryDiffView", InventoryDiffView::schema())
        .schema("PoolAddedView", PoolAddedView::schema())
        .schema("PoolChangedView", PoolChangedView::schema())
        .schema("PoolRemovedView", PoolRemovedView::schema())
        .schema("DimensionChangeView", DimensionChangeView::schema())
        .schema("ClusterView", ClusterView::schema())
        .schema("PartitionHolderView", PartitionHolderView::schema())
        .build();
    let mut items: std::collections::BTreeMap<
        &str,
        Vec<(HttpMethod, utoipa::openapi::path::Operation)>,
    > = Default::default();
    for (method, path, id, summary, body, status) in ROUTES {
        let mut error = ResponseBuilder::new().description(
            "error: ONAP HAS shaped on HAS routes, Promise shaped on Promise routes, \
             RFC 9457 problem+json elsewhere",
        );
        for (ctype, schema) in error_bodies(path) {
            error = error.content(
                *ctype,
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name(*schema)))
                    .build(),
            );
        }
        let mut success = ResponseBuilder::new().description("success");
        if let Some((ctype, schema, array)) = success_body(id) {
            let r = Ref::from_schema_name(schema);
            let content = if array {
                ContentBuilder::new()
                    .schema(Some(utoipa::openapi::schema::ArrayBuilder::new().items(r)))
            } else {
                ContentBuilder::new().schema(Some(r))
            };
            success = success.content(ctype, content.build());
        }
        if *id == "console_events" {
            success = success.content("text/event-stream", ContentBuilder::new().build());
        }
        let mut op = OperationBuilder::new()
            .operation_id(Some(*id))
            .summary(Some(*summary))
            .response(*status, success.build())
            .response("default", error.build());
        if let Some(schema) = body {
            let content = ContentBuilder::new()
                .schema(Some(Ref::from_schema_name(*schema)))
                .build();
            op = op.request_body(Some(
                RequestBodyBuilder::new()
                    .content("application/json", content)
                    .build(),
            ));
        }
        items
            .entry(path)
            .or_default()
            .push((method.clone(), op.build()));
    }
    let mut paths = PathsBuilder::new();
    for (path, ops) in items {
        let mut item = PathItem::default();
        for (m, op) in ops {
            match m {
                HttpMethod::Get => item.get = Some(op),
                HttpMethod::Post => item.post = Some(op),
                HttpMethod::Delete => item.delete = Some(op),
                _ => {}
            }
        }
        paths = paths.path(path, item);
    }
    let doc = OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("berthd")
                .version(env!("CARGO_PKG_VERSION"))
                .build(),
        )
        .paths(paths.build())
        .components(Some(components))
        .build();
    doc.to_pretty_json().unwrap_or_default() + "\n"
}
