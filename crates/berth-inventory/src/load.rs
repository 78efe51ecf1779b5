//! Loading an inventory document (YAML or JSON) with every problem reported at once.

use std::collections::{BTreeMap, BTreeSet};

use berth_doc::{Diagnostic, Diagnostics, Kind, Map, Path, Pos, Value};
use berth_units::DimensionError;
use berth_units::dimension::{self, Raw, Round};
use indexmap::IndexMap;

use crate::error::InventoryError;
use crate::model::{
    AttrValue, BASIC_CAPABILITIES, Candidate, CandidateId, Coordinates, Flavor, HpaAttribute,
    HpaCapability, InventoryType, LicenseInfo, ZoneCategory,
};

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

const CANDIDATE_KEYS: &[&str] = &[
    "candidate_id",
    "candidate_type",
    "inventory_type",
    "inventory_provider",
    "host_id",
    "cost",
    "location_id",
    "location_type",
    "latitude",
    "longitude",
    "city",
    "state",
    "country",
    "region",
    "complex_name",
    "cloud_owner",
    "cloud_region_version",
    "physical_location_id",
    "attributes",
    "zones",
    "capacity",
    "flavors",
    "groups",
    "service_id",
    "service_type",
    "topology_node",
    "profiles",
];

const PROFILE_KEYS: &[&str] = &["profile_id", "attributes"];

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

    fn coordinates(
        &mut self,
        m: &Map,
        path: &Path,
        pos: Pos,
        required: bool,
    ) -> Option<Coordinates> {
        let lat = m.get("latitude").and_then(|v| {
            let p = path.key("latitude");
            let x = self.number(v, &p)?;
            if (-90.0..=90.0).contains(&x) {
                Some(x)
            } else {
                self.error(
                    &p,
                    v.pos,
                    format!("latitude {x} out of range; expected -90..=90"),
                );
                None
            }
        });
        let lon = m.get("longitude").and_then(|v| {
            let p = path.key("longitude");
            let x = self.number(v, &p)?;
            if (-180.0..=180.0).contains(&x) {
                Some(x)
            } else {
                self.error(
                    &p,
                    v.pos,
                    format!("longitude {x} out of range; expected -180..=180"),
                );
                None
            }
        });
        let has_lat = m.get("latitude").is_some_and(|v| !v.is_null());
        let has_lon = m.get("longitude").is_some_and(|v| !v.is_null());
        match (has_lat, has_lon) {
            (true, false) => self.error(path, pos, "`latitude` given without `longitude`"),
            (false, true) => self.error(path, pos, "`longitude` given without `latitude`"),
            (false, false) if required => {
                self.error(path, pos, "missing `latitude` and `longitude`");
            }
            _ => {}
        }
        Some(Coordinates {
            latitude: lat?,
            longitude: lon?,
        })
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

    fn candidates(&mut self, v: &Value, path: &Path, inv: &mut Inventory) {
        let Some(items) = v.as_seq() else {
            self.error(
                path,
                v.pos,
                format!("expected a list of candidates, found {}", v.type_name()),
            );
            return;
        };
        let mut first_seen: BTreeMap<String, Pos> = BTreeMap::new();
        for (i, item) in items.iter().enumerate() {
            let p = path.index(i);
            let Some(c) = self.candidate(item, &p) else {
                continue;
            };
            for (c, id_path, at, defined) in self.profiles(item, &p, c) {
                self.add_candidate(c, &id_path, (at, defined), &mut first_seen, inv);
            }
        }
    }

    /// The candidates one inventory entry stands for: itself, or (with `profiles`, as HAS
    /// offers a slice instance once per service or slice profile) one per profile, with the
    /// profile's id as candidate id, the instance's fields, and the instance's attributes
    /// plus `instance_id` overlaid by the profile's. Each comes with where its id is written
    /// (path and position) and where it is defined.
    fn profiles(
        &mut self,
        item: &Value,
        p: &Path,
        c: Candidate,
    ) -> Vec<(Candidate, Path, Pos, Pos)> {
        let id_at = |v: &Value| {
            v.as_map()
                .and_then(|m| m.get("candidate_id"))
                .map_or(v.pos, |x| x.pos)
        };
        let Some(pv) = item.as_map().and_then(|m| m.get("profiles")) else {
            return vec![(c, p.key("candidate_id"), id_at(item), item.pos)];
        };
        let pp = p.key("profiles");
        let Some(list) = pv.as_seq().filter(|l| !l.is_empty()) else {
            let found = if pv.as_seq().is_some() {
                "an empty list"
            } else {
                pv.type_name()
            };
            self.error(
                &pp,
                pv.pos,
                format!(
                    "expected a non-empty list of profiles {{profile_id, attributes}}, found {found}"
                ),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (j, prof) in list.iter().enumerate() {
            let jp = pp.index(j);
            let Some(m) = self.map(prof, &jp, "a profile") else {
                continue;
            };
            self.check_keys(m, &jp, PROFILE_KEYS);
            let id = match m.get("profile_id") {
                None => {
                    self.error(&jp, prof.pos, "missing `profile_id`");
                    continue;
                }
                Some(v) => match self.text(v, &jp.key("profile_id")) {
                    Some(id) if !id.trim().is_empty() => id,
                    _ => {
                        self.error(
                            &jp.key("profile_id"),
                            v.pos,
                            "expected a non-empty profile id",
                        );
                        continue;
                    }
                },
            };
            let mut pc = c.clone();
            pc.candidate_id = CandidateId::new(id.as_str());
            pc.attributes
                .entry("instance_id".to_owned())
                .or_insert_with(|| AttrValue::Str(c.candidate_id.as_str().to_owned()));
            pc.attributes
                .insert("profile_id".to_owned(), AttrValue::Str(id));
            if let Some(av) = m.get("attributes") {
                let attrs = self.attributes(av, &jp.key("attributes"));
                pc.attributes.extend(attrs);
            }
            let at = m.get("profile_id").map_or(prof.pos, |v| v.pos);
            out.push((pc, jp.key("profile_id"), at, prof.pos));
        }
        out
    }

    fn add_candidate(
        &mut self,
        c: Candidate,
        id_path: &Path,
        (at, defined): (Pos, Pos),
        first_seen: &mut BTreeMap<String, Pos>,
        inv: &mut Inventory,
    ) {
        let id = c.candidate_id.as_str().to_owned();
        if let Some(first) = first_seen.get(&id) {
            self.error(
                id_path,
                at,
                format!(
                    "duplicate candidate id `{id}`; first defined at {}:{}",
                    first.line, first.column
                ),
            );
            return;
        }
        first_seen.insert(id, defined);
        inv.candidates.insert(c.candidate_id.clone(), c);
    }

    fn inventory_type(&mut self, m: &Map, key: &str, path: &Path) -> Option<InventoryType> {
        let v = m.get(key)?;
        let p = path.key(key);
        let s = self.text(v, &p)?;
        match s.parse::<InventoryType>() {
            Ok(t) => Some(t),
            Err(_) => {
                self.error(
                    &p,
                    v.pos,
                    format!(
                        "unknown {key} `{s}`; expected one of cloud, service, transport, vfmodule, nssi, nsi, slice_profiles, nst"
                    ),
                );
                None
            }
        }
    }

    fn candidate(&mut self, v: &Value, path: &Path) -> Option<Candidate> {
        let m = self.map(v, path, "a candidate")?;
        self.check_keys(m, path, CANDIDATE_KEYS);
        let id = match m.get("candidate_id") {
            None => {
                self.error(path, v.pos, "missing `candidate_id`");
                None
            }
            Some(idv) => match self.text(idv, &path.key("candidate_id")) {
                Some(s) if !s.trim().is_empty() => Some(s),
                _ => {
                    self.error(
                        &path.key("candidate_id"),
                        idv.pos,
                        "expected a non-empty candidate id",
                    );
                    None
                }
            },
        };
        let ctype = self.inventory_type(m, "candidate_type", path);
        let itype = self.inventory_type(m, "inventory_type", path);
        if m.get("candidate_type").is_none_or(Value::is_null)
            && m.get("inventory_type").is_none_or(Value::is_null)
        {
            self.error(
                path,
                v.pos,
                "missing `inventory_type`; expected cloud, service, nsi, nssi, nst, slice_profiles, transport or vfmodule",
            );
        }
        let mut c = Candidate::new(
            id.clone().unwrap_or_default(),
            itype.or(ctype).unwrap_or(InventoryType::Cloud),
        );
        c.candidate_type = ctype.or(itype).unwrap_or(InventoryType::Cloud);
        c.inventory_provider = self.opt_text(m, "inventory_provider", path);
        c.host_id = self.opt_text(m, "host_id", path);
        c.location_id = self.opt_text(m, "location_id", path);
        c.location_type = self.opt_text(m, "location_type", path);
        c.city = self.opt_text(m, "city", path);
        c.state = self.opt_text(m, "state", path);
        c.country = self.opt_text(m, "country", path);
        c.region = self.opt_text(m, "region", path);
        c.complex_name = self.opt_text(m, "complex_name", path);
        c.cloud_owner = self.opt_text(m, "cloud_owner", path);
        c.cloud_region_version = self.opt_text(m, "cloud_region_version", path);
        c.service_id = self.opt_text(m, "service_id", path);
        c.service_type = self.opt_text(m, "service_type", path);
        c.topology_node = self.opt_text(m, "topology_node", path);
        if let (Some(node), Some(v)) = (&c.topology_node, m.get("topology_node")) {
            self.node_refs
                .push((path.key("topology_node"), v.pos, node.clone()));
        }
        if let Some(cv) = m.get("cost") {
            let p = path.key("cost");
            c.cost = self.number(cv, &p);
            if let Some(x) = c.cost.filter(|x| *x < 0.0) {
                self.error(
                    &p,
                    cv.pos,
                    format!("cost {x} is negative; expected a cost of at least 0"),
                );
            }
        }
        if let Some(coords) = self.coordinates(m, path, v.pos, false) {
            c.latitude = Some(coords.latitude);
            c.longitude = Some(coords.longitude);
        }
        if let Some(pv) = m.get("physical_location_id") {
            let p = path.key("physical_location_id");
            c.physical_location_id = self.text(pv, &p);
            if let Some(code) = c.physical_location_id.as_deref().filter(|c| !is_clli(c)) {
                self.diags.warning(
                    &p,
                    pv.pos,
                    format!(
                        "physical_location_id `{code}` is not a CLLI code; expected 8 letters or digits"
                    ),
                );
            }
        }
        if let Some(av) = m.get("attributes") {
            c.attributes = self.attributes(av, &path.key("attributes"));
        }
        if let Some(zv) = m.get("zones") {
            c.zones = self.zones(zv, &path.key("zones"));
        }
        if let Some(cv) = m.get("capacity") {
            c.capacity = self.capacity(cv, &path.key("capacity"));
        }
        if let Some(fv) = m.get("flavors") {
            c.flavors = self.flavors(fv, &path.key("flavors"));
        }
        if let Some(gv) = m.get("groups") {
            let p = path.key("groups");
            let mut seen = BTreeSet::new();
            c.groups = self
                .string_list(gv, &p)
                .into_iter()
                .filter(|g| seen.insert(g.clone()))
                .collect();
        }
        c.apply_zone_defaults();
        id.map(|_| c)
    }

    fn attr_value(&mut self, v: &Value, path: &Path, nested: bool) -> Option<AttrValue> {
        match &v.kind {
            Kind::Bool(b) => Some(AttrValue::Bool(*b)),
            Kind::Int(i) => Some(AttrValue::Int(*i)),
            Kind::Float(f) => Some(AttrValue::Float(*f)),
            Kind::Str(s) => Some(AttrValue::Str(s.clone())),
            Kind::Seq(items) if !nested => Some(AttrValue::List(
                items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, it)| self.attr_value(it, &path.index(i), true))
                    .collect(),
            )),
            _ => {
                let expected = if nested {
                    "a scalar"
                } else {
                    "a scalar or a list of scalars"
                };
                self.error(
                    path,
                    v.pos,
                    format!("expected {expected}, found {}", v.type_name()),
                );
                None
            }
        }
    }

    fn attributes(&mut self, v: &Value, path: &Path) -> BTreeMap<String, AttrValue> {
        let mut out = BTreeMap::new();
        let Some(m) = self.map(v, path, "attributes") else {
            return out;
        };
        for (k, val) in m.iter() {
            if let Some(a) = self.attr_value(val, &path.key(k.name.as_str()), false) {
                out.insert(k.name.clone(), a);
            }
        }
        out
    }

    fn zones(&mut self, v: &Value, path: &Path) -> BTreeMap<ZoneCategory, String> {
        let mut out = BTreeMap::new();
        let Some(m) = self.map(v, path, "zones by category") else {
            return out;
        };
        for (k, val) in m.iter() {
            let p = path.key(k.name.as_str());
            let Ok(cat) = k.name.parse::<ZoneCategory>() else {
                self.error(
                    &p,
                    k.pos,
                    format!(
                        "unknown zone category `{}`; expected one of disaster, region, complex, country, time, maintenance",
                        k.name
                    ),
                );
                continue;
            };
            if out.contains_key(&cat) {
                self.error(
                    &p,
                    k.pos,
                    format!("zone category `{cat}` given twice (under another spelling)"),
                );
                continue;
            }
            if let Some(zone) = self.text(val, &p) {
                out.insert(cat, zone);
            }
        }
        out
    }

    /// A capacity map through the dimension registry: keys normalised (`vcpus`, `VCPU`,
    /// `cores` are `vcpu`), amounts read in their units and rounded down to whole base units
    /// (a warning when that drops a fraction), two keys of one dimension refused. Keys naming
    /// no registered dimension are kept as written and remembered with their position.
    fn capacity(&mut self, v: &Value, path: &Path) -> BTreeMap<String, i64> {
        let mut out = BTreeMap::new();
        let Some(m) = self.map(v, path, "capacity by dimension") else {
            return out;
        };
        let mut first: BTreeMap<String, (String, Pos)> = BTreeMap::new();
        for (k, val) in m.iter() {
            let p = path.key(k.name.as_str());
            let number;
            let raw = match &val.kind {
                Kind::Int(_) | Kind::Float(_) => {
                    number = val.scalar_text().unwrap_or_default();
                    Raw::Number(&number)
                }
                Kind::Str(s) => Raw::Text(s),
                Kind::Map(qm) => match self.quantity(qm, &p, val.pos) {
                    Some((q, u)) => {
                        number = q;
                        Raw::Quantity {
                            quantity: &number,
                            unit: u,
                        }
                    }
                    None => continue,
                },
                _ => {
                    self.error(
                        &p,
                        val.pos,
                        format!(
                            "`{}` is {}; expected {}",
                            k.name,
                            val.type_name(),
                            dimension::expected(&k.name)
                        ),
                    );
                    continue;
                }
            };
            let a = match dimension::amount(&k.name, raw, Round::Down) {
                Ok(a) => a,
                Err(e) => {
                    self.error(&p, val.pos, e.to_string());
                    continue;
                }
            };
            if let Some((other, at)) = first.get(&a.dimension) {
                let e = DimensionError::Duplicate {
                    first: other.clone(),
                    second: k.name.clone(),
                    dimension: a.dimension.clone(),
                };
                self.error(
                    &p,
                    k.pos,
                    format!("{e} (`{other}` is at {}:{})", at.line, at.column),
                );
                continue;
            }
            first.insert(a.dimension.clone(), (k.name.clone(), k.pos));
            let known = dimension::by_name(&a.dimension);
            if !a.exact {
                let unit = known.map_or("unit", dimension::Dimension::unit);
                self.diags.warning(
                    &p,
                    val.pos,
                    format!(
                        "capacity `{}` is {raw}, not a whole number of {unit}; counted as {} {unit}",
                        k.name, a.value
                    ),
                );
            }
            if known.is_none() {
                self.custom_capacity.push(CapacityKey {
                    key: k.name.clone(),
                    path: p.clone(),
                    pos: k.pos,
                });
            }
            // `amount` keeps values at most i64::MAX.
            out.insert(a.dimension, i64::try_from(a.value).unwrap_or(i64::MAX));
        }
        out
    }

    /// The `{quantity, unit}` shape (HAS/multicloud) as texts, or `None` after reporting.
    fn quantity<'m>(
        &mut self,
        m: &'m Map,
        path: &Path,
        pos: Pos,
    ) -> Option<(String, Option<&'m str>)> {
        self.check_keys(m, path, &["quantity", "unit"]);
        let q = match m.get("quantity") {
            None => {
                self.error(path, pos, "missing `quantity`");
                return None;
            }
            Some(q) => match &q.kind {
                Kind::Int(_) | Kind::Float(_) | Kind::Str(_) => q.scalar_text()?,
                _ => {
                    self.error(
                        &path.key("quantity"),
                        q.pos,
                        format!("expected a number, found {}", q.type_name()),
                    );
                    return None;
                }
            },
        };
        let unit = match m.get("unit").map(|u| (&u.kind, u)) {
            None | Some((Kind::Null, _)) => None,
            Some((Kind::Str(s), _)) => Some(s.as_str()),
            Some((_, u)) => {
                self.error(
                    &path.key("unit"),
                    u.pos,
                    format!("expected a unit such as GB, found {}", u.type_name()),
                );
                return None;
            }
        };
        Some((q, unit))
    }

    fn flavors(&mut self, v: &Value, path: &Path) -> Vec<Flavor> {
        let Some(items) = v.as_seq() else {
            self.error(
                path,
                v.pos,
                format!("expected a list of flavors, found {}", v.type_name()),
            );
            return Vec::new();
        };
        let mut out: Vec<Flavor> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let p = path.index(i);
            let Some(m) = self.map(item, &p, "a flavor") else {
                continue;
            };
            self.check_keys(m, &p, &["id", "name", "capabilities"]);
            let Some(name) = self.opt_text(m, "name", &p) else {
                self.error(&p, item.pos, "missing flavor `name`");
                continue;
            };
            if out.iter().any(|f| f.name == name) {
                self.error(
                    &p.key("name"),
                    m.get("name").map_or(item.pos, |n| n.pos),
                    format!("duplicate flavor name `{name}`; expected unique names per candidate"),
                );
                continue;
            }
            let id = self.opt_text(m, "id", &p).unwrap_or_else(|| name.clone());
            let capabilities = match m.get("capabilities") {
                Some(cv) => self.capabilities(cv, &p.key("capabilities")),
                None => Vec::new(),
            };
            out.push(Flavor {
                id,
                name,
                capabilities,
            });
        }
        out
    }

    fn capabilities(&mut self, v: &Value, path: &Path) -> Vec<HpaCapability> {
        let Some(items) = v.as_seq() else {
            self.error(
                path,
                v.pos,
                format!("expected a list of capabilities, found {}", v.type_name()),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let p = path.index(i);
            let Some(m) = self.map(item, &p, "a capability") else {
                continue;
            };
            self.check_keys(m, &p, &["feature", "version", "architecture", "attributes"]);
            let Some(feature) = self.opt_text(m, "feature", &p) else {
                self.error(&p, item.pos, "missing capability `feature`");
                continue;
            };
            let version = self
                .opt_text(m, "version", &p)
                .unwrap_or_else(|| "v1".to_owned());
            let architecture = self
                .opt_text(m, "architecture", &p)
                .unwrap_or_else(|| "generic".to_owned());
            let mut attributes = BTreeMap::new();
            if let Some(av) = m.get("attributes") {
                let ap = p.key("attributes");
                if let Some(am) = self.map(av, &ap, "capability attributes") {
                    let mut sizes: BTreeMap<&'static str, (String, Pos)> = BTreeMap::new();
                    for (k, val) in am.iter() {
                        let kp = ap.key(k.name.as_str());
                        let Some(a) = self.hpa_attribute(val, &kp) else {
                            continue;
                        };
                        if feature == BASIC_CAPABILITIES {
                            self.flavor_size(&k.name, &a, (&kp, k.pos, val.pos), &mut sizes);
                        }
                        attributes.insert(k.name.clone(), a);
                    }
                }
            }
            out.push(HpaCapability {
                feature,
                version,
                architecture,
                attributes,
            });
        }
        out
    }

    /// A `basicCapabilities` attribute naming a dimension is a flavor size
    /// ([`Flavor::size`]): it must read as an amount, and once per dimension.
    fn flavor_size(
        &mut self,
        key: &str,
        a: &HpaAttribute,
        (path, key_pos, value_pos): (&Path, Pos, Pos),
        sizes: &mut BTreeMap<&'static str, (String, Pos)>,
    ) {
        let Some((d, _)) = dimension::lookup(key) else {
            return;
        };
        match a.amount(key) {
            None => self.error(
                path,
                value_pos,
                format!(
                    "`{key}` is {}; expected {}",
                    a.value,
                    dimension::expected(key)
                ),
            ),
            Some(Err(e)) => self.error(path, value_pos, e.to_string()),
            Some(Ok(_)) => {}
        }
        if let Some((other, at)) = sizes.get(d.name) {
            let e = DimensionError::Duplicate {
                first: other.clone(),
                second: key.to_owned(),
                dimension: d.name.to_owned(),
            };
            self.error(
                path,
                key_pos,
                format!("{e} (`{other}` is at {}:{})", at.line, at.column),
            );
        } else {
            sizes.insert(d.name, (key.to_owned(), key_pos));
        }
    }

    fn hpa_attribute(&mut self, v: &Value, path: &Path) -> Option<HpaAttribute> {
        let Some(m) = v.as_map() else {
            let value = self.attr_value(v, path, false)?;
            return Some(HpaAttribute { value, unit: None });
        };
        self.check_keys(m, path, &["value", "unit"]);
        let unit = self.opt_text(m, "unit", path);
        let Some(val) = m.get("value") else {
            self.error(path, v.pos, "missing `value`");
            return None;
        };
        let value = self.attr_value(val, &path.key("value"), false)?;
        Some(HpaAttribute { value, unit })
    }

    fn locations(&mut self, v: &Value, path: &Path, clli: bool) -> BTreeMap<String, Coordinates> {
        let mut out = BTreeMap::new();
        let what = if clli {
            "locations by clli code"
        } else {
            "locations by host name"
        };
        let Some(m) = self.map(v, path, what) else {
            return out;
        };
        for (k, val) in m.iter() {
            let p = path.key(k.name.as_str());
            if clli && !is_clli(&k.name) {
                self.error(
                    &p,
                    k.pos,
                    format!(
                        "clli code `{}` must be 8 letters or digits, found {} characters",
                        k.name,
                        k.name.chars().count()
                    ),
                );
            }
            let Some(lm) = self.map(val, &p, "a location") else {
                continue;
            };
            self.check_keys(lm, &p, &["latitude", "longitude"]);
            if let Some(c) = self.coordinates(lm, &p, val.pos, true) {
                out.insert(k.name.clone(), c);
            }
        }
        out
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

    /// Candidates without coordinates take those of their CLLI code, when known.
    fn fill_from_clli(&mut self, inv: &mut Inventory) {
        for c in inv.candidates.values_mut() {
            if c.latitude.is_some() {
                continue;
            }
            if let Some(coords) = c
                .physical_location_id
                .as_ref()
                .and_then(|code| inv.clli_locations.get(code))
            {
                c.latitude = Some(coords.latitude);
                c.longitude = Some(coords.longitude);
            }
        }
    }

    fn group_warnings(&mut self, root: &Map, inv: &Inventory) {
        let mut members: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, c) in inv.candidates.values().enumerate() {
            for g in &c.groups {
                members.entry(g.as_str()).or_default().push(i);
            }
        }
        let seq = root.get("candidates").and_then(Value::as_seq);
        for (g, idx) in members {
            if let [only] = idx.as_slice() {
                // Report at the candidate's position in the document.
                let id = inv
                    .candidates
                    .get_index(*only)
                    .map(|(id, _)| id.as_str())
                    .unwrap_or_default();
                let (path, pos) = seq
                    .and_then(|items| {
                        items.iter().enumerate().find(|(_, it)| {
                            it.as_map()
                                .and_then(|m| m.get("candidate_id"))
                                .and_then(Value::scalar_text)
                                .is_some_and(|s| s == id)
                        })
                    })
                    .map_or((Path::root(), Pos::UNKNOWN), |(i, it)| {
                        let at = it
                            .as_map()
                            .and_then(|m| m.get("groups"))
                            .map_or(it.pos, |g| g.pos);
                        (Path::root().key("candidates").index(i).key("groups"), at)
                    });
                self.diags.warning(
                    &path,
                    pos,
                    format!("inventory group `{g}` has only one member (`{id}`); expected a pair"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests;
