//! Loading a HOT template (YAML or JSON) with the seed 004 Proposal A extension, reporting
//! every problem with its field path and line:column.

use std::collections::BTreeMap;

use berth_doc::{Diagnostic, Diagnostics, Map, Path, Pos, Value};
use indexmap::IndexMap;

use crate::error::HeatError;
use crate::model::{Group, GroupId, Member, Policy, Reference, ResourceId, Template};
use crate::types::{RESOURCE_TYPES, is_provider_template};

mod groups;
mod policies;
mod resources;

pub(crate) const TOP_KEYS: &[&str] = &[
    "heat_template_version",
    "description",
    "parameter_groups",
    "parameters",
    "resources",
    "outputs",
    "conditions",
    "groups",
];
pub(crate) const RESOURCE_KEYS: &[&str] = &[
    "type",
    "properties",
    "metadata",
    "depends_on",
    "update_policy",
    "deletion_policy",
    "external_id",
    "condition",
    "policies",
    "relationships",
];
/// The types Berth places, for messages.
const PLACED: &str = "OS::Nova::Server, AWS::EC2::Instance, OS::Cinder::Volume, AWS::EC2::Volume";
pub(crate) const GROUP_KEYS: &[&str] = &["id", "members", "metadata", "policies", "relationships"];
pub(crate) const POLICY_KEYS: &[&str] = &["type", "properties", "metadata"];

/// A template and everything found while loading it.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    /// The template, when there were no errors.
    pub template: Option<Template>,
    /// Every error and warning, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses a template; errors and warnings are all reported.
#[must_use]
pub fn load(text: &str) -> Loaded {
    let doc = match berth_doc::parse(text) {
        Ok(v) => v,
        Err(d) => {
            return Loaded {
                template: None,
                diagnostics: vec![d],
            };
        }
    };
    let mut l = Loader::default();
    let template = l.document(&doc);
    let mut diagnostics = l.diags.into_vec();
    diagnostics.sort_by(|a, b| {
        (a.line, a.column, &a.path, &a.message).cmp(&(b.line, b.column, &b.path, &b.message))
    });
    let ok = !diagnostics.iter().any(Diagnostic::is_error);
    Loaded {
        template: template.filter(|_| ok),
        diagnostics,
    }
}

/// Parses a template, failing on any error (warnings are dropped).
///
/// # Errors
/// [`HeatError::Invalid`] with every diagnostic.
pub fn parse(text: &str) -> Result<Template, HeatError> {
    let loaded = load(text);
    match loaded.template {
        Some(t) => Ok(t),
        None => Err(HeatError::Invalid {
            diagnostics: loaded.diagnostics,
        }),
    }
}

/// Every diagnostic of a template (empty = valid without warnings).
#[must_use]
pub fn validate(text: &str) -> Vec<Diagnostic> {
    load(text).diagnostics
}

/// Where a policy list stands; decides which shapes are allowed.
#[derive(Clone, Copy)]
enum Site {
    Group,
    Resource(bool),
    Relationship,
}

/// A `get_group` reference waiting for every group to be known.
struct PendingGroup {
    owner: Member,
    relationship: usize,
    name: String,
    path: Path,
    pos: Pos,
}

#[derive(Default)]
struct Loader {
    diags: Diagnostics,
    policies: Vec<Policy>,
    names: IndexMap<String, (String, Pos)>,
    params: BTreeMap<String, Value>,
    groups: Vec<Group>,
    group_pos: BTreeMap<String, Pos>,
    member_of: Vec<Option<(GroupId, Path)>>,
    pending: Vec<PendingGroup>,
    /// Where each resource's `type` value stands (the resource itself when it has none).
    type_pos: Vec<Pos>,
}

fn expected_keys(map: &Map, allowed: &[&str], path: &Path, diags: &mut Diagnostics) {
    for (k, _) in map.iter() {
        if !allowed.contains(&k.name.as_str()) {
            let msg = match berth_doc::closest(&k.name, allowed.iter().copied()) {
                Some(near) => format!("unknown key `{}`; did you mean `{near}`?", k.name),
                None => format!(
                    "unknown key `{}`; expected one of {}",
                    k.name,
                    allowed.join(", ")
                ),
            };
            diags.error(&path.key(k.name.clone()), k.pos, msg);
        }
    }
}

impl Loader {
    fn document(&mut self, doc: &Value) -> Option<Template> {
        let root = Path::root();
        let Some(top) = doc.as_map() else {
            self.diags.error(
                &root,
                doc.pos,
                format!("template is a {}; expected a mapping", doc.type_name()),
            );
            return None;
        };
        expected_keys(top, TOP_KEYS, &root, &mut self.diags);
        let version = match top.entry("heat_template_version") {
            Some((_, v)) => v.scalar_text(),
            None => {
                self.diags.warning(
                    &root,
                    doc.pos,
                    "missing `heat_template_version`; expected a HOT version such as 2013-05-23",
                );
                None
            }
        };
        let description = top
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(params) = top.get("parameters").and_then(Value::as_map) {
            for (k, v) in params.iter() {
                if let Some(d) = v.as_map().and_then(|m| m.get("default")) {
                    self.params.insert(k.name.clone(), d.clone());
                }
            }
        }

        let rpath = root.key("resources");
        let empty = Map::default();
        let resources = match top.entry("resources") {
            Some((_, v)) => match v.as_map() {
                Some(m) => m,
                None => {
                    self.diags.error(
                        &rpath,
                        v.pos,
                        format!("`resources` is a {}; expected a mapping", v.type_name()),
                    );
                    &empty
                }
            },
            None => {
                self.diags.error(
                    &root,
                    doc.pos,
                    "missing `resources`; expected a mapping of resources",
                );
                &empty
            }
        };
        // Pass 1: names and types, so references resolve in any order.
        for (k, v) in resources.iter() {
            let p = rpath.key(k.name.clone());
            let ty = match v.as_map() {
                None => {
                    self.diags.error(
                        &p,
                        v.pos,
                        format!("resource is a {}; expected a mapping", v.type_name()),
                    );
                    String::new()
                }
                Some(m) => match m.entry("type") {
                    None => {
                        self.diags.error(
                            &p,
                            v.pos,
                            "missing `type`; expected a resource type such as OS::Nova::Server",
                        );
                        String::new()
                    }
                    Some((_, t)) => match t.as_str() {
                        Some(s) => s.to_owned(),
                        None => {
                            self.diags.error(
                                &p.key("type"),
                                t.pos,
                                format!("`type` is a {}; expected a string", t.type_name()),
                            );
                            String::new()
                        }
                    },
                },
            };
            let tpos = v
                .as_map()
                .and_then(|m| m.get("type"))
                .map_or(v.pos, |t| t.pos);
            if self.names.insert(k.name.clone(), (ty, k.pos)).is_none() {
                self.type_pos.push(tpos);
            }
        }
        self.member_of = vec![None; self.names.len()];

        // The group tree (every group id known before relationships are resolved).
        match top.entry("groups") {
            Some((_, v)) => {
                self.group(v, &root.key("groups"), None);
                for (i, (name, (_, pos))) in self.names.iter().enumerate() {
                    if self.member_of[i].is_none() {
                        self.diags.error(
                            &rpath.key(name.clone()),
                            *pos,
                            format!(
                                "resource `{name}` is in no group; expected every resource in exactly one group"
                            ),
                        );
                    }
                }
            }
            None => {
                self.groups.push(Group {
                    id: String::new(),
                    members: (0..self.names.len() as u32)
                        .map(|i| Member::Resource(ResourceId(i)))
                        .collect(),
                    metadata: serde_json::Value::Null,
                    policies: Vec::new(),
                    relationships: Vec::new(),
                    parent: None,
                    implicit: true,
                });
            }
        }

        // Pass 2: resource properties, policies and relationships.
        let mut out = IndexMap::new();
        for (i, (k, v)) in resources.iter().enumerate() {
            let p = rpath.key(k.name.clone());
            let r = self.resource(i, &k.name, v, &p);
            out.insert(k.name.clone(), r);
        }
        let mut template = Template {
            version,
            description,
            resources: out,
            groups: std::mem::take(&mut self.groups),
            policies: std::mem::take(&mut self.policies),
        };
        for pg in std::mem::take(&mut self.pending) {
            let Some(g) = template.group_id(&pg.name) else {
                let mut known: Vec<&str> = template.groups.iter().map(|g| g.id.as_str()).collect();
                known.sort_unstable();
                known.dedup();
                self.diags.error(
                    &pg.path,
                    pg.pos,
                    format!(
                        "unknown group `{}`; expected one of {}",
                        pg.name,
                        known.join(", ")
                    ),
                );
                continue;
            };
            let rels = match pg.owner {
                Member::Group(o) => template
                    .groups
                    .get_mut(o.index())
                    .map(|x| &mut x.relationships),
                Member::Resource(o) => template
                    .resources
                    .get_index_mut(o.index())
                    .map(|(_, x)| &mut x.relationships),
            };
            if let Some(rel) = rels.and_then(|r| r.get_mut(pg.relationship)) {
                rel.related = Reference::Group(g);
            }
        }
        self.check_types(&template, &rpath);
        Some(template)
    }

    /// A resource of a type Berth does not place is left out of the placement, so one that
    /// a policy or relationship reaches must have a known type (a misspelt
    /// `OS::Nova::Servr` would silently drop a server). Elsewhere a near miss of a known
    /// type is an error too (Heat would refuse it), and another unknown type a warning.
    fn check_types(&mut self, t: &Template, rpath: &Path) {
        let mut group_reached: Vec<bool> = t
            .groups
            .iter()
            .map(|g| !g.policies.is_empty() || !g.relationships.is_empty())
            .collect();
        let mut resource_reached = vec![false; t.resources.len()];
        let rels = t
            .groups
            .iter()
            .flat_map(|g| &g.relationships)
            .chain(t.resources.values().flat_map(|r| &r.relationships));
        for rel in rels {
            match &rel.related {
                Reference::Group(g) => {
                    if let Some(x) = group_reached.get_mut(g.index()) {
                        *x = true;
                    }
                }
                Reference::Resource(r) => {
                    if let Some(x) = resource_reached.get_mut(r.index()) {
                        *x = true;
                    }
                }
                Reference::External(_) => {}
            }
        }
        for (i, (name, r)) in t.resources.iter().enumerate() {
            let ty = r.type_name.as_str();
            if ty.is_empty() || RESOURCE_TYPES.contains(&ty) {
                continue;
            }
            let why = if !r.policies.is_empty() || !r.relationships.is_empty() {
                Some("it has policies".to_owned())
            } else if resource_reached.get(i).copied().unwrap_or(false) {
                Some("a relationship names it".to_owned())
            } else {
                let mut g = Some(r.group);
                let mut found = None;
                while let Some(id) = g {
                    let Some(grp) = t.groups.get(id.index()) else {
                        break;
                    };
                    if group_reached.get(id.index()).copied().unwrap_or(false) {
                        found = Some(format!("it is a member of policy group `{}`", grp.id));
                        break;
                    }
                    g = grp.parent;
                }
                found
            };
            let path = rpath.key(name.clone()).key("type");
            let pos = self.type_pos.get(i).copied().unwrap_or_default();
            let near = berth_doc::closest(ty, RESOURCE_TYPES.iter().copied());
            let provider = is_provider_template(ty);
            match (why, near) {
                (Some(why), Some(near)) => self.diags.error(
                    &path,
                    pos,
                    format!(
                        "resource `{name}` has unknown type `{ty}` and {why}, so it would be left out of the placement; did you mean `{near}`?"
                    ),
                ),
                (Some(why), None) if provider => self.diags.error(
                    &path,
                    pos,
                    format!(
                        "resource `{name}` is a nested stack (`{ty}`) and {why}, but policies do not reach the resources inside a nested stack; expected its servers and volumes in this template"
                    ),
                ),
                (Some(why), None) => self.diags.error(
                    &path,
                    pos,
                    format!(
                        "resource `{name}` has unknown type `{ty}` and {why}, so it would be left out of the placement; expected a placed type ({PLACED}) or another Heat resource type"
                    ),
                ),
                (None, Some(near)) if !provider => self.diags.error(
                    &path,
                    pos,
                    format!("resource `{name}` has unknown type `{ty}`; did you mean `{near}`?"),
                ),
                (None, _) if !provider => self.diags.warning(
                    &path,
                    pos,
                    format!(
                        "resource `{name}` has unknown type `{ty}`; it is not placed (placed types: {PLACED})"
                    ),
                ),
                (None, _) => {}
            }
        }
    }

    fn text(&mut self, v: &Value, p: &Path, what: &str) -> Option<String> {
        match v.as_str() {
            Some(s) if !s.is_empty() => Some(s.to_owned()),
            _ => {
                self.diags.error(
                    p,
                    v.pos,
                    format!("value is {}; expected {what}", describe(v)),
                );
                None
            }
        }
    }

    fn integer(&mut self, v: &Value, p: &Path, min: i64, what: &str) -> Option<i64> {
        match v.as_i64() {
            Some(n) if n >= min && n <= i64::from(u32::MAX) => Some(n),
            _ => {
                self.diags.error(
                    p,
                    v.pos,
                    format!("value is {}; expected {what}", describe(v)),
                );
                None
            }
        }
    }

    fn string_list(&mut self, v: &Value, p: &Path) -> Option<Vec<String>> {
        let Some(list) = v.as_seq() else {
            self.diags.error(
                p,
                v.pos,
                format!(
                    "value is {}; expected a list of protocol names",
                    describe(v)
                ),
            );
            return None;
        };
        let mut out = Vec::new();
        for (i, x) in list.iter().enumerate() {
            out.push(self.text(x, &p.index(i), "a protocol name")?);
        }
        Some(out)
    }
}

/// `a string "x"`, `an integer 3`, `a mapping` … for messages.
fn describe(v: &Value) -> String {
    match v.scalar_text() {
        Some(t) if !v.is_null() => format!("{} `{t}`", with_article(v.type_name())),
        _ => with_article(v.type_name()),
    }
}

fn with_article(t: &str) -> String {
    match t.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => format!("an {t}"),
        _ => format!("a {t}"),
    }
}
