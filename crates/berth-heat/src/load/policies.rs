//! Loading policies: each policy's type, properties and shape, checked against where it stands.

use berth_doc::{Map, Path, Pos, Value};

use super::{Loader, POLICY_KEYS, Site, describe, expected_keys};
use crate::model::{Policy, PolicyId};
use crate::policy::{COMMON_PROPERTIES, POLICY_TYPES, PolicyKind, Shape, properties_of, shape_of};

impl Loader {
    pub(super) fn policies(&mut self, v: &Value, p: &Path, site: Site) -> Vec<PolicyId> {
        let Some(list) = v.as_seq() else {
            self.diags.error(
                p,
                v.pos,
                format!(
                    "`policies` is {}; expected a list of {{type, properties, metadata}}",
                    describe(v)
                ),
            );
            return Vec::new();
        };
        list.iter()
            .enumerate()
            .filter_map(|(i, item)| self.policy(item, &p.index(i), site))
            .collect()
    }

    pub(super) fn policy(&mut self, v: &Value, p: &Path, site: Site) -> Option<PolicyId> {
        let Some(m) = v.as_map() else {
            self.diags.error(
                p,
                v.pos,
                format!(
                    "policy is {}; expected a mapping {{type, properties, metadata}}",
                    describe(v)
                ),
            );
            return None;
        };
        expected_keys(m, POLICY_KEYS, p, &mut self.diags);
        let Some(tv) = m.get("type") else {
            self.diags.error(
                p,
                v.pos,
                format!(
                    "missing `type`; expected one of {}",
                    POLICY_TYPES.join(", ")
                ),
            );
            return None;
        };
        let Some(type_name) = tv.as_str() else {
            self.diags.error(
                &p.key("type"),
                tv.pos,
                format!("`type` is {}; expected a policy type name", describe(tv)),
            );
            return None;
        };
        let Some(shape) = shape_of(type_name) else {
            self.diags.error(
                &p.key("type"),
                tv.pos,
                format!(
                    "unknown policy type `{type_name}`; expected one of {}",
                    POLICY_TYPES.join(", ")
                ),
            );
            return None;
        };
        let misplaced = match (site, shape) {
            (Site::Group, Shape::Asymmetric) => Some(format!(
                "policy `{type_name}` is asymmetric; expected it in a relationship, not on a group"
            )),
            (Site::Resource(false), Shape::Symmetric | Shape::Asymmetric) => Some(format!(
                "policy `{type_name}` relates two resources; expected it in a relationship, on a group or on a volume attachment"
            )),
            (Site::Resource(true), Shape::Monadic | Shape::Synthetic) => Some(format!(
                "policy `{type_name}` is about one resource; expected a policy relating the instance and the volume on a volume attachment"
            )),
            (Site::Resource(..), Shape::Synthetic) => Some(format!(
                "policy `{type_name}` applies to the members of a group; expected it on a group"
            )),
            (Site::Relationship, Shape::Monadic | Shape::Synthetic) => Some(format!(
                "policy `{type_name}` is not about a pair; expected a policy relating two resources in a relationship"
            )),
            _ => None,
        };
        if let Some(msg) = misplaced {
            self.diags.error(&p.key("type"), tv.pos, msg);
        }
        let pp = p.key("properties");
        let empty = Map::default();
        let props = match m.get("properties") {
            None => &empty,
            Some(pv) => match pv.as_map() {
                Some(pm) => pm,
                None => {
                    self.diags.error(
                        &pp,
                        pv.pos,
                        format!("`properties` is {}; expected a mapping", describe(pv)),
                    );
                    &empty
                }
            },
        };
        let own = properties_of(type_name);
        for (k, _) in props.iter() {
            if !own.contains(&k.name.as_str()) && !COMMON_PROPERTIES.contains(&k.name.as_str()) {
                let all: Vec<&str> = own.iter().chain(COMMON_PROPERTIES).copied().collect();
                self.diags.error(
                    &pp.key(k.name.clone()),
                    k.pos,
                    format!(
                        "unknown property `{}` of `{type_name}`; expected one of {}",
                        k.name,
                        all.join(", ")
                    ),
                );
            }
        }
        let hard = match props.get("hardConstraint") {
            None => true,
            Some(h) => match h.as_bool() {
                Some(b) => b,
                None => {
                    self.diags.error(
                        &pp.key("hardConstraint"),
                        h.pos,
                        format!(
                            "`hardConstraint` is {}; expected true or false",
                            describe(h)
                        ),
                    );
                    true
                }
            },
        };
        let weight = match props.get("weight") {
            None => 1.0,
            Some(w) => match w.as_f64() {
                Some(x) if x.is_finite() && x >= 0.0 => {
                    if hard {
                        self.diags.warning(&pp.key("weight"), w.pos, "`weight` of a hard policy is ignored; expected it with hardConstraint: false");
                    }
                    x
                }
                _ => {
                    self.diags.error(
                        &pp.key("weight"),
                        w.pos,
                        format!(
                            "`weight` is {}; expected a non-negative number",
                            describe(w)
                        ),
                    );
                    1.0
                }
            },
        };
        let kind = self.kind(type_name, props, &pp, v.pos)?;
        if misplaced_flag(site, shape) {
            return None;
        }
        let metadata = self.metadata(m, p);
        self.policies.push(Policy {
            kind,
            hard,
            weight,
            metadata,
            path: p.to_string(),
            line: v.pos.line,
            column: v.pos.column,
        });
        Some(PolicyId(self.policies.len() as u32 - 1))
    }

    pub(super) fn kind(
        &mut self,
        type_name: &str,
        props: &Map,
        pp: &Path,
        at: Pos,
    ) -> Option<PolicyKind> {
        let mut missing = false;
        let mut need = |k: &str, this: &mut Self| -> Option<Value> {
            match props.get(k) {
                Some(v) => Some(v.clone()),
                None => {
                    this.diags
                        .error(pp, at, format!("missing property `{k}` of `{type_name}`"));
                    missing = true;
                    None
                }
            }
        };
        let kind = match type_name {
            "OS::CoLocation" | "OS::AntiCoLocation" => {
                let level = need("level", self)
                    .and_then(|v| self.text(&v, &pp.key("level"), "a location level name"));
                let level = level?;
                if type_name == "OS::CoLocation" {
                    PolicyKind::CoLocation { level }
                } else {
                    PolicyKind::AntiCoLocation { level }
                }
            }
            "OS::LLMNAntiCoLocation" => {
                let l1 = need("l1", self)
                    .and_then(|v| self.text(&v, &pp.key("l1"), "a location level name"));
                let l2 = need("l2", self)
                    .and_then(|v| self.text(&v, &pp.key("l2"), "a location level name"));
                let n = need("n", self)
                    .and_then(|v| self.integer(&v, &pp.key("n"), 1, "a positive integer"));
                PolicyKind::Llmn {
                    l1: l1?,
                    l2: l2?,
                    n: u32::try_from(n?).ok()?,
                }
            }
            "OS::NetMaxHops" => {
                let hops = need("hops", self)
                    .and_then(|v| self.integer(&v, &pp.key("hops"), 0, "a non-negative integer"))?;
                PolicyKind::NetMaxHops {
                    hops: u32::try_from(hops).ok()?,
                }
            }
            "OS::NetBandwidth" => {
                let b = need("bytes_per_second", self).and_then(|v| {
                    self.integer(
                        &v,
                        &pp.key("bytes_per_second"),
                        1,
                        "a positive integer (bytes per second)",
                    )
                })?;
                PolicyKind::NetBandwidth {
                    bytes_per_second: u64::try_from(b).ok()?,
                }
            }
            "OS::NetReachability" => PolicyKind::NetReachability,
            "OS::NetEndpointAccess" => {
                let protocols = match props.get("protocols") {
                    None => Vec::new(),
                    Some(v) => self.string_list(v, &pp.key("protocols"))?,
                };
                let endpoints = match props.get("endpoints") {
                    None => Vec::new(),
                    Some(v) => self.endpoints(v, &pp.key("endpoints"))?,
                };
                if protocols.is_empty() && endpoints.is_empty() {
                    self.diags.error(pp, at, "`OS::NetEndpointAccess` allows nothing; expected `protocols` or `endpoints`");
                }
                PolicyKind::NetEndpointAccess {
                    protocols,
                    endpoints,
                }
            }
            "OS::LicensedProduct" => {
                let catalog = need("catalog", self)
                    .and_then(|v| self.text(&v, &pp.key("catalog"), "a catalog id"));
                let product = need("product", self)
                    .and_then(|v| self.text(&v, &pp.key("product"), "a product id"));
                PolicyKind::LicensedProduct {
                    catalog: catalog?,
                    product: product?,
                }
            }
            "OS::VolExclusive" => PolicyKind::VolExclusive,
            _ => PolicyKind::VolNotMoved,
        };
        (!missing).then_some(kind)
    }
}

fn misplaced_flag(site: Site, shape: Shape) -> bool {
    matches!(
        (site, shape),
        (Site::Group, Shape::Asymmetric)
            | (Site::Resource(false), Shape::Symmetric | Shape::Asymmetric)
            | (Site::Resource(true), Shape::Monadic | Shape::Synthetic)
            | (Site::Resource(..), Shape::Synthetic)
            | (Site::Relationship, Shape::Monadic | Shape::Synthetic)
    )
}
