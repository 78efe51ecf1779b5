//! Structural loading: spanned document -> [`Descriptor`], reporting every problem found.

use berth_doc::{Diagnostics, Kind, Map, Path, Pos, Value};
use indexmap::IndexMap;

use crate::model::{
    Capability, ClusterDef, Component, Count, Descriptor, Endpoint, Expr, Modifier, OpCall,
    PolicyDef, Promotion, Properties, PropertyDef, Reference, Relationship, State,
};
use crate::template::Template;
use crate::version::{TypeKind, TypeRef, is_valid_name};

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "properties",
    "capabilities",
    "requirements",
    "operations",
    "composition",
    "references",
    "relationships",
    "metrics",
    "policies",
];
const PROPERTY_KEYS: &[&str] = &[
    "type",
    "required",
    "default",
    "value",
    "description",
    "read-only",
];
const COMPONENT_KEYS: &[&str] = &["type", "quantity", "cluster", "properties", "description"];
const CLUSTER_KEYS: &[&str] = &[
    "initial-quantity",
    "minimum-nodes",
    "maximum-nodes",
    "scaling-increment",
];
const REFERENCE_KEYS: &[&str] = &["type", "properties", "description"];
const RELATIONSHIP_KEYS: &[&str] = &[
    "source-capabilities",
    "target-requirements",
    "source-state",
    "target-state",
    "source-state-modifier",
    "target-state-modifier",
    "properties",
    "lifecycle",
    "description",
];
const POLICY_KEYS: &[&str] = &["type", "metric", "target", "properties", "description"];
const POLICY_PROPERTY_KEYS: &[&str] = &["scaleOut_threshold", "scaleIn_threshold", "smoothing"];
/// Names that templates and lifecycles give a meaning of their own.
const RESERVED: &[&str] = &["instance", "source", "target"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum NameRule {
    /// Property, capability, relationship … names: non-empty, no dots.
    NoDots,
    /// Component and reference names: they become instance names.
    Strict,
}

/// Loads a parsed document; the descriptor is best effort when diagnostics hold errors.
pub(crate) fn load(doc: &Value) -> (Descriptor, Diagnostics) {
    let mut l = Loader {
        diags: Diagnostics::new(),
    };
    let d = l.descriptor(doc);
    (d, l.diags)
}

struct Loader {
    diags: Diagnostics,
}

fn one_of(list: &[&str]) -> String {
    list.join(", ")
}

impl Loader {
    fn descriptor(&mut self, doc: &Value) -> Descriptor {
        let mut d = Descriptor::default();
        let root = Path::root();
        let Some(top) = doc.as_map() else {
            self.diags.error(
                &root,
                doc.pos,
                format!(
                    "assembly descriptor is a {}; expected a mapping with `name`, `composition`, …",
                    doc.type_name()
                ),
            );
            return d;
        };
        self.keys(top, &root, TOP_KEYS);
        match top.get("name") {
            None => self.diags.error(
                &root.key("name"),
                doc.pos,
                "missing `name`; expected `assembly::NAME::VERSION`",
            ),
            Some(v) => {
                if let Some(text) = self.string(v, &root.key("name")) {
                    match TypeRef::parse(&text, &[TypeKind::Assembly], false) {
                        Ok(t) => {
                            d.name = t.name;
                            d.version = t.version.as_exact();
                        }
                        Err(e) => {
                            self.diags.error(&root.key("name"), v.pos, e.to_string());
                            // Keep a usable name for the plan header of a best-effort load.
                            d.name = text;
                        }
                    }
                }
            }
        }
        match top.get("description") {
            Some(v) => d.description = self.string(v, &root.key("description")),
            None => self.diags.warning(
                &root.key("description"),
                doc.pos,
                "missing `description`; expected a sentence saying what the assembly is for",
            ),
        }
        d.properties = self.properties(top.get("properties"), &root.key("properties"), true);
        for (name, v, path, pos) in self.section(top, "composition", NameRule::Strict) {
            let c = self.component(v, &path, pos);
            d.composition.insert(name, c);
        }
        for (name, v, path, pos) in self.section(top, "references", NameRule::Strict) {
            if d.composition.contains_key(&name) {
                self.diags.error(
                    &path,
                    pos,
                    format!("`{name}` is declared in both composition and references; expected unique names"),
                );
                continue;
            }
            let r = self.reference(v, &path, pos);
            d.references.insert(name, r);
        }
        for (name, v, path, _) in self.section(top, "capabilities", NameRule::NoDots) {
            if let Some(c) = self.capability(v, &path) {
                d.capabilities.insert(name, c);
            }
        }
        for (name, v, path, _) in self.section(top, "requirements", NameRule::NoDots) {
            if let Some(c) = self.capability(v, &path) {
                d.requirements.insert(name, c);
            }
        }
        for (name, v, path, _) in self.section(top, "operations", NameRule::NoDots) {
            let p = self.promotion(&d, v, &path, "source-operation", &["properties"]);
            if let Some(p) = p {
                d.operations.insert(name, p);
            }
        }
        for (name, v, path, _) in self.section(top, "metrics", NameRule::NoDots) {
            if let Some(p) = self.promotion(&d, v, &path, "source-metric", &[]) {
                d.metrics.insert(name, p);
            }
        }
        for (name, v, path, pos) in self.section(top, "relationships", NameRule::NoDots) {
            if let Some(r) = self.relationship(&d, v, &path, pos) {
                d.relationships.insert(name, r);
            }
        }
        for (name, v, path, pos) in self.section(top, "policies", NameRule::NoDots) {
            if let Some(p) = self.policy(&d, v, &path, pos) {
                d.policies.insert(name, p);
            }
        }
        d
    }

    // ---- generic helpers ----

    fn keys(&mut self, m: &Map, path: &Path, allowed: &[&str]) {
        for (k, _) in m.iter() {
            if !allowed.contains(&k.name.as_str()) {
                self.diags.error(
                    &path.key(k.name.clone()),
                    k.pos,
                    format!(
                        "unknown key `{}`; expected one of {}",
                        k.name,
                        one_of(allowed)
                    ),
                );
            }
        }
    }

    /// A mapping, or `None` (null counts as empty and is not reported).
    fn map<'v>(&mut self, v: &'v Value, path: &Path, expected: &str) -> Option<&'v Map> {
        match &v.kind {
            Kind::Map(m) => Some(m),
            Kind::Null => None,
            _ => {
                self.diags.error(
                    path,
                    v.pos,
                    format!("found a {}; expected {expected}", v.type_name()),
                );
                None
            }
        }
    }

    fn string(&mut self, v: &Value, path: &Path) -> Option<String> {
        match &v.kind {
            Kind::Str(s) => Some(s.clone()),
            _ => {
                self.diags.error(
                    path,
                    v.pos,
                    format!("found a {}; expected a string", v.type_name()),
                );
                None
            }
        }
    }

    fn boolean(&mut self, v: &Value, path: &Path) -> bool {
        match v.as_bool() {
            Some(b) => b,
            None => {
                self.diags.error(
                    path,
                    v.pos,
                    format!("found a {}; expected true or false", v.type_name()),
                );
                false
            }
        }
    }

    /// A scalar that may hold `${…}` references; null is absent.
    fn expr(&mut self, v: &Value, path: &Path) -> Option<Expr> {
        if v.is_null() {
            return None;
        }
        let Some(text) = (match &v.kind {
            Kind::Seq(_) | Kind::Map(_) => None,
            _ => v.scalar_text(),
        }) else {
            self.diags.error(
                path,
                v.pos,
                format!("found a {}; expected a scalar value", v.type_name()),
            );
            return None;
        };
        let template = match Template::parse(&text) {
            Ok(t) => Some(t),
            Err(msg) => {
                self.diags.error(path, v.pos, msg);
                None
            }
        };
        Some(Expr {
            text,
            pos: v.pos,
            template,
        })
    }

    fn name_ok(&mut self, name: &str, rule: NameRule, path: &Path, pos: Pos) -> bool {
        if name.is_empty() || name.contains('.') {
            self.diags.error(
                path,
                pos,
                format!("invalid name `{name}`; expected a non-empty name without dots"),
            );
            return false;
        }
        if rule == NameRule::Strict {
            if !is_valid_name(name) {
                self.diags.error(
                    path,
                    pos,
                    format!(
                        "invalid name `{name}`; expected a letter first, then letters, digits, `_` or `-`, ending with a letter or digit"
                    ),
                );
                return false;
            }
            if RESERVED.contains(&name) {
                self.diags.error(
                    path,
                    pos,
                    format!(
                        "`{name}` is reserved; expected a name other than instance, source, target"
                    ),
                );
                return false;
            }
        }
        true
    }

    /// The entries of a top-level section: `(name, value, path, key position)`.
    fn section<'v>(
        &mut self,
        top: &'v Map,
        key: &str,
        rule: NameRule,
    ) -> Vec<(String, &'v Value, Path, Pos)> {
        let path = Path::root().key(key);
        let Some(v) = top.get(key) else {
            return Vec::new();
        };
        let Some(m) = self.map(v, &path, "a mapping of named entries") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (k, v) in m.iter() {
            let p = path.key(k.name.clone());
            if self.name_ok(&k.name, rule, &p, k.pos) {
                out.push((k.name.clone(), v, p, k.pos));
            }
        }
        out
    }

    /// A dotted `owner.name` string.
    fn dotted(&mut self, v: &Value, path: &Path, what: &str) -> Option<(String, String)> {
        let text = self.string(v, path)?;
        match text.split_once('.') {
            Some((o, n)) if !o.is_empty() && !n.is_empty() && !n.contains('.') => {
                Some((o.to_owned(), n.to_owned()))
            }
            _ => {
                self.diags.error(
                    path,
                    v.pos,
                    format!("malformed `{text}`; expected `component.{what}`"),
                );
                None
            }
        }
    }

    fn check_owner(&mut self, d: &Descriptor, owner: &str, path: &Path, pos: Pos) -> bool {
        if d.composition.contains_key(owner) || d.references.contains_key(owner) {
            return true;
        }
        self.diags.error(
            path,
            pos,
            format!(
                "unknown component or reference `{owner}`; expected one of {}",
                declared(d)
            ),
        );
        false
    }

    // ---- sections ----

    fn properties(&mut self, v: Option<&Value>, path: &Path, top: bool) -> Properties {
        let mut out = IndexMap::new();
        let Some(v) = v else { return out };
        let Some(m) = self.map(v, path, "a mapping of property names to definitions") else {
            return out;
        };
        for (k, pv) in m.iter() {
            let p = path.key(k.name.clone());
            if !self.name_ok(&k.name, NameRule::NoDots, &p, k.pos) {
                continue;
            }
            let mut def = PropertyDef {
                type_name: None,
                required: false,
                default: None,
                value: None,
                description: None,
                read_only: false,
                pos: k.pos,
            };
            if let Some(pm) = self.map(
                pv,
                &p,
                "a mapping with `value`, `default`, `type`, `required`, `read-only` or `description`",
            ) {
                self.keys(pm, &p, PROPERTY_KEYS);
                for (fk, fv) in pm.iter() {
                    let fp = p.key(fk.name.clone());
                    match fk.name.as_str() {
                        "type" => def.type_name = self.string(fv, &fp),
                        "required" => {
                            def.required = self.boolean(fv, &fp);
                            if def.required && !top {
                                self.diags.warning(
                                    &fp,
                                    fv.pos,
                                    "`required` only applies to the top-level properties; ignored here",
                                );
                            }
                        }
                        "default" => def.default = self.expr(fv, &fp),
                        "value" => def.value = self.expr(fv, &fp),
                        "description" => def.description = self.string(fv, &fp),
                        "read-only" => def.read_only = self.boolean(fv, &fp),
                        _ => {}
                    }
                }
            }
            out.insert(k.name.clone(), def);
        }
        out
    }

    fn component(&mut self, v: &Value, path: &Path, pos: Pos) -> Component {
        let mut c = Component {
            type_ref: None,
            count: Count::Quantity(None),
            properties: IndexMap::new(),
            pos,
        };
        let Some(m) = self.map(
            v,
            path,
            "a mapping with `type`, `quantity` or `cluster`, `properties`",
        ) else {
            if v.is_null() {
                self.diags
                    .error(path, v.pos, "empty component; expected at least `type`");
            }
            return c;
        };
        self.keys(m, path, COMPONENT_KEYS);
        c.type_ref = self.type_field(m, path, pos, false);
        if let Some(dv) = m.get("description") {
            self.string(dv, &path.key("description"));
        }
        let quantity = m
            .get("quantity")
            .and_then(|q| self.expr(q, &path.key("quantity")));
        match m.entry("cluster") {
            Some((ck, cv)) => {
                if quantity.is_some() {
                    self.diags.error(
                        &path.key("cluster"),
                        ck.pos,
                        "both `quantity` and `cluster` given; expected one of them",
                    );
                }
                let cp = path.key("cluster");
                let mut def = ClusterDef {
                    initial_quantity: None,
                    minimum_nodes: None,
                    maximum_nodes: None,
                    scaling_increment: None,
                    pos: cv.pos,
                };
                if let Some(cm) =
                    self.map(cv, &cp, "a mapping with minimum-nodes, maximum-nodes, …")
                {
                    self.keys(cm, &cp, CLUSTER_KEYS);
                    let mut f = |k: &str| cm.get(k).and_then(|x| self.expr(x, &cp.key(k)));
                    def.initial_quantity = f("initial-quantity");
                    def.minimum_nodes = f("minimum-nodes");
                    def.maximum_nodes = f("maximum-nodes");
                    def.scaling_increment = f("scaling-increment");
                }
                c.count = Count::Cluster(def);
            }
            None => c.count = Count::Quantity(quantity),
        }
        c.properties = self.properties(m.get("properties"), &path.key("properties"), false);
        c
    }

    fn type_field(&mut self, m: &Map, path: &Path, pos: Pos, range: bool) -> Option<TypeRef> {
        let Some(tv) = m.get("type") else {
            self.diags.error(
                &path.key("type"),
                pos,
                "missing `type`; expected `resource::NAME::VERSION` or `assembly::NAME::VERSION`",
            );
            return None;
        };
        let text = self.string(tv, &path.key("type"))?;
        match TypeRef::parse(&text, &[TypeKind::Resource, TypeKind::Assembly], range) {
            Ok(t) => Some(t),
            Err(e) => {
                self.diags.error(&path.key("type"), tv.pos, e.to_string());
                None
            }
        }
    }

    fn reference(&mut self, v: &Value, path: &Path, pos: Pos) -> Reference {
        let mut r = Reference {
            type_ref: None,
            properties: IndexMap::new(),
            pos,
        };
        let Some(m) = self.map(v, path, "a mapping with `type` and `properties`") else {
            if v.is_null() {
                self.diags
                    .error(path, v.pos, "empty reference; expected at least `type`");
            }
            return r;
        };
        self.keys(m, path, REFERENCE_KEYS);
        r.type_ref = self.type_field(m, path, pos, true);
        if let Some(dv) = m.get("description") {
            self.string(dv, &path.key("description"));
        }
        r.properties = self.properties(m.get("properties"), &path.key("properties"), false);
        r
    }

    fn capability(&mut self, v: &Value, path: &Path) -> Option<Capability> {
        let m = self.map(v, path, "a mapping with `type`")?;
        self.keys(m, path, &["type", "description"]);
        let description = m
            .get("description")
            .and_then(|dv| self.string(dv, &path.key("description")));
        let Some(tv) = m.get("type") else {
            self.diags.error(
                &path.key("type"),
                v.pos,
                "missing `type`; expected the agreed capability type, e.g. `neutronNetwork`",
            );
            return None;
        };
        let type_name = self.string(tv, &path.key("type"))?;
        Some(Capability {
            type_name,
            description,
        })
    }

    fn promotion(
        &mut self,
        d: &Descriptor,
        v: &Value,
        path: &Path,
        field: &str,
        extra: &[&str],
    ) -> Option<Promotion> {
        let m = self.map(v, path, &format!("a mapping with `{field}`"))?;
        let mut allowed = vec![field, "description"];
        allowed.extend_from_slice(extra);
        self.keys(m, path, &allowed);
        let description = m
            .get("description")
            .and_then(|dv| self.string(dv, &path.key("description")));
        if let Some(pv) = m.get("properties") {
            self.properties(Some(pv), &path.key("properties"), false);
        }
        let what = if field == "source-metric" {
            "metric"
        } else {
            "operation"
        };
        let Some(sv) = m.get(field) else {
            self.diags.error(
                &path.key(field),
                v.pos,
                format!("missing `{field}`; expected `component.{what}`"),
            );
            return None;
        };
        let fp = path.key(field);
        let (owner, name) = self.dotted(sv, &fp, what)?;
        if !self.check_owner(d, &owner, &fp, sv.pos) {
            return None;
        }
        Some(Promotion {
            owner,
            name,
            description,
            pos: sv.pos,
        })
    }

    fn endpoints(&mut self, d: &Descriptor, m: &Map, path: &Path, source: bool) -> Vec<Endpoint> {
        let key = if source {
            "source-capabilities"
        } else {
            "target-requirements"
        };
        let what = if source { "capability" } else { "requirement" };
        let p = path.key(key);
        let mut out = Vec::new();
        let Some(v) = m.get(key) else {
            self.diags.error(
                &p,
                Pos::UNKNOWN,
                format!("missing `{key}`; expected a list of `component.{what}`"),
            );
            return out;
        };
        let Some(items) = v.as_seq() else {
            self.diags.error(
                &p,
                v.pos,
                format!(
                    "found a {}; expected a list of `component.{what}`",
                    v.type_name()
                ),
            );
            return out;
        };
        if items.is_empty() {
            self.diags.error(
                &p,
                v.pos,
                format!("empty `{key}`; expected at least one entry"),
            );
        }
        let mut any_known = false;
        for (i, item) in items.iter().enumerate() {
            let ip = p.index(i);
            let Some(text) = self.string(item, &ip) else {
                continue;
            };
            let (owner, name) = match text.split_once('.') {
                Some((o, n)) => (o.to_owned(), Some(n.to_owned())),
                None => (text.clone(), None),
            };
            if owner.is_empty()
                || name
                    .as_deref()
                    .is_some_and(|n| n.is_empty() || n.contains('.'))
            {
                self.diags.error(
                    &ip,
                    item.pos,
                    format!("malformed `{text}`; expected `component.{what}`"),
                );
                continue;
            }
            let is_comp = d.composition.contains_key(&owner);
            let is_ref = d.references.contains_key(&owner);
            any_known |= is_comp || is_ref;
            if is_ref && !source {
                self.diags.error(
                    &ip,
                    item.pos,
                    format!("reference `{owner}` used as a target; expected references only in source-capabilities"),
                );
                continue;
            }
            if is_comp && name.is_none() {
                self.diags.error(
                    &ip,
                    item.pos,
                    format!("component `{owner}` without a {what}; expected `{owner}.{what}`"),
                );
                continue;
            }
            if !is_comp && !is_ref {
                // The seed's own example names an undeclared `storage`; keep going, loudly.
                self.diags.warning(
                    &ip,
                    item.pos,
                    format!(
                        "unknown component `{owner}`; expected one of {}; this endpoint is skipped",
                        declared(d)
                    ),
                );
            }
            out.push(Endpoint {
                owner,
                name,
                known: is_comp || is_ref,
            });
        }
        if !any_known && !out.is_empty() {
            self.diags.error(
                &p,
                v.pos,
                format!("no declared component in `{key}`; expected at least one"),
            );
        }
        out
    }

    fn state(&mut self, m: &Map, path: &Path, key: &str, pos: Pos) -> Option<State> {
        let p = path.key(key);
        let Some(v) = m.get(key) else {
            self.diags.error(
                &p,
                pos,
                format!("missing `{key}`; expected Inactive or Active"),
            );
            return None;
        };
        let s = self.string(v, &p)?;
        if s.eq_ignore_ascii_case("active") {
            Some(State::Active)
        } else if s.eq_ignore_ascii_case("inactive") {
            Some(State::Inactive)
        } else {
            self.diags.error(
                &p,
                v.pos,
                format!("unknown state `{s}`; expected Inactive or Active"),
            );
            None
        }
    }

    fn modifier(&mut self, m: &Map, path: &Path, key: &str, default: Modifier) -> Modifier {
        let p = path.key(key);
        let Some(v) = m.get(key) else { return default };
        let Some(s) = self.string(v, &p) else {
            return default;
        };
        if s.eq_ignore_ascii_case("pre") {
            Modifier::Pre
        } else if s.eq_ignore_ascii_case("post") {
            Modifier::Post
        } else {
            self.diags.error(
                &p,
                v.pos,
                format!("unknown modifier `{s}`; expected pre or post"),
            );
            default
        }
    }

    fn relationship(
        &mut self,
        d: &Descriptor,
        v: &Value,
        path: &Path,
        pos: Pos,
    ) -> Option<Relationship> {
        let m = self.map(
            v,
            path,
            "a mapping with source-capabilities, target-requirements, …",
        )?;
        self.keys(m, path, RELATIONSHIP_KEYS);
        if let Some(dv) = m.get("description") {
            self.string(dv, &path.key("description"));
        }
        let sources = self.endpoints(d, m, path, true);
        let targets = self.endpoints(d, m, path, false);
        let source_state = self.state(m, path, "source-state", pos);
        let target_state = self.state(m, path, "target-state", pos);
        let source_modifier = self.modifier(m, path, "source-state-modifier", Modifier::Post);
        let target_modifier = self.modifier(m, path, "target-state-modifier", Modifier::Pre);
        let properties = self.properties(m.get("properties"), &path.key("properties"), false);
        let mut create = Vec::new();
        let mut cease = Vec::new();
        if let Some(lv) = m.get("lifecycle") {
            let lp = path.key("lifecycle");
            if let Some(lm) = self.map(lv, &lp, "a mapping with `Create` and `Cease` lists") {
                self.keys(lm, &lp, &["Create", "Cease"]);
                for (k, list) in lm.iter() {
                    let calls = match k.name.as_str() {
                        "Create" => &mut create,
                        "Cease" => &mut cease,
                        _ => continue,
                    };
                    let kp = lp.key(k.name.clone());
                    let Some(items) = list.as_seq() else {
                        if !list.is_null() {
                            self.diags.error(
                                &kp,
                                list.pos,
                                format!("found a {}; expected a list of `source.operation` or `target.operation`", list.type_name()),
                            );
                        }
                        continue;
                    };
                    for (i, item) in items.iter().enumerate() {
                        let ip = kp.index(i);
                        let Some((owner, operation)) = self.dotted(item, &ip, "operation") else {
                            continue;
                        };
                        if owner != "source"
                            && owner != "target"
                            && !d.composition.contains_key(&owner)
                            && !d.references.contains_key(&owner)
                        {
                            self.diags.error(
                                &ip,
                                item.pos,
                                format!("unknown operation owner `{owner}`; expected source, target or one of {}", declared(d)),
                            );
                            continue;
                        }
                        calls.push(OpCall { owner, operation });
                    }
                }
            }
        }
        let (Some(source_state), Some(target_state)) = (source_state, target_state) else {
            return None;
        };
        if source_modifier == Modifier::Pre {
            for e in sources
                .iter()
                .filter(|e| d.references.contains_key(&e.owner))
            {
                self.diags.error(
                    &path.key("source-state-modifier"),
                    pos,
                    format!(
                        "reference `{}` already exists, so `pre` cannot be honoured; expected post",
                        e.owner
                    ),
                );
            }
        }
        Some(Relationship {
            sources,
            targets,
            source_state,
            target_state,
            source_modifier,
            target_modifier,
            properties,
            create,
            cease,
            pos,
        })
    }

    fn policy(&mut self, d: &Descriptor, v: &Value, path: &Path, pos: Pos) -> Option<PolicyDef> {
        let m = self.map(
            v,
            path,
            "a mapping with `type`, `metric`, `target`, `properties`",
        )?;
        self.keys(m, path, POLICY_KEYS);
        if let Some(dv) = m.get("description") {
            self.string(dv, &path.key("description"));
        }
        match m.get("type") {
            None => self.diags.error(
                &path.key("type"),
                pos,
                "missing `type`; expected `policy::scale`",
            ),
            Some(tv) => {
                if let Some(t) = self.string(tv, &path.key("type"))
                    && t != "policy::scale"
                {
                    self.diags.error(
                        &path.key("type"),
                        tv.pos,
                        format!("unknown policy type `{t}`; expected `policy::scale`"),
                    );
                }
            }
        }
        let mut def = PolicyDef {
            metric: None,
            target: None,
            scale_out: None,
            scale_in: None,
            smoothing: None,
            pos,
        };
        match m.get("metric") {
            None => self.diags.error(
                &path.key("metric"),
                pos,
                "missing `metric`; expected `component.metric`",
            ),
            Some(mv) => {
                let mp = path.key("metric");
                if let Some((owner, name)) = self.dotted(mv, &mp, "metric")
                    && self.check_owner(d, &owner, &mp, mv.pos)
                {
                    def.metric = Some(Promotion {
                        owner,
                        name,
                        description: None,
                        pos: mv.pos,
                    });
                }
            }
        }
        match m.get("target") {
            None => self.diags.error(
                &path.key("target"),
                pos,
                "missing `target`; expected a clustered component",
            ),
            Some(tv) => {
                let tp = path.key("target");
                if let Some(t) = self.string(tv, &tp) {
                    match d.composition.get(&t) {
                        Some(c) if matches!(c.count, Count::Cluster(_)) => def.target = Some(t),
                        Some(_) => self.diags.error(
                            &tp,
                            tv.pos,
                            format!("component `{t}` has no `cluster`; expected a clustered component to scale"),
                        ),
                        None => self.diags.error(
                            &tp,
                            tv.pos,
                            format!(
                                "unknown component `{t}`; expected one of {}",
                                names(d.composition.keys())
                            ),
                        ),
                    }
                }
            }
        }
        let pp = path.key("properties");
        if let Some(pv) = m.get("properties")
            && let Some(pm) = self.map(
                pv,
                &pp,
                "a mapping of scaleOut_threshold, scaleIn_threshold, smoothing",
            )
        {
            self.keys(pm, &pp, POLICY_PROPERTY_KEYS);
            def.scale_out = pm
                .get("scaleOut_threshold")
                .and_then(|x| self.expr(x, &pp.key("scaleOut_threshold")));
            def.scale_in = pm
                .get("scaleIn_threshold")
                .and_then(|x| self.expr(x, &pp.key("scaleIn_threshold")));
            def.smoothing = pm
                .get("smoothing")
                .and_then(|x| self.expr(x, &pp.key("smoothing")));
        }
        if def.scale_out.is_none() && def.scale_in.is_none() {
            self.diags.error(
                &pp,
                m.get("properties").map_or(pos, |p| p.pos),
                "no threshold; expected `scaleOut_threshold`, `scaleIn_threshold` or both",
            );
        }
        Some(def)
    }
}

fn names<'a>(it: impl Iterator<Item = &'a String>) -> String {
    let v: Vec<&str> = it.map(String::as_str).collect();
    if v.is_empty() {
        "(none declared)".to_owned()
    } else {
        v.join(", ")
    }
}

/// Components and references, for "expected one of" messages.
pub(crate) fn declared(d: &Descriptor) -> String {
    names(d.composition.keys().chain(d.references.keys()))
}
