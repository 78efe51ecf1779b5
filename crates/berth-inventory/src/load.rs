//! Loading an inventory document (YAML or JSON) with every problem reported at once: the
//! document's types, its top-level sections and the readers of scalars. The candidates, their
//! capacity and flavors, and the locations are read in files of their own.

mod candidates;
mod capacity;
mod locations;

use std::collections::BTreeMap;

use berth_doc::{Diagnostic, Diagnostics, Kind, Map, Path, Pos, Value};
use berth_units::dimension;
use indexmap::IndexMap;

use crate::error::InventoryError;
use crate::model::{Candidate, CandidateId, Coordinates, LicenseInfo};

/// A loaded inventory document: candidates, named locations, licenses and an optional
/// topology (loaded by `berth-topology`).
///
/// Invariants: candidate ids are unique; every coordinate is in range; capacities and
/// license counts are non-negative; CLLI codes are 8 letters or digits.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Inventory {
    /// Candidates by id, in document order.
    pub candidates: IndexMap<CandidateId, Candidate>,
    /// Host name -> coordinates.
    pub host_locations: BTreeMap<String, Coordinates>,
    /// CLLI code -> coordinates.
    pub clli_locations: BTreeMap<String, Coordinates>,
    /// Software id -> availability.
    pub licenses: BTreeMap<String, LicenseInfo>,
    /// The inline topology (a `berth-topology` document), loaded and checked.
    pub topology: Option<berth_topology::Topology>,
    /// Path of a topology document, relative to the inventory file; the caller reads it.
    pub topology_file: Option<String>,
    /// Warnings found while loading (the document had no errors).
    pub warnings: Vec<Diagnostic>,
    /// Capacity keys that name no registered dimension, where they stand (candidates carry
    /// them as written); [`Inventory::capacity_warnings`] reports those no request uses.
    pub custom_capacity: Vec<CapacityKey>,
}

/// A capacity key naming no registered dimension, and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapacityKey {
    /// The key as written (also the dimension's name).
    pub key: String,
    /// Its field path (`candidates[2].capacity.vcpsu`).
    pub path: Path,
    /// Where the key stands.
    pub pos: Pos,
}

const TOP_KEYS: &[&str] = &[
    "candidates",
    "host_locations",
    "clli_locations",
    "licenses",
    "topology",
    "topology_file",
];

impl Inventory {
    /// Parses YAML or JSON text.
    pub fn parse(text: &str) -> Result<Self, InventoryError> {
        let doc = berth_doc::parse(text).map_err(|d| InventoryError::Invalid {
            diagnostics: vec![d],
        })?;
        Self::from_value(&doc)
    }

    /// Reads an already parsed document; all errors and warnings at once.
    pub fn from_value(doc: &Value) -> Result<Self, InventoryError> {
        let mut cx = Cx {
            diags: Diagnostics::new(),
            node_refs: Vec::new(),
            custom_capacity: Vec::new(),
        };
        let inv = cx.inventory(doc);
        let diagnostics = cx.diags;
        if diagnostics.has_errors() {
            return Err(InventoryError::Invalid {
                diagnostics: diagnostics.into_vec(),
            });
        }
        Ok(Inventory {
            warnings: diagnostics.into_vec(),
            custom_capacity: cx.custom_capacity,
            ..inv
        })
    }

    /// A warning for each capacity key that names no registered dimension and that no
    /// request uses (`used`: the dimensions of the requests, canonical), with what it most
    /// likely meant: `capacity `vcpsu` is used by no request; did you mean `vcpu`?`. One per
    /// key, at its first place, counting the other candidates that name it too.
    pub fn capacity_warnings<'a>(
        &self,
        used: impl IntoIterator<Item = &'a str> + Clone,
    ) -> Vec<Diagnostic> {
        let mut first: Vec<(&CapacityKey, usize)> = Vec::new();
        for k in &self.custom_capacity {
            match first.iter_mut().find(|(f, _)| f.key == k.key) {
                Some((_, n)) => *n += 1,
                None => first.push((k, 0)),
            }
        }
        first
            .into_iter()
            .filter(|(k, _)| !used.clone().into_iter().any(|u| u == k.key))
            .map(|(k, more)| {
                let hint = match dimension::suggest(&k.key, used.clone()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!(
                        "it is no known dimension (known: {})",
                        dimension::DIMENSIONS
                            .iter()
                            .map(|d| d.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                let also = match more {
                    0 => String::new(),
                    n => format!(" (and on {n} more candidate(s))"),
                };
                Diagnostic::warning(
                    &k.path,
                    k.pos,
                    format!("capacity `{}`{also} is used by no request; {hint}", k.key),
                )
            })
            .collect()
    }

    /// Candidates by id.
    pub fn candidate(&self, id: &str) -> Option<&Candidate> {
        self.candidates.get(id)
    }
}

/// Whether `code` has the shape of a CLLI code: 8 ASCII letters or digits.
pub fn is_clli(code: &str) -> bool {
    code.len() == 8 && code.bytes().all(|b| b.is_ascii_alphanumeric())
}

struct Cx {
    diags: Diagnostics,
    /// Capacity keys naming no registered dimension.
    custom_capacity: Vec<CapacityKey>,
    /// Every candidate `topology_node`, checked against the inline topology once it is loaded.
    node_refs: Vec<(Path, Pos, String)>,
}

impl Cx {
    fn error(&mut self, path: &Path, pos: Pos, msg: impl Into<String>) {
        self.diags.error(path, pos, msg);
    }

    fn map<'v>(&mut self, v: &'v Value, path: &Path, what: &str) -> Option<&'v Map> {
        let m = v.as_map();
        if m.is_none() {
            self.error(
                path,
                v.pos,
                format!("expected {what} (a mapping), found {}", v.type_name()),
            );
        }
        m
    }

    fn check_keys(&mut self, m: &Map, path: &Path, allowed: &[&str]) {
        for (k, _) in m.iter() {
            if allowed.contains(&k.name.as_str()) {
                continue;
            }
            let msg = match berth_doc::closest(&k.name, allowed.iter().copied()) {
                Some(near) => format!("unknown key `{}`; did you mean `{near}`?", k.name),
                None => format!(
                    "unknown key `{}`; expected one of {}",
                    k.name,
                    allowed.join(", ")
                ),
            };
            self.error(&path.key(k.name.as_str()), k.pos, msg);
        }
    }

    /// A scalar as text (`1.1` -> "1.1"); null counts as absent.
    fn text(&mut self, v: &Value, path: &Path) -> Option<String> {
        match &v.kind {
            Kind::Null => None,
            Kind::Seq(_) | Kind::Map(_) => {
                self.error(
                    path,
                    v.pos,
                    format!("expected a string, found {}", v.type_name()),
                );
                None
            }
            _ => v.scalar_text(),
        }
    }

    fn opt_text(&mut self, m: &Map, key: &str, path: &Path) -> Option<String> {
        let v = m.get(key)?;
        self.text(v, &path.key(key))
    }

    /// A number; numeric strings are accepted (seed 000 quotes its numbers).
    fn number(&mut self, v: &Value, path: &Path) -> Option<f64> {
        let n = match &v.kind {
            Kind::Null => return None,
            Kind::Str(s) => s.trim().parse::<f64>().ok(),
            _ => v.as_f64(),
        };
        match n {
            Some(x) if x.is_finite() => Some(x),
            _ => {
                let shown = match &v.kind {
                    Kind::Str(s) => format!("string `{s}`"),
                    Kind::Float(f) => format!("{f}"),
                    _ => v.type_name().to_owned(),
                };
                self.error(
                    path,
                    v.pos,
                    format!("expected a finite number, found {shown}"),
                );
                None
            }
        }
    }

    fn string_list(&mut self, v: &Value, path: &Path) -> Vec<String> {
        match &v.kind {
            Kind::Seq(items) => items
                .iter()
                .enumerate()
                .filter_map(|(i, it)| self.text(it, &path.index(i)))
                .collect(),
            _ => self.text(v, path).into_iter().collect(),
        }
    }

    fn inventory(&mut self, doc: &Value) -> Inventory {
        let root = Path::root();
        let mut inv = Inventory::default();
        let Some(m) = self.map(doc, &root, "an inventory document") else {
            return inv;
        };
        self.check_keys(m, &root, TOP_KEYS);
        match m.get("candidates") {
            None => self.error(&root, doc.pos, "missing `candidates`"),
            Some(v) => self.candidates(v, &root.key("candidates"), &mut inv),
        }
        if let Some(v) = m.get("host_locations") {
            inv.host_locations = self.locations(v, &root.key("host_locations"), false);
        }
        if let Some(v) = m.get("clli_locations") {
            inv.clli_locations = self.locations(v, &root.key("clli_locations"), true);
        }
        if let Some(v) = m.get("licenses") {
            inv.licenses = self.licenses(v, &root.key("licenses"));
        }
        if let Some(v) = m.get("topology").filter(|v| !v.is_null())
            && self
                .map(v, &root.key("topology"), "a topology document")
                .is_some()
        {
            // Topology problems are reported under `topology.…` with the inventory's positions.
            inv.topology = berth_topology::load_value(v, &root.key("topology"), &mut self.diags);
            if inv.topology.is_none() && !self.diags.has_errors() {
                self.error(
                    &root.key("topology"),
                    v.pos,
                    "the topology document could not be loaded",
                );
            }
        }
        if let Some(topo) = &inv.topology {
            for (path, pos, node) in std::mem::take(&mut self.node_refs) {
                if topo.leaf(&node).is_none() && topo.location(&node).is_none() {
                    self.error(
                        &path,
                        pos,
                        format!("`{node}` is not a vertex of the inline topology; expected a leaf or location id"),
                    );
                }
            }
        }
        if let Some((k, v)) = m.entry("topology_file") {
            let p = root.key("topology_file");
            inv.topology_file = self.text(v, &p);
            if inv.topology.is_some() && inv.topology_file.is_some() {
                self.error(
                    &p,
                    k.pos,
                    "both `topology` and `topology_file` given; expected at most one",
                );
            }
        }
        self.fill_from_clli(&mut inv);
        self.group_warnings(m, &inv);
        inv
    }

    fn licenses(&mut self, v: &Value, path: &Path) -> BTreeMap<String, LicenseInfo> {
        let mut out = BTreeMap::new();
        let Some(m) = self.map(v, path, "licenses by software id") else {
            return out;
        };
        for (k, val) in m.iter() {
            let p = path.key(k.name.as_str());
            let Some(lm) = self.map(val, &p, "a license") else {
                continue;
            };
            self.check_keys(lm, &p, &["available"]);
            match lm.get("available") {
                None => self.error(&p, val.pos, "missing `available`"),
                Some(a) => match a.kind {
                    Kind::Int(n) if n >= 0 => {
                        out.insert(
                            k.name.clone(),
                            LicenseInfo {
                                available: n.unsigned_abs(),
                            },
                        );
                    }
                    _ => self.error(
                        &p.key("available"),
                        a.pos,
                        format!(
                            "expected a non-negative integer count, found {}",
                            a.scalar_text()
                                .filter(|_| a.as_i64().is_some())
                                .unwrap_or_else(|| a.type_name().to_owned())
                        ),
                    ),
                },
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
