//! Loading a template's resources: their types, the properties Berth places by (flavor, size,
//! attachments) and endpoints.

use berth_doc::{Diagnostic, Map, Path, Pos, Value};

use super::{Loader, RESOURCE_KEYS, Site, describe, expected_keys};
use crate::model::{Endpoint, GroupId, Member, Resource, ResourceId, ResourceKind};
use crate::policy::{PolicyKind, Relevance, Shape};

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

impl Loader {
    pub(super) fn resource(&mut self, i: usize, name: &str, v: &Value, p: &Path) -> Resource {
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
    pub(super) fn property<'v>(
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

    pub(super) fn string_prop(
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

    pub(super) fn size_prop(&mut self, props: &Map, key: &str, pp: &Path, at: Pos) -> Option<i64> {
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

    pub(super) fn endpoint(
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

    pub(super) fn endpoints(&mut self, v: &Value, p: &Path) -> Option<Vec<(String, u16)>> {
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
