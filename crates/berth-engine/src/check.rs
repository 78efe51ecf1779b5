//! `validate` and `check`: the template problems `plan` would hit whatever the inventory
//! holds, found by running `plan`'s own resolution and lowering against an empty inventory.
//! `berth validate` uses this, so it never calls valid a template `solve` cannot lower.
//! `check_inventory`: what `plan`'s resolution and lowering refuse against a given
//! inventory (an unresolvable `host_name`, an unknown license), and the demands it offers
//! nothing; `inventory_diagnostics`: an inventory's warnings, with its capacity keys no request uses;
//! `request_diagnostics`: a template's request keys no candidate's capacity has.

use berth_constraints::{Environment, lower};
use berth_doc::{Diagnostic, Path, Pos};
use berth_inventory::{Inventory, InventoryProvider, StaticProvider};
use berth_template::{LoadOptions, RawTemplate, Template};

use crate::EngineError;
use crate::resolve::resolve;

/// Every diagnostic of template `text`: the template's own (syntax, schema, references) and,
/// when those pass, every problem resolution and lowering find in the template alone.
pub fn validate(text: &str, opts: &LoadOptions) -> Vec<Diagnostic> {
    match Template::parse_with(text, &opts.limits) {
        Ok(raw) => validate_raw(&raw, opts),
        Err(d) => d,
    }
}

/// [`validate`] for an already-parsed template (e.g. a JSON object from the HTTP API).
pub fn validate_raw(raw: &RawTemplate, opts: &LoadOptions) -> Vec<Diagnostic> {
    let analysis = raw.analyze(opts);
    let mut out = analysis.diagnostics;
    if let Some(t) = &analysis.template {
        out.extend(check(t, Some(raw.document())));
    }
    out
}

/// The problems of a resolved template that no inventory, topology or latency model could
/// fix, as error diagnostics; `doc` (the parsed template) supplies their line:column.
pub fn check(template: &Template, doc: Option<&berth_doc::Value>) -> Vec<Diagnostic> {
    let empty = StaticProvider::new(Inventory::default());
    let res = match resolve(template, &empty) {
        Ok(res) => res,
        Err(EngineError::InvalidInput { problems }) => {
            let path = Path::root().key("demands");
            let pos = position(doc, &["demands"]);
            return problems
                .into_iter()
                .map(|p| Diagnostic::error(&path, pos, p))
                .collect();
        }
        // Anything else depends on the inventory, which validation does not have.
        Err(_) => return Vec::new(),
    };
    let env = Environment {
        provider: &empty,
        controllers: Default::default(),
        topology: None,
        latency: None,
        existing_bonus: 0.0,
    };
    let Err(errors) = lower(template, &res.space, &env) else {
        return Vec::new();
    };
    errors
        .iter()
        .filter(|e| e.is_template_error())
        .map(|e| {
            let origin = e.origin();
            let mut keys: Vec<&str> = if origin == berth_constraints::OBJECTIVE {
                vec!["optimization"]
            } else {
                vec!["constraints", origin]
            };
            if matches!(e, berth_constraints::ConstraintError::BadRequest { .. }) {
                keys.extend(["properties", "request"]);
            }
            let path = keys.iter().fold(Path::root(), |p, k| p.key(*k));
            Diagnostic::error(&path, position(doc, &keys), e.to_string())
        })
        .collect()
}

/// The problems `plan` would refuse `template` for against `provider` before any search,
/// found by running `plan`'s own steps (serving, resolution, lowering): each a diagnostic
/// with the field path and, from `doc`, line:column. Errors of the template alone are
/// [`check`]'s and not repeated; lowering problems that depend on options `plan` takes
/// besides the inventory (topology, latency model) are left out. A requirement whose
/// inventory holds no candidate of its type is a warning: the demand finds no plan.
pub fn check_inventory(
    template: &Template,
    doc: Option<&berth_doc::Value>,
    provider: &dyn InventoryProvider,
) -> Vec<Diagnostic> {
    let at_type = |demand: &str, requirement: usize| {
        let path = Path::root()
            .key("demands")
            .key(demand)
            .index(requirement)
            .key("inventory_type");
        let pos = doc
            .and_then(|d| d.as_map())
            .and_then(|m| m.get("demands"))
            .and_then(|d| d.as_map())
            .and_then(|m| m.get(demand))
            .and_then(|reqs| reqs.as_seq())
            .and_then(|items| items.get(requirement))
            .map_or(Pos::UNKNOWN, |r| {
                r.as_map()
                    .and_then(|m| m.get("inventory_type"))
                    .map_or(r.pos, |v| v.pos)
            });
        (path, pos)
    };
    let unserved = crate::resolve::unserved(template, provider);
    if !unserved.is_empty() {
        return unserved
            .iter()
            .map(|u| {
                let (path, pos) = at_type(&u.demand, u.requirement);
                Diagnostic::error(&path, pos, u.message())
            })
            .collect();
    }
    let Ok(res) = resolve(template, provider) else {
        // Resolution problems are the template's own ([`check`]) or the provider's failure.
        return Vec::new();
    };
    let mut out = Vec::new();
    for (demand, absent) in template.demands.values().zip(&res.absent) {
        for (ri, why) in absent {
            let (path, pos) = at_type(&demand.name, *ri);
            out.push(Diagnostic::warning(
                &path,
                pos,
                format!("{why}, so demand `{}` finds no plan", demand.name),
            ));
        }
    }
    let env = Environment {
        provider,
        controllers: Default::default(),
        topology: None,
        latency: None,
        existing_bonus: 0.0,
    };
    if let Err(errors) = lower(template, &res.space, &env) {
        for e in &errors {
            let (keys, msg): (Vec<&str>, String) = match e {
                berth_constraints::ConstraintError::UnlocatedLocation { location, .. } => {
                    let loc = template.locations.get(location);
                    match (
                        loc.and_then(|l| l.host_name.as_deref()),
                        loc.and_then(|l| l.clli_code.as_deref()),
                    ) {
                        (Some(h), _) => (
                            vec!["locations", location, "host_name"],
                            format!("host_name `{h}` is not a host location of the inventory; {e}"),
                        ),
                        (None, Some(c)) => (
                            vec!["locations", location, "clli_code"],
                            format!("clli_code `{c}` is not a CLLI location of the inventory; {e}"),
                        ),
                        (None, None) => (vec!["locations", location], e.to_string()),
                    }
                }
                berth_constraints::ConstraintError::UnknownLicense { origin, .. } => (
                    vec!["constraints", origin, "properties", "id"],
                    e.to_string(),
                ),
                _ => continue,
            };
            let path = keys.iter().fold(Path::root(), |p, k| p.key(*k));
            out.push(Diagnostic::error(&path, position(doc, &keys), msg));
        }
    }
    out
}

/// The inventory's warnings, and one for each capacity key naming no registered dimension
/// that no request of `templates` uses (with the nearest known or requested name), in
/// document order. `berth validate --inventory` and `berth solve` show them.
pub fn inventory_diagnostics(inventory: &Inventory, templates: &[&Template]) -> Vec<Diagnostic> {
    let used: std::collections::BTreeSet<String> = templates
        .iter()
        .flat_map(|t| berth_constraints::request_dimensions(t))
        .collect();
    let mut out = inventory.warnings.clone();
    out.extend(inventory.capacity_warnings(used.iter().map(String::as_str)));
    out.sort_by_key(|d| (d.line, d.column));
    out
}

/// A warning for each fit request key whose dimension no candidate of `inventory` has: every
/// candidate would be removed for it. `doc` (the parsed template) supplies line:column; the
/// nearest capacity key of the inventory, or registered name, is suggested.
pub fn request_diagnostics(
    template: &Template,
    doc: Option<&berth_doc::Value>,
    inventory: &Inventory,
) -> Vec<Diagnostic> {
    let offered: std::collections::BTreeSet<&str> = inventory
        .candidates
        .values()
        .flat_map(|c| c.capacity.keys().map(String::as_str))
        .collect();
    berth_constraints::request_keys(template)
        .into_iter()
        .filter(|k| !offered.contains(k.dimension.as_str()))
        .map(|k| {
            let names = ["constraints", &k.constraint, "properties", "request", &k.key];
            let path = names.iter().fold(Path::root(), |p, n| p.key(*n));
            let what = if k.dimension == k.key {
                format!("request `{}`", k.key)
            } else {
                format!("request `{}` (dimension `{}`)", k.key, k.dimension)
            };
            let hint = match berth_units::dimension::by_name(&k.dimension) {
                Some(_) => String::new(),
                None => berth_units::dimension::suggest(&k.key, offered.iter().copied())
                    .map_or_else(String::new, |s| format!("; did you mean `{s}`?")),
            };
            // At the key itself (`position` finds values).
            let at = doc
                .and_then(|d| {
                    names[..4]
                        .iter()
                        .try_fold(d, |v, n| v.as_map().and_then(|m| m.get(n)))
                })
                .and_then(berth_doc::Value::as_map)
                .and_then(|m| m.entry(&k.key))
                .map_or_else(|| position(doc, &names), |(key, _)| key.pos);
            Diagnostic::warning(
                &path,
                at,
                format!("{what} names a capacity no candidate of the inventory has, so no candidate fits{hint}"),
            )
        })
        .collect()
}

/// The position of the deepest node of `keys` found in `doc`.
fn position(doc: Option<&berth_doc::Value>, keys: &[&str]) -> Pos {
    let mut pos = Pos::UNKNOWN;
    let mut at = doc;
    for k in keys {
        match at.and_then(berth_doc::Value::as_map).and_then(|m| m.get(k)) {
            Some(v) => {
                pos = v.pos;
                at = Some(v);
            }
            None => break,
        }
    }
    pos
}
