//! The `candidates` section: each candidate's fields, its profiles (one candidate each),
//! attributes, zones and groups, and the groups with a single member.

use std::collections::{BTreeMap, BTreeSet};

use berth_doc::{Kind, Map, Path, Pos, Value};

use super::{Cx, Inventory, is_clli};
use crate::model::{AttrValue, Candidate, CandidateId, InventoryType, ZoneCategory};

pub(super) const CANDIDATE_KEYS: &[&str] = &[
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

impl Cx {
    pub(super) fn candidates(&mut self, v: &Value, path: &Path, inv: &mut Inventory) {
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

    pub(super) fn attr_value(&mut self, v: &Value, path: &Path, nested: bool) -> Option<AttrValue> {
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

    pub(super) fn group_warnings(&mut self, root: &Map, inv: &Inventory) {
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
