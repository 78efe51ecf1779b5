//! Reading `constraints`: every constraint type with its property schema.

use berth_doc::{Kind, Map, Path, Pos, Value};
use berth_units::{Family, Op, Quantity, Threshold, Unit};
use indexmap::IndexMap;

use super::Reader;
use crate::model::{
    AttributeOp, AttributeProps, CompareOp, Constraint, ConstraintKind, ControllerProps,
    DistanceBetweenProps, DistanceToLocationProps, HeatProps, HpaAttribute, HpaFeature, HpaFlavor,
    HpaOperator, HpaProps, LicenseProps, NetworkProps, NetworkToLocationProps, Pattern,
    ServiceProps, ThresholdCheck, ThresholdProps, ZoneCategory, ZoneProps, ZoneQualifier,
};
use crate::suggest::did_you_mean;

/// Keys of a constraint.
pub(crate) const CONSTRAINT_KEYS: [&str; 3] = ["type", "demands", "properties"];

/// The property names each constraint type accepts.
pub(crate) fn allowed_properties(type_name: &str) -> &'static [&'static str] {
    match type_name {
        "attribute" | "threshold" | "hpa" => &["evaluate"],
        "distance_between_demands" => &["distance"],
        "distance_to_location" => &["distance", "location"],
        "instance_fit" | "region_fit" | "vim_fit" => &["controller", "request"],
        "service" => &["controller", "provider_url", "request", "cost"],
        "zone" => &["qualifier", "category", "location"],
        "license" => &["id", "key"],
        "network_between_demands" => &["bandwidth", "distance", "latency"],
        "network_to_location" => &["bandwidth", "distance", "latency", "location"],
        "capability" | "capacity" => &["specification", "template", "environment"],
        _ => &[],
    }
}

const HPA_FLAVOR_KEYS: [&str; 4] = ["id", "type", "directives", "flavorProperties"];
const HPA_FEATURE_KEYS: [&str; 7] = [
    "hpa-feature",
    "hpa-version",
    "architecture",
    "mandatory",
    "score",
    "directives",
    "hpa-feature-attributes",
];
const HPA_ATTRIBUTE_KEYS: [&str; 4] = [
    "hpa-attribute-key",
    "hpa-attribute-value",
    "operator",
    "unit",
];
const THRESHOLD_CHECK_KEYS: [&str; 4] = ["attribute", "operator", "threshold", "unit"];

impl Reader<'_> {
    pub(crate) fn constraints(
        &mut self,
        v: Option<&Value>,
        path: &Path,
    ) -> IndexMap<String, Constraint> {
        let mut out = IndexMap::new();
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return out;
        };
        let Some(m) = self.map(v, path, "a mapping of constraint names to constraints") else {
            return out;
        };
        for (k, cv) in m.iter() {
            if let Some(c) = self.constraint(&k.name, cv, &path.key(&k.name)) {
                out.insert(k.name.clone(), c);
            }
        }
        out
    }

    fn constraint(&mut self, name: &str, v: &Value, path: &Path) -> Option<Constraint> {
        let m = self.map(
            v,
            path,
            "a constraint mapping with type, demands and properties",
        )?;
        self.check_keys(m, path, &CONSTRAINT_KEYS, "a constraint");
        let type_name = match self.required(m, "type", path, v.pos, "a constraint") {
            Some(t) => {
                let tp = path.key("type");
                let s = self.text(t, &tp);
                match s {
                    Some(s) if ConstraintKind::TYPES.contains(&s.as_str()) => Some(s),
                    Some(s) => {
                        let msg = format!(
                            "unknown constraint type `{s}`; expected one of {}{}",
                            ConstraintKind::TYPES.join(", "),
                            did_you_mean(&s, ConstraintKind::TYPES)
                        );
                        self.error(&tp, t.pos, msg);
                        None
                    }
                    None => None,
                }
            }
            None => None,
        };
        let demands = match self.required(m, "demands", path, v.pos, "a constraint") {
            Some(d) => {
                let dp = path.key("demands");
                let list = self.demand_list(d, &dp);
                if let Some(t) = &type_name {
                    let declared = d.as_seq().map_or(1, <[Value]>::len);
                    if ConstraintKind::is_pairwise(t) && declared < 2 {
                        self.error(&dp, d.pos, format!("a {t} constraint relates demands pairwise; expected at least two demands, found {declared}"));
                    }
                    if t == "inventory_group" && list.len() > 2 {
                        let rest: Vec<String> =
                            list[2..].iter().map(|n| format!("`{n}`")).collect();
                        self.warning(&dp, d.pos, format!(
                            "inventory_group supports pairs only (seed 000): `{}` and `{}` share a group; {} {} not constrained by it",
                            list[0],
                            list[1],
                            rest.join(", "),
                            if rest.len() == 1 { "is" } else { "are" }
                        ));
                    }
                }
                list
            }
            None => Vec::new(),
        };
        let type_name = type_name?;
        let ppath = path.key("properties");
        let empty = Map::default();
        let (props, ppos) = match m.get("properties") {
            Some(p) if !p.is_null() => match &p.kind {
                Kind::Map(pm) => (pm, p.pos),
                _ => {
                    self.type_error(&ppath, p, &format!("a mapping of {type_name} properties"));
                    return None;
                }
            },
            _ => (&empty, v.pos),
        };
        let allowed = allowed_properties(&type_name);
        self.check_keys(props, &ppath, allowed, &format!("{type_name} properties"));
        let kind = self.kind(&type_name, props, &ppath, ppos)?;
        Some(Constraint {
            name: name.to_owned(),
            kind,
            demands,
        })
    }

    fn kind(&mut self, t: &str, p: &Map, path: &Path, pos: Pos) -> Option<ConstraintKind> {
        let what = format!("a {t} constraint");
        Some(match t {
            "attribute" => {
                let ev = self.required(p, "evaluate", path, pos, &what)?;
                ConstraintKind::Attribute(self.attribute(ev, &path.key("evaluate"))?)
            }
            "threshold" => {
                let ev = self.required(p, "evaluate", path, pos, &what)?;
                ConstraintKind::Threshold(self.threshold_checks(ev, &path.key("evaluate"))?)
            }
            "hpa" => {
                let ev = self.required(p, "evaluate", path, pos, &what)?;
                ConstraintKind::Hpa(self.hpa(ev, &path.key("evaluate"))?)
            }
            "distance_between_demands" => {
                let d = self.required(p, "distance", path, pos, &what)?;
                let distance =
                    self.threshold(d, &path.key("distance"), Family::Distance, Unit::Km)?;
                ConstraintKind::DistanceBetweenDemands(DistanceBetweenProps { distance })
            }
            "distance_to_location" => {
                let d = self.required(p, "distance", path, pos, &what);
                let l = self.required(p, "location", path, pos, &what);
                let distance = d.and_then(|d| {
                    self.threshold(d, &path.key("distance"), Family::Distance, Unit::Km)
                });
                let location = l.and_then(|l| self.location_ref(l, &path.key("location")));
                ConstraintKind::DistanceToLocation(DistanceToLocationProps {
                    distance: distance?,
                    location: location?,
                })
            }
            "instance_fit" | "region_fit" | "vim_fit" => {
                let c = self.required(p, "controller", path, pos, &what)?;
                let controller = self.text(c, &path.key("controller"))?;
                let request = p
                    .get("request")
                    .filter(|r| !r.is_null())
                    .map(|r| self.request(r, &path.key("request")));
                let props = ControllerProps {
                    controller,
                    request,
                };
                match t {
                    "instance_fit" => ConstraintKind::InstanceFit(props),
                    "region_fit" => ConstraintKind::RegionFit(props),
                    _ => ConstraintKind::VimFit(props),
                }
            }
            "service" => {
                let mut s = ServiceProps {
                    controller: self.opt_text(p, "controller", path),
                    provider_url: self.opt_text(p, "provider_url", path),
                    ..ServiceProps::default()
                };
                s.request = p
                    .get("request")
                    .filter(|r| !r.is_null())
                    .map(|r| self.request(r, &path.key("request")));
                if let Some(c) = p.get("cost").filter(|c| !c.is_null()) {
                    s.cost = self.number(c, &path.key("cost"));
                }
                ConstraintKind::Service(s)
            }
            "zone" => {
                let q = self.required(p, "qualifier", path, pos, &what);
                let c = self.required(p, "category", path, pos, &what);
                let qualifier = q.and_then(|q| self.qualifier(q, &path.key("qualifier")));
                let category = c.and_then(|c| self.category(c, &path.key("category")));
                let location = match p.get("location").filter(|l| !l.is_null()) {
                    Some(l) => Some(self.location_ref(l, &path.key("location"))?),
                    None => None,
                };
                ConstraintKind::Zone(ZoneProps {
                    qualifier: qualifier?,
                    category: category?,
                    location,
                })
            }
            "inventory_group" => ConstraintKind::InventoryGroup,
            "license" => {
                let id = self
                    .required(p, "id", path, pos, &what)
                    .and_then(|v| self.text(v, &path.key("id")));
                let key = self
                    .required(p, "key", path, pos, &what)
                    .and_then(|v| self.text(v, &path.key("key")));
                ConstraintKind::License(LicenseProps { id: id?, key: key? })
            }
            "network_between_demands" => {
                ConstraintKind::NetworkBetweenDemands(self.network(p, path, pos, t)?)
            }
            "network_to_location" => {
                let network = self.network(p, path, pos, t);
                let l = self.required(p, "location", path, pos, &what);
                let location = l.and_then(|l| self.location_ref(l, &path.key("location")));
                ConstraintKind::NetworkToLocation(NetworkToLocationProps {
                    network: network?,
                    location: location?,
                })
            }
            "capability" | "capacity" => {
                let props = self.heat(p, path, pos, &what)?;
                if t == "capability" {
                    ConstraintKind::Capability(props)
                } else {
                    ConstraintKind::Capacity(props)
                }
            }
            _ => return None,
        })
    }

    fn attribute(&mut self, v: &Value, path: &Path) -> Option<AttributeProps> {
        let m = self.map(
            v,
            path,
            "a mapping of attribute names to values or operators",
        )?;
        if m.is_empty() {
            self.error(
                path,
                v.pos,
                "expected at least one attribute to evaluate; found an empty mapping",
            );
            return None;
        }
        let mut evaluate = IndexMap::new();
        let mut ok = true;
        for (k, av) in m.iter() {
            let apath = path.key(&k.name);
            let ops = match &av.kind {
                Kind::Map(ops) => {
                    if ops.is_empty() {
                        self.error(
                            &apath,
                            av.pos,
                            "expected an operator such as `{gt: 1.0}`; found an empty mapping",
                        );
                        ok = false;
                        continue;
                    }
                    let mut list = Vec::new();
                    for (op, operand) in ops.iter() {
                        match self.attribute_op(&op.name, op.pos, operand, &apath.key(&op.name)) {
                            Some(o) => list.push(o),
                            None => ok = false,
                        }
                    }
                    list
                }
                Kind::Null => {
                    self.type_error(&apath, av, "a value or an operator mapping");
                    ok = false;
                    continue;
                }
                _ => vec![AttributeOp::Eq(av.to_json())],
            };
            evaluate.insert(k.name.clone(), ops);
        }
        ok.then_some(AttributeProps { evaluate })
    }

    fn attribute_op(
        &mut self,
        op: &str,
        op_pos: Pos,
        v: &Value,
        path: &Path,
    ) -> Option<AttributeOp> {
        let number = |r: &mut Self| -> Option<f64> {
            // "strings are converted to float" (seed); anything else must be a number.
            r.number(v, path)
        };
        let list = |r: &mut Self| -> Option<Vec<serde_json::Value>> {
            match v.as_seq() {
                Some(items) => Some(items.iter().map(Value::to_json).collect()),
                None => {
                    r.type_error(path, v, &format!("a list of values for `{op}`"));
                    None
                }
            }
        };
        Some(match op {
            "eq" => AttributeOp::Eq(v.to_json()),
            "ne" => AttributeOp::Ne(v.to_json()),
            "lt" => AttributeOp::Lt(number(self)?),
            "gt" => AttributeOp::Gt(number(self)?),
            "lte" => AttributeOp::Lte(number(self)?),
            "gte" => AttributeOp::Gte(number(self)?),
            "any" => AttributeOp::Any(list(self)?),
            "all" => AttributeOp::All(list(self)?),
            "regex" => {
                let Some(text) = v.as_str() else {
                    self.type_error(path, v, "a regular expression string such as `/^SRIOV$/i`");
                    return None;
                };
                let pattern = parse_pattern(text);
                // Templates repeat patterns across constraints: compile each distinct one once.
                let key = (pattern.pattern.clone(), pattern.case_insensitive);
                if self.valid_patterns.contains(&key) {
                    return Some(AttributeOp::Regex(pattern));
                }
                if let Err(e) = pattern.compile() {
                    let text_err = e.to_string();
                    let last = text_err.lines().last().unwrap_or_default().trim();
                    let first = last.strip_prefix("error: ").unwrap_or(last).to_owned();
                    self.error(
                        path,
                        v.pos,
                        format!("invalid regular expression `{text}`: {first}"),
                    );
                    return None;
                }
                self.valid_patterns.insert(key);
                AttributeOp::Regex(pattern)
            }
            _ => {
                let msg = format!(
                    "unknown evaluation operator `{op}`; expected one of {}{}",
                    AttributeOp::NAMES.join(", "),
                    did_you_mean(op, AttributeOp::NAMES)
                );
                self.error(path, op_pos, msg);
                return None;
            }
        })
    }

    fn threshold_checks(&mut self, v: &Value, path: &Path) -> Option<ThresholdProps> {
        let items: Vec<&Value> = match &v.kind {
            Kind::Seq(items) => items.iter().collect(),
            Kind::Map(_) => vec![v],
            _ => {
                self.type_error(
                    path,
                    v,
                    "a list of {attribute, operator, threshold, unit} checks",
                );
                return None;
            }
        };
        if items.is_empty() {
            self.error(
                path,
                v.pos,
                "expected at least one threshold check; found an empty list",
            );
            return None;
        }
        let single = v.as_map().is_some();
        let mut evaluate = Vec::new();
        let mut ok = true;
        for (i, item) in items.into_iter().enumerate() {
            let ip = if single { path.clone() } else { path.index(i) };
            match self.threshold_check(item, &ip) {
                Some(c) => evaluate.push(c),
                None => ok = false,
            }
        }
        ok.then_some(ThresholdProps { evaluate })
    }

    fn threshold_check(&mut self, v: &Value, path: &Path) -> Option<ThresholdCheck> {
        let m = self.map(
            v,
            path,
            "a threshold check mapping {attribute, operator, threshold, unit}",
        )?;
        self.check_keys(m, path, &THRESHOLD_CHECK_KEYS, "a threshold check");
        let what = "a threshold check";
        let attribute = self
            .required(m, "attribute", path, v.pos, what)
            .and_then(|a| self.text(a, &path.key("attribute")));
        let operator = self
            .required(m, "operator", path, v.pos, what)
            .and_then(|o| {
                let s = self.text(o, &path.key("operator"))?;
                CompareOp::ALL
                    .into_iter()
                    .find(|c| c.as_str() == s)
                    .or_else(|| {
                        let all: Vec<&str> = CompareOp::ALL.iter().map(|c| c.as_str()).collect();
                        self.error(
                            &path.key("operator"),
                            o.pos,
                            format!("unknown operator `{s}`; expected one of {}", all.join(", ")),
                        );
                        None
                    })
            });
        let tv = self.required(m, "threshold", path, v.pos, what);
        let value = tv.and_then(|t| self.number(t, &path.key("threshold")));
        let unit = self.opt_text(m, "unit", path).filter(|u| !u.is_empty());
        let (attribute, operator, value) = (attribute?, operator?, value?);
        let mut bound = None;
        if let Some(u) = &unit {
            match Unit::lookup(u) {
                Some(known) => {
                    let op = match operator {
                        CompareOp::Eq => Some(Op::Eq),
                        CompareOp::Lt => Some(Op::Lt),
                        CompareOp::Gt => Some(Op::Gt),
                        CompareOp::Lte => Some(Op::Le),
                        CompareOp::Gte => Some(Op::Ge),
                        CompareOp::Ne => None,
                    };
                    if let Some(op) = op {
                        match Threshold::compare(op, Quantity::new(value, known)) {
                            Ok(t) => bound = Some(t),
                            Err(e) => {
                                let pos = tv.map_or(v.pos, |t| t.pos);
                                self.error(
                                    &path.key("threshold"),
                                    pos,
                                    format!("invalid threshold: {}", e.message()),
                                );
                                return None;
                            }
                        }
                    }
                }
                None => {
                    let pos = m.get("unit").map_or(v.pos, |u| u.pos);
                    self.warning(&path.key("unit"), pos, format!("unit `{u}` is not a known unit; the threshold is compared as a plain number"));
                }
            }
        }
        Some(ThresholdCheck {
            attribute,
            operator,
            value,
            unit,
            bound,
        })
    }

    fn qualifier(&mut self, v: &Value, path: &Path) -> Option<ZoneQualifier> {
        match self.text(v, path)?.as_str() {
            "same" => Some(ZoneQualifier::Same),
            "different" => Some(ZoneQualifier::Different),
            other => {
                let msg =
                    format!("unknown zone qualifier `{other}`; expected one of same, different");
                self.error(path, v.pos, msg);
                None
            }
        }
    }

    fn category(&mut self, v: &Value, path: &Path) -> Option<ZoneCategory> {
        let s = self.text(v, path)?;
        ZoneCategory::parse(&s).or_else(|| {
            let all: Vec<&str> = ZoneCategory::ALL.iter().map(|c| c.as_str()).collect();
            let msg = format!(
                "unknown zone category `{s}`; expected one of {} (optionally with a `_zone` suffix)",
                all.join(", ")
            );
            self.error(path, v.pos, msg);
            None
        })
    }

    fn network(&mut self, p: &Map, path: &Path, pos: Pos, t: &str) -> Option<NetworkProps> {
        let mut n = NetworkProps::default();
        let mut ok = true;
        for (key, family, unit) in [
            ("bandwidth", Family::Throughput, Unit::Mbps),
            ("distance", Family::Distance, Unit::Km),
            ("latency", Family::Time, Unit::Ms),
        ] {
            let Some(v) = p.get(key).filter(|v| !v.is_null()) else {
                continue;
            };
            let parsed = self.threshold(v, &path.key(key), family, unit);
            ok &= parsed.is_some();
            match key {
                "bandwidth" => n.bandwidth = parsed,
                "distance" => n.distance = parsed,
                _ => n.latency = parsed,
            }
        }
        let present = ["bandwidth", "distance", "latency"]
            .iter()
            .any(|k| p.get(k).is_some_and(|v| !v.is_null()));
        if !present {
            self.error(path, pos, format!("a {t} constraint needs at least one of bandwidth, distance, latency; found none"));
            return None;
        }
        ok.then_some(n)
    }

    fn heat(&mut self, p: &Map, path: &Path, pos: Pos, what: &str) -> Option<HeatProps> {
        let specification = self
            .opt_text(p, "specification", path)
            .unwrap_or_else(|| "heat".to_owned());
        if specification != "heat" {
            let spos = p.get("specification").map_or(pos, |s| s.pos);
            self.error(
                &path.key("specification"),
                spos,
                format!("unsupported specification `{specification}`; expected heat"),
            );
        }
        let template = self
            .required(p, "template", path, pos, what)
            .and_then(|t| self.heat_source(t, &path.key("template")));
        if let (Some(text), Some(tv)) = (&template, p.get("template"))
            && stack_servers(text) == Some(0)
        {
            self.warning(
                &path.key("template"),
                tv.pos,
                "the Heat stack declares no OS::Nova::Server; it fits every candidate",
            );
        }
        let environment = p
            .get("environment")
            .filter(|e| !e.is_null())
            .and_then(|e| self.heat_source(e, &path.key("environment")));
        if specification != "heat" {
            return None;
        }
        Some(HeatProps {
            specification,
            template: template?,
            environment,
        })
    }

    /// A Heat template or environment: a URI or YAML/JSON text; a mapping is kept as JSON text.
    fn heat_source(&mut self, v: &Value, path: &Path) -> Option<String> {
        match &v.kind {
            Kind::Str(s) => Some(s.clone()),
            Kind::Map(_) => Some(v.to_json().to_string()),
            _ => {
                self.type_error(path, v, "a URI or a YAML/JSON document");
                None
            }
        }
    }

    fn hpa(&mut self, v: &Value, path: &Path) -> Option<HpaProps> {
        let Some(items) = v.as_seq() else {
            self.type_error(
                path,
                v,
                "a list of flavor requirements {id, type, directives, flavorProperties}",
            );
            return None;
        };
        if items.is_empty() {
            self.error(
                path,
                v.pos,
                "expected at least one flavor requirement; found an empty list",
            );
            return None;
        }
        let mut evaluate = Vec::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            match self.hpa_flavor(item, &path.index(i)) {
                Some(f) => evaluate.push(f),
                None => ok = false,
            }
        }
        ok.then_some(HpaProps { evaluate })
    }

    fn hpa_flavor(&mut self, v: &Value, path: &Path) -> Option<HpaFlavor> {
        let m = self.map(
            v,
            path,
            "a flavor requirement {id, type, directives, flavorProperties}",
        )?;
        self.check_keys(m, path, &HPA_FLAVOR_KEYS, "an hpa flavor requirement");
        let what = "an hpa flavor requirement";
        let id = self
            .required(m, "id", path, v.pos, what)
            .and_then(|x| self.name(x, &path.key("id"), "a non-empty id"));
        let type_name = self
            .required(m, "type", path, v.pos, what)
            .and_then(|x| self.name(x, &path.key("type"), "a non-empty type"));
        let directives = self
            .required(m, "directives", path, v.pos, what)
            .and_then(|d| self.opaque_list(d, &path.key("directives")));
        let fp = path.key("flavorProperties");
        let features = self
            .required(m, "flavorProperties", path, v.pos, what)
            .and_then(|f| {
                let Some(items) = f.as_seq() else {
                    self.type_error(&fp, f, "a list of hpa features");
                    return None;
                };
                if items.is_empty() {
                    self.error(
                        &fp,
                        f.pos,
                        "expected at least one hpa feature; found an empty list",
                    );
                    return None;
                }
                let mut out = Vec::new();
                let mut ok = true;
                for (i, item) in items.iter().enumerate() {
                    match self.hpa_feature(item, &fp.index(i)) {
                        Some(x) => out.push(x),
                        None => ok = false,
                    }
                }
                ok.then_some(out)
            });
        Some(HpaFlavor {
            id: id?,
            type_name: type_name?,
            directives: directives?,
            flavor_properties: features?,
        })
    }

    fn opaque_list(&mut self, v: &Value, path: &Path) -> Option<Vec<serde_json::Value>> {
        match v.as_seq() {
            Some(items) => Some(items.iter().map(Value::to_json).collect()),
            None => {
                self.type_error(path, v, "a list");
                None
            }
        }
    }

    fn hpa_feature(&mut self, v: &Value, path: &Path) -> Option<HpaFeature> {
        let m = self.map(v, path, "an hpa feature mapping")?;
        self.check_keys(m, path, &HPA_FEATURE_KEYS, "an hpa feature");
        let what = "an hpa feature";
        let feature = self
            .required(m, "hpa-feature", path, v.pos, what)
            .and_then(|x| self.text(x, &path.key("hpa-feature")));
        let version = self
            .required(m, "hpa-version", path, v.pos, what)
            .and_then(|x| self.text(x, &path.key("hpa-version")));
        let architecture = self
            .required(m, "architecture", path, v.pos, what)
            .and_then(|x| self.text(x, &path.key("architecture")));
        let mandatory = self
            .required(m, "mandatory", path, v.pos, what)
            .and_then(|x| self.boolean(x, &path.key("mandatory")));
        let score = match m.get("score").filter(|s| !s.is_null()) {
            Some(s) => Some(self.number(s, &path.key("score"))?),
            None => None,
        };
        if mandatory == Some(false) && score.is_none() {
            self.error(
                path,
                v.pos,
                "an optional hpa feature (mandatory: false) needs a `score`; found none",
            );
            return None;
        }
        let directives = match m.get("directives").filter(|d| !d.is_null()) {
            Some(d) => self.opaque_list(d, &path.key("directives"))?,
            None => Vec::new(),
        };
        let ap = path.key("hpa-feature-attributes");
        let attributes = self
            .required(m, "hpa-feature-attributes", path, v.pos, what)
            .and_then(|a| {
                let Some(items) = a.as_seq() else {
                    self.type_error(&ap, a, "a list of hpa feature attributes");
                    return None;
                };
                let mut out = Vec::new();
                let mut ok = true;
                for (i, item) in items.iter().enumerate() {
                    match self.hpa_attribute(item, &ap.index(i)) {
                        Some(x) => out.push(x),
                        None => ok = false,
                    }
                }
                ok.then_some(out)
            });
        Some(HpaFeature {
            feature: feature?,
            version: version?,
            architecture: architecture?,
            mandatory: mandatory?,
            score,
            directives,
            attributes: attributes?,
        })
    }

    fn hpa_attribute(&mut self, v: &Value, path: &Path) -> Option<HpaAttribute> {
        let m = self.map(v, path, "an hpa feature attribute mapping")?;
        self.check_keys(m, path, &HPA_ATTRIBUTE_KEYS, "an hpa feature attribute");
        let what = "an hpa feature attribute";
        let key = self
            .required(m, "hpa-attribute-key", path, v.pos, what)
            .and_then(|x| self.text(x, &path.key("hpa-attribute-key")));
        let value = self
            .required(m, "hpa-attribute-value", path, v.pos, what)
            .map(|x| match &x.kind {
                Kind::Seq(_) | Kind::Map(_) => x.to_json().to_string(),
                _ => x.scalar_text().unwrap_or_default(),
            });
        let operator = self.required(m, "operator", path, v.pos, what).and_then(|o| {
            let s = self.text(o, &path.key("operator"))?;
            HpaOperator::parse(&s).or_else(|| {
                self.error(&path.key("operator"), o.pos, format!("unknown hpa operator `{s}`; expected one of =, !=, <, <=, >, >=, ALL, ANY"));
                None
            })
        });
        let unit = self.opt_text(m, "unit", path).filter(|u| !u.is_empty());
        Some(HpaAttribute {
            key: key?,
            value: value?,
            operator: operator?,
            unit,
        })
    }
}

/// `/pattern/flags` (flags of `imsx`; only `i` changes matching) or a bare pattern.
fn parse_pattern(text: &str) -> Pattern {
    if let Some(body) = text.strip_prefix('/')
        && let Some(end) = body.rfind('/')
    {
        let flags = &body[end + 1..];
        if flags.chars().all(|c| "imsx".contains(c)) {
            let mut pattern = body[..end].to_owned();
            let inline: String = flags.chars().filter(|c| *c != 'i').collect();
            if !inline.is_empty() {
                pattern = format!("(?{inline}){pattern}");
            }
            return Pattern {
                pattern,
                case_insensitive: flags.contains('i'),
            };
        }
    }
    Pattern {
        pattern: text.to_owned(),
        case_insensitive: false,
    }
}

/// How many `OS::Nova::Server` resources an inline Heat stack declares (`None` for a URI or
/// a text that does not parse: those are judged where the stack is used).
fn stack_servers(text: &str) -> Option<usize> {
    let t = text.trim();
    if !t.contains('\n') && t.contains("://") {
        return None;
    }
    let doc = berth_doc::parse(t).ok()?;
    let top = doc.as_map()?;
    let Some(resources) = top.get("resources") else {
        return Some(0);
    };
    if resources.is_null() {
        return Some(0);
    }
    let n = resources
        .as_map()?
        .iter()
        .filter(|(_, r)| {
            r.as_map()
                .and_then(|m| m.get("type"))
                .and_then(Value::as_str)
                == Some("OS::Nova::Server")
        })
        .count();
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::parse_pattern;

    #[test]
    fn patterns_take_slash_delimiters_and_flags() {
        let p = parse_pattern("/^SRIOV$/i");
        assert_eq!(p.pattern, "^SRIOV$");
        assert!(p.case_insensitive);
        assert!(p.compile().is_ok_and(|r| r.is_match("sriov")));
        let bare = parse_pattern("^a/b$");
        assert_eq!(bare.pattern, "^a/b$");
        assert!(!bare.case_insensitive);
        assert_eq!(parse_pattern("/x/s").pattern, "(?s)x");
    }
}
