//! Loading the extension's groups: members, metadata, relationships and their references.

use berth_doc::{Map, Path, Value};

use super::{GROUP_KEYS, Loader, PendingGroup, Site, describe, expected_keys};
use crate::model::{Group, GroupId, Member, Reference, Relationship, ResourceId};

const RELATIONSHIP_KEYS: &[&str] = &["related", "policies"];

impl Loader {
    pub(super) fn group(
        &mut self,
        v: &Value,
        p: &Path,
        parent: Option<GroupId>,
    ) -> Option<GroupId> {
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

    pub(super) fn member(&mut self, item: &Value, ip: &Path, me: GroupId) -> Option<Member> {
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

    pub(super) fn metadata(&mut self, m: &Map, p: &Path) -> serde_json::Value {
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

    pub(super) fn relationships(
        &mut self,
        v: &Value,
        p: &Path,
        owner: Member,
    ) -> Vec<Relationship> {
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

    pub(super) fn reference(
        &mut self,
        v: &Value,
        p: &Path,
        owner: Member,
        index: usize,
    ) -> Option<Reference> {
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
}
