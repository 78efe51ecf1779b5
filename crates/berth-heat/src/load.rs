//! Loading a HOT template (YAML or JSON) with the seed 004 Proposal A extension, reporting
//! every problem with its field path and line:column.

use std::collections::BTreeMap;

use berth_doc::{Diagnostic, Diagnostics, Map, Path, Pos, Value};
use indexmap::IndexMap;

use crate::error::HeatError;
use crate::model::{
    Endpoint, Group, GroupId, Member, Policy, PolicyId, Reference, Relationship, Resource,
    ResourceId, ResourceKind, Template,
};
use crate::policy::{
    COMMON_PROPERTIES, POLICY_TYPES, PolicyKind, Relevance, Shape, properties_of, shape_of,
};
use crate::types::{RESOURCE_TYPES, is_provider_template};

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
const RELATIONSHIP_KEYS: &[&str] = &["related", "policies"];

/// Server resource types (placed by flavor) and the property naming the flavor.
const SERVER_TYPES: &[(&str, &str)] = &[
    ("OS::Nova::Server", "flavor"),
    ("AWS::EC2::Instance", "InstanceType"),
];
/// Volume resource types (placed by size) and the property giving the size in GiB.
const VOLUME_TYPES: &[(&str, &str)] =
    &[("OS::Cinder::Volume", "size"), ("AWS::EC2::Volume", "Size")];
/// Attachment types and their (instance, volume) property names, each with accepted spellings.
const ATTACHMENT_TYPES: &[(&str, &[&str], &[&str])] = &[
    (
        "OS::Cinder::VolumeAttachment",
        &["instance_uuid"],
        &["volume_id"],
    ),
    (
        "AWS::EC2::VolumeAttachment",
        &["InstanceId", "InstanceID"],
        &["VolumeId", "VolumeID"],
    ),
];

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

    fn resource(&mut self, i: usize, name: &str, v: &Value, p: &Path) -> Resource {
        let type_name = self
            .names
            .get_index(i)
            .map(|(_, (t, _))| t.clone())
            .unwrap_or_default();
        let group = self
            .member_of
            .get(i)
            .cloned()
            .flatten()
            .map_or(GroupId(0), |(g, _)| g);
        let mut r = Resource {
            name: name.to_owned(),
            type_name: type_name.clone(),
            kind: ResourceKind::Other,
            properties: serde_json::Value::Null,
            policies: Vec::new(),
            relationships: Vec::new(),
            group,
        };
        let Some(m) = v.as_map() else { return r };
        expected_keys(m, RESOURCE_KEYS, p, &mut self.diags);
        let empty = Map::default();
        let props = match m.entry("properties") {
            Some((_, pv)) => {
                r.properties = pv.to_json();
                match pv.as_map() {
                    Some(pm) => pm,
                    None => {
                        self.diags.error(
                            &p.key("properties"),
                            pv.pos,
                            format!("`properties` is a {}; expected a mapping", pv.type_name()),
                        );
                        &empty
                    }
                }
            }
            None => &empty,
        };
        let pp = p.key("properties");
        if let Some((_, key)) = SERVER_TYPES.iter().find(|(t, _)| *t == type_name) {
            if let Some(flavor) = self.string_prop(props, key, &pp, v.pos, "a flavor name") {
                r.kind = ResourceKind::Server { flavor };
            }
        } else if let Some((_, key)) = VOLUME_TYPES.iter().find(|(t, _)| *t == type_name) {
            if let Some(size_gib) = self.size_prop(props, key, &pp, v.pos) {
                r.kind = ResourceKind::Volume { size_gib };
            }
        } else if let Some((_, inst, vol)) =
            ATTACHMENT_TYPES.iter().find(|(t, _, _)| *t == type_name)
        {
            let instance = self.endpoint(props, inst, &pp, v.pos, true);
            let volume = self.endpoint(props, vol, &pp, v.pos, false);
            if let (Some(instance), Some(volume)) = (instance, volume) {
                r.kind = ResourceKind::VolumeAttachment { instance, volume };
            }
        }
        let attachment = ATTACHMENT_TYPES.iter().any(|(t, _, _)| *t == type_name);
        if let Some((_, pv)) = m.entry("policies") {
            r.policies = self.policies(pv, &p.key("policies"), Site::Resource(attachment));
            if !attachment {
                let relevance_of = |k: &PolicyKind| k.relevance();
                for &id in &r.policies {
                    let Some(pol) = self.policies.get(id.index()) else {
                        continue;
                    };
                    let rel = relevance_of(&pol.kind);
                    let relevant = match rel {
                        Relevance::Placed => SERVER_TYPES
                            .iter()
                            .chain(VOLUME_TYPES)
                            .any(|(t, _)| *t == type_name),
                        Relevance::Servers => SERVER_TYPES.iter().any(|(t, _)| *t == type_name),
                        Relevance::Volumes => VOLUME_TYPES.iter().any(|(t, _)| *t == type_name),
                    };
                    if !relevant && pol.kind.shape() == Shape::Monadic {
                        let (path, line, column) = (pol.path.clone(), pol.line, pol.column);
                        let msg = format!(
                            "policy `{}` does not concern resource type `{type_name}`; ignored",
                            pol.kind.type_name()
                        );
                        self.diags.push(Diagnostic {
                            severity: berth_doc::Severity::Warning,
                            path,
                            line,
                            column,
                            message: msg,
                        });
                    }
                }
            }
        }
        if let Some((_, rv)) = m.entry("relationships") {
            r.relationships = self.relationships(
                rv,
                &p.key("relationships"),
                Member::Resource(ResourceId(i as u32)),
            );
        }
        r
    }

    /// A scalar property or a `{get_param: name}` resolved through the parameter defaults.
    fn property<'v>(
        &'v self,
        props: &'v Map,
        key: &str,
        pp: &Path,
        at: Pos,
    ) -> Result<&'v Value, (Path, Pos, String)> {
        let Some((k, v)) = props.entry(key) else {
            return Err((pp.clone(), at, format!("missing property `{key}`")));
        };
        let path = pp.key(key);
        if let Some(gp) = v.as_map().and_then(|m| m.get("get_param")) {
            let Some(name) = gp.as_str() else {
                return Err((
                    path.key("get_param"),
                    gp.pos,
                    "`get_param` names a parameter; expected a string".into(),
                ));
            };
            return self.params.get(name).ok_or_else(|| {
                (
                    path.clone(),
                    k.pos,
                    format!("parameter `{name}` has no default"),
                )
            });
        }
        Ok(v)
    }

    fn string_prop(
        &mut self,
        props: &Map,
        key: &str,
        pp: &Path,
        at: Pos,
        what: &str,
    ) -> Option<String> {
        match self.property(props, key, pp, at) {
            Ok(v) => match v.as_str() {
                Some(s) if !s.is_empty() => Some(s.to_owned()),
                _ => {
                    let msg = format!("`{key}` is {}; expected {what}", describe(v));
                    self.diags.error(&pp.key(key), v.pos, msg);
                    None
                }
            },
            Err((path, pos, msg)) => {
                self.diags
                    .error(&path, pos, format!("{msg}; expected {what}"));
                None
            }
        }
    }

    fn size_prop(&mut self, props: &Map, key: &str, pp: &Path, at: Pos) -> Option<i64> {
        match self.property(props, key, pp, at) {
            Ok(v) => {
                let n = v
                    .as_i64()
                    .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()));
                match n {
                    Some(n) if n > 0 => Some(n),
                    _ => {
                        let msg = format!(
                            "`{key}` is {}; expected a size in GiB (a positive integer)",
                            describe(v)
                        );
                        self.diags.error(&pp.key(key), v.pos, msg);
                        None
                    }
                }
            }
            Err((path, pos, msg)) => {
                self.diags.error(
                    &path,
                    pos,
                    format!("{msg}; expected a size in GiB (a positive integer)"),
                );
                None
            }
        }
    }

    fn endpoint(
        &mut self,
        props: &Map,
        keys: &[&str],
        pp: &Path,
        at: Pos,
        server: bool,
    ) -> Option<Endpoint> {
        let Some((key, v)) = keys.iter().find_map(|k| props.get(k).map(|v| (*k, v))) else {
            self.diags.error(
                pp,
                at,
                format!(
                    "missing property `{}`; expected a {{get_resource: …}} or a resource id",
                    keys.join("` or `")
                ),
            );
            return None;
        };
        let path = pp.key(key);
        if let Some(s) = v.as_str() {
            return Some(Endpoint::External(s.to_owned()));
        }
        let Some(target) = v.as_map().and_then(|m| m.get("get_resource")) else {
            self.diags.error(
                &path,
                v.pos,
                format!(
                    "`{key}` is {}; expected {{get_resource: TID}} or a resource id",
                    describe(v)
                ),
            );
            return None;
        };
        let name = target.as_str().unwrap_or_default();
        let (want, types): (&str, Vec<&str>) = if server {
            ("a server", SERVER_TYPES.iter().map(|(t, _)| *t).collect())
        } else {
            ("a volume", VOLUME_TYPES.iter().map(|(t, _)| *t).collect())
        };
        match self.names.get_full(name) {
            Some((i, _, (ty, _))) if types.contains(&ty.as_str()) => {
                Some(Endpoint::Resource(ResourceId(i as u32)))
            }
            Some((_, _, (ty, _))) => {
                self.diags.error(
                    &path.key("get_resource"),
                    target.pos,
                    format!(
                        "resource `{name}` is of type `{ty}`; expected {want} ({})",
                        types.join(" or ")
                    ),
                );
                None
            }
            None => {
                self.diags.error(
                    &path.key("get_resource"),
                    target.pos,
                    format!("unknown resource `{name}`; expected {want} of this template"),
                );
                None
            }
        }
    }

    fn group(&mut self, v: &Value, p: &Path, parent: Option<GroupId>) -> Option<GroupId> {
        let Some(m) = v.as_map() else {
            self.diags.error(
                p,
                v.pos,
                format!(
                    "group is {}; expected a mapping {{id, members}}",
                    describe(v)
                ),
            );
            return None;
        };
        expected_keys(m, GROUP_KEYS, p, &mut self.diags);
        let me = GroupId(self.groups.len() as u32);
        let id = match m.entry("id") {
            Some((_, iv)) => match iv.as_str() {
                Some(s) if !s.is_empty() => {
                    if let Some(first) = self.group_pos.get(s) {
                        self.diags.error(
                            &p.key("id"),
                            iv.pos,
                            format!("duplicate group id `{s}` (first at {first}); expected unique group ids"),
                        );
                    } else {
                        self.group_pos.insert(s.to_owned(), iv.pos);
                    }
                    s.to_owned()
                }
                _ => {
                    self.diags.error(
                        &p.key("id"),
                        iv.pos,
                        format!("`id` is {}; expected a group name", describe(iv)),
                    );
                    String::new()
                }
            },
            None => {
                self.diags
                    .error(p, v.pos, "missing `id`; expected a group name");
                String::new()
            }
        };
        let metadata = self.metadata(m, p);
        self.groups.push(Group {
            id,
            members: Vec::new(),
            metadata,
            policies: Vec::new(),
            relationships: Vec::new(),
            parent,
            implicit: false,
        });
        let mut members = Vec::new();
        match m.entry("members") {
            None => self.diags.error(
                p,
                v.pos,
                "missing `members`; expected a list of groups and {get_resource: TID}",
            ),
            Some((_, mv)) => match mv.as_seq() {
                None => self.diags.error(
                    &p.key("members"),
                    mv.pos,
                    format!("`members` is {}; expected a list", describe(mv)),
                ),
                Some(list) => {
                    for (i, item) in list.iter().enumerate() {
                        let ip = p.key("members").index(i);
                        if let Some(member) = self.member(item, &ip, me) {
                            members.push(member);
                        }
                    }
                }
            },
        }
        let policies = match m.get("policies") {
            Some(pv) => self.policies(pv, &p.key("policies"), Site::Group),
            None => Vec::new(),
        };
        let relationships = match m.get("relationships") {
            Some(rv) => self.relationships(rv, &p.key("relationships"), Member::Group(me)),
            None => Vec::new(),
        };
        if let Some(g) = self.groups.get_mut(me.index()) {
            g.members = members;
            g.policies = policies;
            g.relationships = relationships;
        }
        Some(me)
    }

    fn member(&mut self, item: &Value, ip: &Path, me: GroupId) -> Option<Member> {
        let Some(im) = item.as_map() else {
            self.diags.error(
                ip,
                item.pos,
                format!(
                    "member is {}; expected a group or {{get_resource: TID}}",
                    describe(item)
                ),
            );
            return None;
        };
        let Some((k, target)) = im.entry("get_resource") else {
            if im.get("id").is_some() || im.get("members").is_some() {
                return self.group(item, ip, Some(me)).map(Member::Group);
            }
            self.diags.error(ip, item.pos, "member is neither a group nor a reference; expected {id, members} or {get_resource: TID}");
            return None;
        };
        if im.len() > 1 {
            self.diags.error(
                ip,
                item.pos,
                "a resource reference has other keys; expected only `get_resource`",
            );
        }
        let rp = ip.key("get_resource");
        let Some(name) = target.as_str() else {
            self.diags.error(
                &rp,
                target.pos,
                format!(
                    "`get_resource` is {}; expected a resource name",
                    describe(target)
                ),
            );
            return None;
        };
        let Some(i) = self.names.get_index_of(name) else {
            self.diags.error(
                &rp,
                target.pos,
                format!("unknown resource `{name}`; expected a resource of this template"),
            );
            return None;
        };
        let _ = k;
        let gid = self
            .groups
            .get(me.index())
            .map(|g| g.id.clone())
            .unwrap_or_default();
        match self.member_of.get(i).cloned().flatten() {
            Some((g, first)) => {
                let other = self
                    .groups
                    .get(g.index())
                    .map(|g| g.id.clone())
                    .unwrap_or_default();
                self.diags.error(
                    &rp,
                    target.pos,
                    format!(
                        "resource `{name}` is already a member of group `{other}` (at {first}); expected every resource in exactly one group, found it again in `{gid}`"
                    ),
                );
                None
            }
            None => {
                if let Some(slot) = self.member_of.get_mut(i) {
                    *slot = Some((me, ip.clone()));
                }
                Some(Member::Resource(ResourceId(i as u32)))
            }
        }
    }

    fn metadata(&mut self, m: &Map, p: &Path) -> serde_json::Value {
        match m.get("metadata") {
            Some(v) if v.as_map().is_some() => v.to_json(),
            Some(v) => {
                self.diags.error(
                    &p.key("metadata"),
                    v.pos,
                    format!("`metadata` is {}; expected a mapping", describe(v)),
                );
                serde_json::Value::Null
            }
            None => serde_json::Value::Null,
        }
    }

    fn relationships(&mut self, v: &Value, p: &Path, owner: Member) -> Vec<Relationship> {
        let Some(list) = v.as_seq() else {
            self.diags.error(
                p,
                v.pos,
                format!(
                    "`relationships` is {}; expected a list of {{related, policies}}",
                    describe(v)
                ),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, item) in list.iter().enumerate() {
            let ip = p.index(i);
            let Some(m) = item.as_map() else {
                self.diags.error(
                    &ip,
                    item.pos,
                    format!(
                        "relationship is {}; expected a mapping {{related, policies}}",
                        describe(item)
                    ),
                );
                continue;
            };
            expected_keys(m, RELATIONSHIP_KEYS, &ip, &mut self.diags);
            let related = match m.get("related") {
                None => {
                    self.diags.error(&ip, item.pos, "missing `related`; expected {get_resource: TID}, {get_group: TID} or a resource id");
                    None
                }
                Some(rv) => self.reference(rv, &ip.key("related"), owner, out.len()),
            };
            let policies = match m.get("policies") {
                None => {
                    self.diags.error(
                        &ip,
                        item.pos,
                        "missing `policies`; expected a list of policies",
                    );
                    Vec::new()
                }
                Some(pv) => self.policies(pv, &ip.key("policies"), Site::Relationship),
            };
            if let Some(related) = related {
                out.push(Relationship { related, policies });
            }
        }
        out
    }

    fn reference(&mut self, v: &Value, p: &Path, owner: Member, index: usize) -> Option<Reference> {
        if let Some(s) = v.as_str() {
            return Some(Reference::External(s.to_owned()));
        }
        let m = v.as_map();
        if let Some(t) = m.and_then(|m| m.get("get_resource")) {
            let name = t.as_str().unwrap_or_default();
            return match self.names.get_index_of(name) {
                Some(i) => Some(Reference::Resource(ResourceId(i as u32))),
                None => {
                    self.diags.error(
                        &p.key("get_resource"),
                        t.pos,
                        format!("unknown resource `{name}`; expected a resource of this template"),
                    );
                    None
                }
            };
        }
        if let Some(t) = m.and_then(|m| m.get("get_group")) {
            let Some(name) = t.as_str() else {
                self.diags.error(
                    &p.key("get_group"),
                    t.pos,
                    format!("`get_group` is {}; expected a group name", describe(t)),
                );
                return None;
            };
            self.pending.push(PendingGroup {
                owner,
                relationship: index,
                name: name.to_owned(),
                path: p.key("get_group"),
                pos: t.pos,
            });
            return Some(Reference::Group(GroupId(u32::MAX)));
        }
        self.diags.error(
            p,
            v.pos,
            format!("`related` is {}; expected {{get_resource: TID}}, {{get_group: TID}} or a resource id", describe(v)),
        );
        None
    }

    fn policies(&mut self, v: &Value, p: &Path, site: Site) -> Vec<PolicyId> {
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

    fn policy(&mut self, v: &Value, p: &Path, site: Site) -> Option<PolicyId> {
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

    fn kind(&mut self, type_name: &str, props: &Map, pp: &Path, at: Pos) -> Option<PolicyKind> {
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

    fn endpoints(&mut self, v: &Value, p: &Path) -> Option<Vec<(String, u16)>> {
        let Some(list) = v.as_seq() else {
            self.diags.error(
                p,
                v.pos,
                format!(
                    "value is {}; expected a list of {{protocol, port}}",
                    describe(v)
                ),
            );
            return None;
        };
        let mut out = Vec::new();
        for (i, x) in list.iter().enumerate() {
            let ip = p.index(i);
            let m = x.as_map();
            let proto = m.and_then(|m| m.get("protocol")).and_then(Value::as_str);
            let port = m
                .and_then(|m| m.get("port"))
                .and_then(Value::as_i64)
                .and_then(|n| u16::try_from(n).ok());
            match (proto, port) {
                (Some(pr), Some(po)) if po > 0 => out.push((pr.to_owned(), po)),
                _ => {
                    self.diags.error(&ip, x.pos, "endpoint is not {protocol, port}; expected a protocol name and a port 1..=65535");
                    return None;
                }
            }
        }
        Some(out)
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
