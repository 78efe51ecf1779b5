//! `capability` / `capacity` (Heat): the flavors a stack's servers use, and their sizes.

use berth_doc::Value;
use berth_inventory::{Candidate, Flavor};
use berth_template::HeatProps;

use crate::ConstraintError;

/// The flavors named by the `OS::Nova::Server` resources of a Heat stack (one entry per
/// server, in document order; none for a stack without servers), with `get_param` resolved from the environment's
/// `parameters`/`parameter_defaults` or the template's parameter defaults.
pub fn stack_flavors(props: &HeatProps, origin: &str) -> Result<Vec<String>, ConstraintError> {
    let unsupported = |reason: String| ConstraintError::Unsupported {
        origin: origin.to_owned(),
        reason,
    };
    let text = props.template.trim();
    if !text.contains('\n') && text.contains("://") {
        return Err(unsupported(format!(
            "Heat template `{text}` is a URI; expected the stack text (use get_file)"
        )));
    }
    let doc = berth_doc::parse(text)
        .map_err(|d| unsupported(format!("Heat template does not parse: {d}")))?;
    let env = match props.environment.as_deref().map(str::trim) {
        Some(e) if !e.contains('\n') && e.contains("://") => {
            return Err(unsupported(format!(
                "Heat environment `{e}` is a URI; expected its text (use get_file)"
            )));
        }
        Some(e) => Some(
            berth_doc::parse(e)
                .map_err(|d| unsupported(format!("Heat environment does not parse: {d}")))?,
        ),
        None => None,
    };
    let param = |name: &str| -> Option<String> {
        let from_env = env.as_ref().and_then(|e| {
            let m = e.as_map()?;
            ["parameters", "parameter_defaults"].iter().find_map(|k| {
                m.get(k)
                    .and_then(Value::as_map)
                    .and_then(|p| p.get(name))
                    .and_then(Value::scalar_text)
            })
        });
        from_env.or_else(|| {
            doc.as_map()?
                .get("parameters")?
                .as_map()?
                .get(name)?
                .as_map()?
                .get("default")?
                .scalar_text()
        })
    };
    let mut out = Vec::new();
    let resources = doc
        .as_map()
        .and_then(|m| m.get("resources"))
        .and_then(Value::as_map);
    for (key, r) in resources
        .map(|m| m.iter().collect::<Vec<_>>())
        .unwrap_or_default()
    {
        let Some(rm) = r.as_map() else { continue };
        let ty = rm.get("type").and_then(Value::as_str);
        // A misspelt server would be left out of the stack's needs.
        if let Some(t) = ty.filter(|t| !berth_heat::RESOURCE_TYPES.contains(t))
            && let Some(near) = berth_doc::closest(t, berth_heat::RESOURCE_TYPES.iter().copied())
        {
            return Err(unsupported(format!(
                "resource `{}` of the Heat stack has unknown type `{t}`; did you mean `{near}`?",
                key.name
            )));
        }
        if ty != Some("OS::Nova::Server") {
            continue;
        }
        let flavor = rm
            .get("properties")
            .and_then(Value::as_map)
            .and_then(|p| p.get("flavor"));
        let name = match flavor {
            Some(v) if v.as_str().is_some() => v.scalar_text(),
            Some(v) => v
                .as_map()
                .and_then(|m| m.get("get_param"))
                .and_then(Value::as_str)
                .and_then(param),
            None => None,
        };
        match name {
            Some(n) => out.push(n),
            None => {
                return Err(unsupported(format!(
                    "server `{}` has no flavor that can be resolved",
                    key.name
                )));
            }
        }
    }
    // An empty stack is a valid stack: it needs nothing, so it fits every candidate (the
    // template loader warns about it).
    Ok(out)
}

/// The candidate's flavor with this name or id.
pub fn find_flavor<'c>(c: &'c Candidate, name: &str) -> Option<&'c Flavor> {
    c.flavors.iter().find(|f| f.name == name || f.id == name)
}

/// vCPUs and MiB of memory of a flavor, from its `basicCapabilities` read through the
/// dimension registry ([`Flavor::size`]).
pub fn flavor_size(f: &Flavor) -> (i64, i64) {
    let size = f.size();
    let get = |d: &str| {
        size.get(d)
            .map_or(0, |n| i64::try_from(*n).unwrap_or(i64::MAX))
    };
    (get("vcpu"), get("ram_mib"))
}

/// Whether the candidate offers every flavor and, for `capacity`, has room for all servers
/// (summed vCPUs and memory against its `vcpu` and `ram_mib` capacity).
pub fn admits(c: &Candidate, flavors: &[String], check_capacity: bool) -> bool {
    let mut need = (0i64, 0i64);
    for name in flavors {
        let Some(f) = find_flavor(c, name) else {
            return false;
        };
        let (v, m) = flavor_size(f);
        need = (need.0.saturating_add(v), need.1.saturating_add(m));
    }
    if !check_capacity {
        return true;
    }
    let cap = |k: &str| c.capacity.get(k).copied().unwrap_or(0);
    need.0 <= cap("vcpu") && need.1 <= cap("ram_mib")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flavors_from_servers_and_parameters() {
        let props = HeatProps {
            specification: "heat".into(),
            template: "heat_template_version: 2016-10-14\nparameters:\n  f: {type: string, default: m1.small}\nresources:\n  a: {type: OS::Nova::Server, properties: {flavor: m1.large}}\n  b: {type: OS::Nova::Server, properties: {flavor: {get_param: f}}}\n  n: {type: OS::Neutron::Net}\n".into(),
            environment: Some("parameters:\n  f: m1.xlarge\n".into()),
        };
        assert_eq!(
            stack_flavors(&props, "cap").unwrap(),
            vec!["m1.large".to_owned(), "m1.xlarge".to_owned()]
        );
        let url = HeatProps {
            template: "http://x/stack.yaml".into(),
            environment: None,
            ..props
        };
        assert!(
            stack_flavors(&url, "cap")
                .unwrap_err()
                .to_string()
                .contains("is a URI")
        );
    }

    #[test]
    fn an_empty_stack_needs_nothing_and_a_misspelt_server_is_named() {
        let stack = |template: &str| HeatProps {
            specification: "heat".into(),
            template: template.into(),
            environment: None,
        };
        let empty = stack_flavors(
            &stack("heat_template_version: 2016-10-14\nresources: {}\n"),
            "cap",
        );
        assert_eq!(empty.unwrap(), Vec::<String>::new());
        let c = Candidate::new("c", berth_inventory::InventoryType::Cloud);
        assert!(admits(&c, &[], true));
        let err = stack_flavors(
            &stack("resources:\n  s: {type: OS::Nova::Servr, properties: {flavor: m1.small}}\n"),
            "cap",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("resource `s` of the Heat stack has unknown type `OS::Nova::Servr`; did you mean `OS::Nova::Server`?"),
            "{err}"
        );
    }
}
