//! Reading `demands`: requirements and candidates.

use berth_doc::{Kind, Map, Path, Value};
use indexmap::IndexMap;

use super::Reader;
use crate::model::{Candidate, Demand, InventoryType, Requirement};

/// Keys of a requirement: the seed's and those HAS reads.
pub(crate) const REQUIREMENT_KEYS: [&str; 24] = [
    "inventory_provider",
    "inventory_type",
    "attributes",
    "service_type",
    "service_id",
    "default_cost",
    "required_candidates",
    "excluded_candidates",
    "existing_placement",
    "candidates",
    "filtering_attributes",
    "passthrough_attributes",
    "default_attributes",
    "region",
    "complex",
    "unique",
    "conflict_identifier",
    "customer_id",
    "service_resource_id",
    "flavor",
    "vlan_key",
    "port_key",
    "service_subscription",
    "subdivision",
];

/// Keys of a candidate (the seed's candidate schema).
pub(crate) const CANDIDATE_KEYS: [&str; 18] = [
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
];

/// HAS rejects a template without demands ("Undefined Demand"); so does Berth.
const UNDEFINED_DEMAND: &str =
    "undefined demand: the template declares no demands; expected at least one under `demands`";

impl Reader<'_> {
    pub(crate) fn demands(&mut self, top: &Map, path: &Path) -> IndexMap<String, Demand> {
        let mut out = IndexMap::new();
        let section = top.get("demands").filter(|v| !v.is_null());
        let Some(v) = section else {
            self.error(
                &Path::root(),
                top.entry("demands")
                    .map_or(berth_doc::Pos::UNKNOWN, |(k, _)| k.pos),
                UNDEFINED_DEMAND,
            );
            return out;
        };
        let Some(m) = self.map(v, path, "a mapping of demand names to requirements") else {
            return out;
        };
        if m.is_empty() {
            self.error(path, v.pos, UNDEFINED_DEMAND);
        }
        for (k, dv) in m.iter() {
            let dpath = path.key(&k.name);
            let requirements = match &dv.kind {
                Kind::Seq(items) => {
                    if items.is_empty() {
                        self.error(
                            &dpath,
                            dv.pos,
                            format!(
                                "demand `{}` has no requirements; expected at least one",
                                k.name
                            ),
                        );
                    }
                    items
                        .iter()
                        .enumerate()
                        .filter_map(|(i, item)| self.requirement(item, &dpath.index(i)))
                        .collect::<Vec<_>>()
                }
                // One requirement may appear without a list.
                Kind::Map(_) => self.requirement(dv, &dpath).into_iter().collect(),
                _ => {
                    self.type_error(
                        &dpath,
                        dv,
                        "a list of requirements (or one requirement mapping)",
                    );
                    continue;
                }
            };
            if !requirements.is_empty() {
                out.insert(
                    k.name.clone(),
                    Demand {
                        name: k.name.clone(),
                        requirements,
                    },
                );
            }
        }
        out
    }

    fn requirement(&mut self, v: &Value, path: &Path) -> Option<Requirement> {
        let m = self.map(
            v,
            path,
            "a requirement mapping (inventory_provider, inventory_type, ...)",
        )?;
        self.check_keys(m, path, &REQUIREMENT_KEYS, "a requirement");
        let mut r = Requirement::default();
        let explicit = m.get("candidates").is_some_and(|c| !c.is_null());
        r.inventory_provider = self.opt_text(m, "inventory_provider", path);
        if r.inventory_provider.is_none() && !explicit {
            self.required(
                m,
                "inventory_provider",
                path,
                v.pos,
                "a requirement without explicit `candidates`",
            );
        }
        match m.get("inventory_type").filter(|t| !t.is_null()) {
            Some(t) => r.inventory_type = self.inventory_type(t, &path.key("inventory_type")),
            None if !explicit => {
                self.required(
                    m,
                    "inventory_type",
                    path,
                    v.pos,
                    "a requirement without explicit `candidates`",
                );
            }
            None => {}
        }
        for (key, slot) in [
            ("attributes", &mut r.attributes),
            ("filtering_attributes", &mut r.filtering_attributes),
            ("passthrough_attributes", &mut r.passthrough_attributes),
            ("default_attributes", &mut r.default_attributes),
        ] {
            if let Some(a) = m.get(key) {
                *slot = self.opaque_map(a, &path.key(key));
            }
        }
        if let Some(s) = m.get("service_type") {
            r.service_type = self.text_list(s, &path.key("service_type"));
        }
        if let Some(s) = m.get("service_id") {
            r.service_id = self.text_list(s, &path.key("service_id"));
        }
        if let Some(c) = m.get("default_cost").filter(|c| !c.is_null()) {
            r.default_cost = self.cost(c, &path.key("default_cost"));
        }
        for (key, slot) in [
            ("required_candidates", &mut r.required_candidates),
            ("excluded_candidates", &mut r.excluded_candidates),
            ("candidates", &mut r.candidates),
        ] {
            if let Some(list) = m.get(key).filter(|l| !l.is_null()) {
                *slot = self.candidates(list, &path.key(key));
            }
        }
        if let Some(c) = m.get("existing_placement").filter(|c| !c.is_null()) {
            r.existing_placement = self.candidate(c, &path.key("existing_placement"));
        }
        if let Some(u) = m.get("unique").filter(|u| !u.is_null()) {
            r.unique = self.boolean(u, &path.key("unique"));
        }
        r.region = self.opt_text(m, "region", path);
        r.complex = self.opt_text(m, "complex", path);
        r.conflict_identifier = self.opt_text(m, "conflict_identifier", path);
        r.customer_id = self.opt_text(m, "customer_id", path);
        r.service_resource_id = self.opt_text(m, "service_resource_id", path);
        r.flavor = self.opt_text(m, "flavor", path);
        r.vlan_key = self.opt_text(m, "vlan_key", path);
        r.port_key = self.opt_text(m, "port_key", path);
        r.service_subscription = self.opt_text(m, "service_subscription", path);
        r.subdivision = self.opt_text(m, "subdivision", path);
        // A candidate both required and excluded leaves nothing to search (HAS rejects it too).
        for (i, c) in r.excluded_candidates.iter().enumerate() {
            for id in &c.candidate_id {
                if r.required_candidates
                    .iter()
                    .any(|rc| rc.candidate_id.contains(id))
                {
                    let p = path.key("excluded_candidates").index(i);
                    let pos = m
                        .get("excluded_candidates")
                        .and_then(Value::as_seq)
                        .and_then(|s| s.get(i))
                        .map_or(v.pos, |x| x.pos);
                    self.error(&p, pos, format!("candidate `{id}` is both required and excluded; expected the lists to be disjoint"));
                }
            }
        }
        Some(r)
    }

    fn inventory_type(&mut self, v: &Value, path: &Path) -> Option<InventoryType> {
        let s = self.text(v, path)?;
        InventoryType::parse(&s).or_else(|| {
            let all: Vec<&str> = InventoryType::ALL.iter().map(|t| t.as_str()).collect();
            self.error(
                path,
                v.pos,
                format!(
                    "unknown inventory_type `{s}`; expected one of {}",
                    all.join(", ")
                ),
            );
            None
        })
    }

    fn cost(&mut self, v: &Value, path: &Path) -> Option<f64> {
        let n = self.number(v, path)?;
        if n < 0.0 {
            self.error(
                path,
                v.pos,
                format!("cost {n} is negative; expected a number >= 0"),
            );
            return None;
        }
        Some(n)
    }

    fn candidates(&mut self, v: &Value, path: &Path) -> Vec<Candidate> {
        match &v.kind {
            Kind::Seq(items) => items
                .iter()
                .enumerate()
                .filter_map(|(i, c)| self.candidate(c, &path.index(i)))
                .collect(),
            // A single candidate mapping is accepted like a one-item list.
            Kind::Map(_) => self.candidate(v, path).into_iter().collect(),
            _ => {
                self.type_error(path, v, "a list of candidates");
                Vec::new()
            }
        }
    }

    fn candidate(&mut self, v: &Value, path: &Path) -> Option<Candidate> {
        let m = self.map(v, path, "a candidate mapping (candidate_id, ...)")?;
        self.check_keys(m, path, &CANDIDATE_KEYS, "a candidate");
        let mut c = Candidate::default();
        if let Some(id) = self.required(m, "candidate_id", path, v.pos, "a candidate") {
            let idp = path.key("candidate_id");
            c.candidate_id = match &id.kind {
                Kind::Seq(_) => self.text_list(id, &idp),
                _ => self.text(id, &idp).into_iter().collect(),
            };
            if c.candidate_id.is_empty() && id.as_seq().is_some() {
                self.error(
                    &idp,
                    id.pos,
                    "expected at least one candidate id; found an empty list",
                );
            }
        }
        if let Some(t) = m.get("inventory_type").filter(|t| !t.is_null()) {
            c.inventory_type = self.inventory_type(t, &path.key("inventory_type"));
        }
        if let Some(t) = m.get("cost").filter(|t| !t.is_null()) {
            c.cost = self.cost(t, &path.key("cost"));
        }
        c.coordinate = self.coordinate(m, path, v.pos, "candidate");
        c.candidate_type = self.opt_text(m, "candidate_type", path);
        if let (Some(t), Some(tv)) = (&c.candidate_type, m.get("candidate_type"))
            && t != "cloud"
            && t != "service"
        {
            self.warning(
                &path.key("candidate_type"),
                tv.pos,
                format!("candidate_type `{t}` is neither `cloud` nor `service`"),
            );
        }
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
        c.physical_location_id = self.opt_text(m, "physical_location_id", path);
        if c.candidate_id.is_empty() {
            return None;
        }
        Some(c)
    }
}
