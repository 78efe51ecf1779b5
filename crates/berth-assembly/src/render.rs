//! Readable text rendering of a [`Plan`] (what `berth assembly plan` prints).

use std::fmt::{self, Write as _};

use indexmap::IndexMap;

use crate::plan::{Plan, PropertyValue};

fn props(out: &mut String, indent: &str, p: &IndexMap<String, PropertyValue>) -> fmt::Result {
    for (k, v) in p {
        writeln!(out, "{indent}{k} = {v}")?;
    }
    Ok(())
}

fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

impl Plan {
    /// The plan as text: header, properties, prerequisites, components and instances,
    /// relationships, numbered lifecycle, placement demands, promotions, policies, warnings.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) -> fmt::Result {
        writeln!(
            out,
            "assembly {} {} (instance {}, id {})",
            self.assembly, self.version, self.instance.0, self.instance.1
        )?;
        if let Some(d) = &self.description {
            writeln!(out, "  {d}")?;
        }
        writeln!(out, "properties:")?;
        props(out, "  ", &self.properties)?;
        writeln!(out, "prerequisites (must exist before instantiation):")?;
        for p in &self.prerequisites {
            writeln!(out, "  {}: {}", p.name, p.type_ref)?;
            props(out, "    ", &p.properties)?;
        }
        writeln!(out, "components:")?;
        for c in &self.components {
            match &c.cluster {
                Some(cl) => writeln!(
                    out,
                    "  {} ({}) cluster: initial {}, minimum {}, maximum {}, increment {}",
                    c.name,
                    c.type_ref,
                    cl.initial,
                    cl.minimum,
                    cl.maximum
                        .map_or_else(|| "unbounded".to_owned(), |m| m.to_string()),
                    cl.increment
                )?,
                None => writeln!(
                    out,
                    "  {} ({}) quantity {}",
                    c.name,
                    c.type_ref,
                    c.instances.len()
                )?,
            }
            for i in &c.instances {
                writeln!(out, "    {} [{}]", i.name, i.id)?;
                props(out, "      ", &i.properties)?;
            }
        }
        writeln!(out, "relationships:")?;
        for r in &self.relationships {
            let cap = |c: &Option<String>| c.as_ref().map_or_else(String::new, |c| format!(".{c}"));
            writeln!(
                out,
                "  {}: {}{} -> {}{} (source {} {}, target {} {})",
                r.relationship,
                r.source,
                cap(&r.source_capability),
                r.target,
                cap(&r.target_requirement),
                r.source_state.1,
                r.source_state.0,
                r.target_state.1,
                r.target_state.0,
            )?;
            props(out, "    ", &r.properties)?;
            if !r.create.is_empty() {
                writeln!(out, "    create: {}", r.create.join(", "))?;
            }
            if !r.cease.is_empty() {
                writeln!(out, "    cease: {}", r.cease.join(", "))?;
            }
        }
        writeln!(out, "lifecycle:")?;
        for s in &self.lifecycle {
            let after = if s.after.is_empty() {
                String::new()
            } else {
                format!(
                    "  after {}",
                    s.after
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            writeln!(out, "  {:>3}. {}{after}", s.number, s.action)?;
        }
        writeln!(out, "placement:")?;
        for p in &self.placement {
            writeln!(
                out,
                "  {} ({}): deploymentLocation={} resourceManager={}{}",
                p.instance,
                p.type_ref,
                p.deployment_location.as_deref().unwrap_or("-"),
                p.resource_manager.as_deref().unwrap_or("-"),
                if p.pending { " (pending)" } else { "" }
            )?;
        }
        if !self.operations.is_empty() || !self.metrics.is_empty() {
            writeln!(out, "promoted:")?;
            for (k, v) in &self.operations {
                writeln!(out, "  operation {k} -> {v}")?;
            }
            for (k, v) in &self.metrics {
                writeln!(out, "  metric {k} -> {v}")?;
            }
        }
        if !self.policies.is_empty() {
            writeln!(out, "policies:")?;
            for p in &self.policies {
                writeln!(
                    out,
                    "  {}: scale {} on {}.{} (out above {}, in below {}, smoothing {})",
                    p.name,
                    p.target,
                    p.metric_owner,
                    p.metric,
                    num(p.scale_out_threshold),
                    num(p.scale_in_threshold),
                    p.smoothing
                )?;
            }
        }
        if !self.warnings.is_empty() {
            writeln!(out, "warnings:")?;
            for w in &self.warnings {
                writeln!(out, "  {w}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}
