//! The loaded template: resources, the group tree, policies, relationships, and the expansion
//! of policies applied to groups and relationships into primitive applications.

use indexmap::IndexMap;

use crate::policy::{PolicyKind, Relevance, Shape};

/// A resource of the template, by position in [`Template::resources`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceId(pub u32);

/// A group of the tree, by position in [`Template::groups`] (the root is 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupId(pub u32);

/// A policy, by position in [`Template::policies`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PolicyId(pub u32);

impl ResourceId {
    /// The index into [`Template::resources`].
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl GroupId {
    /// The index into [`Template::groups`].
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl PolicyId {
    /// The index into [`Template::policies`].
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a resource is, for placement.
#[derive(Clone, Debug, PartialEq)]
pub enum ResourceKind {
    /// `OS::Nova::Server` / `AWS::EC2::Instance`: placed by its flavor's demand vector.
    Server {
        /// Flavor name (parameters resolved).
        flavor: String,
    },
    /// `OS::Cinder::Volume` / `AWS::EC2::Volume`: placed by its size.
    Volume {
        /// Size in GiB.
        size_gib: i64,
    },
    /// `OS::Cinder::VolumeAttachment` / `AWS::EC2::VolumeAttachment`: a relationship between a
    /// server and a volume; its policies apply to that pair. Not placed.
    VolumeAttachment {
        /// The server.
        instance: Endpoint,
        /// The volume.
        volume: Endpoint,
    },
    /// Any other type: not placed, no policy concerns it.
    Other,
}

/// One end of a volume attachment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A resource of this template.
    Resource(ResourceId),
    /// A pre-existing resource (an RID).
    External(String),
}

/// A resource of the `resources` section.
#[derive(Clone, Debug, PartialEq)]
pub struct Resource {
    /// Template id (TID).
    pub name: String,
    /// The `type` string.
    pub type_name: String,
    /// What it is for placement.
    pub kind: ResourceKind,
    /// The `properties` mapping as JSON.
    pub properties: serde_json::Value,
    /// Policies attached to the resource itself.
    pub policies: Vec<PolicyId>,
    /// Relationships from the resource.
    pub relationships: Vec<Relationship>,
    /// The group that directly contains it.
    pub group: GroupId,
}

impl Resource {
    /// Whether the resource is placed on a leaf (a server or a volume).
    #[must_use]
    pub fn is_placed(&self) -> bool {
        matches!(
            self.kind,
            ResourceKind::Server { .. } | ResourceKind::Volume { .. }
        )
    }

    /// Whether a policy of this relevance concerns the resource.
    #[must_use]
    pub fn is_relevant(&self, relevance: Relevance) -> bool {
        match relevance {
            Relevance::Placed => self.is_placed(),
            Relevance::Servers => matches!(self.kind, ResourceKind::Server { .. }),
            Relevance::Volumes => matches!(self.kind, ResourceKind::Volume { .. }),
        }
    }
}

/// A member of a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Member {
    /// A nested group.
    Group(GroupId),
    /// `{get_resource: TID}`.
    Resource(ResourceId),
}

/// A group of the tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// The group's TID.
    pub id: String,
    /// Direct members in document order.
    pub members: Vec<Member>,
    /// `metadata` as JSON (`null` when absent).
    pub metadata: serde_json::Value,
    /// Policies applied to the group.
    pub policies: Vec<PolicyId>,
    /// Relationships from the group.
    pub relationships: Vec<Relationship>,
    /// The containing group (`None` for the root).
    pub parent: Option<GroupId>,
    /// True for the root made up when the template has no `groups` section.
    pub implicit: bool,
}

/// What a relationship points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reference {
    /// `{get_resource: TID}`.
    Resource(ResourceId),
    /// `{get_group: TID}`.
    Group(GroupId),
    /// A pre-existing resource id (RID).
    External(String),
}

/// `{related, policies}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Relationship {
    /// The other end.
    pub related: Reference,
    /// Policies of the relationship.
    pub policies: Vec<PolicyId>,
}

/// A policy with its hardness and where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// Type and parameters.
    pub kind: PolicyKind,
    /// `hardConstraint` (default true).
    pub hard: bool,
    /// Penalty weight of a soft policy per violation (property `weight`, default 1).
    pub weight: f64,
    /// `metadata` as JSON (`null` when absent).
    pub metadata: serde_json::Value,
    /// Field path of the policy in the document.
    pub path: String,
    /// 1-based line (0 = unknown).
    pub line: u32,
    /// 1-based column (0 = unknown).
    pub column: u32,
}

impl Policy {
    /// A short label: the metadata `description` if any, else the path.
    #[must_use]
    pub fn label(&self) -> String {
        self.metadata
            .get("description")
            .and_then(serde_json::Value::as_str)
            .map_or_else(|| self.path.clone(), str::to_owned)
    }
}

/// A loaded template.
///
/// Invariants: every resource is a member of exactly one group; `groups[0]` is the root;
/// every id stored in the model indexes its table.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    /// `heat_template_version`, if given.
    pub version: Option<String>,
    /// `description`, if given.
    pub description: Option<String>,
    /// Resources in document order.
    pub resources: IndexMap<String, Resource>,
    /// Groups in preorder; the root first.
    pub groups: Vec<Group>,
    /// Every policy written in the template, in document order.
    pub policies: Vec<Policy>,
}

/// A primitive application of a policy (seed 004 semantics after recursion).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// A monadic policy on one relevant resource.
    One(ResourceId),
    /// A synthetic (LLMN) policy on the relevant resources covered by a group.
    Members(Vec<ResourceId>),
    /// A symmetric policy on every unordered pair `{x, y}` with `x` and `y` in different parts
    /// (the parts are the relevant resources covered by each direct member of a group, or the
    /// two ends of a relationship). Parts are disjoint and non-empty.
    Across(Vec<Vec<ResourceId>>),
    /// Every ordered pair `(x, y)`, `x` in the first list, `y` in the second, `x != y`: an
    /// asymmetric policy, or a symmetric one between overlapping ends (a group and a group
    /// that contains it).
    Between(Vec<ResourceId>, Vec<ResourceId>),
    /// A dyadic policy between template resources and a pre-existing resource.
    External(Vec<ResourceId>, String),
}

/// A policy and what it applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Application {
    /// The policy.
    pub policy: PolicyId,
    /// What it applies to.
    pub subject: Subject,
}

impl Template {
    /// A resource by id.
    #[must_use]
    pub fn resource(&self, id: ResourceId) -> Option<&Resource> {
        self.resources.get_index(id.index()).map(|(_, r)| r)
    }

    /// A resource id by name.
    #[must_use]
    pub fn resource_id(&self, name: &str) -> Option<ResourceId> {
        self.resources
            .get_index_of(name)
            .map(|i| ResourceId(i as u32))
    }

    /// A group by id.
    #[must_use]
    pub fn group(&self, id: GroupId) -> Option<&Group> {
        self.groups.get(id.index())
    }

    /// A group id by name.
    #[must_use]
    pub fn group_id(&self, name: &str) -> Option<GroupId> {
        self.groups
            .iter()
            .position(|g| g.id == name)
            .map(|i| GroupId(i as u32))
    }

    /// A policy by id.
    #[must_use]
    pub fn policy(&self, id: PolicyId) -> Option<&Policy> {
        self.policies.get(id.index())
    }

    /// The resources covered by a member (recursively), in document order, that the relevance
    /// selects.
    #[must_use]
    pub fn covered(&self, member: Member, relevance: Relevance) -> Vec<ResourceId> {
        let mut out = Vec::new();
        let mut stack = vec![member];
        while let Some(m) = stack.pop() {
            match m {
                Member::Resource(r) => {
                    if self.resource(r).is_some_and(|x| x.is_relevant(relevance)) {
                        out.push(r);
                    }
                }
                Member::Group(g) => {
                    if let Some(group) = self.group(g) {
                        stack.extend(group.members.iter().rev().copied());
                    }
                }
            }
        }
        out
    }

    fn reference_cover(
        &self,
        r: &Reference,
        relevance: Relevance,
    ) -> Result<Vec<ResourceId>, String> {
        match r {
            Reference::Resource(x) => Ok(self.covered(Member::Resource(*x), relevance)),
            Reference::Group(g) => Ok(self.covered(Member::Group(*g), relevance)),
            Reference::External(rid) => Err(rid.clone()),
        }
    }

    /// Every primitive application of every policy, in document order of the policies (by
    /// line:column, then id)
    /// (seed 004 recursion): a symmetric policy on a group applies across its direct members,
    /// a monadic one to each relevant covered resource; a relationship applies to the ordered
    /// pair (from, related); a volume attachment's policies to (instance, volume).
    /// Applications with nothing to apply to are left out.
    #[must_use]
    pub fn applications(&self) -> Vec<Application> {
        let mut out = Vec::new();
        for (gi, g) in self.groups.iter().enumerate() {
            let me = Member::Group(GroupId(gi as u32));
            for &p in &g.policies {
                let Some(policy) = self.policy(p) else {
                    continue;
                };
                let rel = policy.kind.relevance();
                match policy.kind.shape() {
                    Shape::Monadic => {
                        for r in self.covered(me, rel) {
                            out.push(Application {
                                policy: p,
                                subject: Subject::One(r),
                            });
                        }
                    }
                    Shape::Synthetic => {
                        let members = self.covered(me, rel);
                        if !members.is_empty() {
                            out.push(Application {
                                policy: p,
                                subject: Subject::Members(members),
                            });
                        }
                    }
                    Shape::Symmetric => {
                        let parts: Vec<Vec<ResourceId>> = g
                            .members
                            .iter()
                            .map(|&m| self.covered(m, rel))
                            .filter(|p| !p.is_empty())
                            .collect();
                        if parts.len() >= 2 {
                            out.push(Application {
                                policy: p,
                                subject: Subject::Across(parts),
                            });
                        }
                    }
                    // Rejected by the loader on groups.
                    Shape::Asymmetric => {}
                }
            }
            for rel in &g.relationships {
                self.relationship(me, rel, &mut out);
            }
        }
        for (ri, r) in self.resources.values().enumerate() {
            let me = Member::Resource(ResourceId(ri as u32));
            for &p in &r.policies {
                let Some(policy) = self.policy(p) else {
                    continue;
                };
                match (&r.kind, policy.kind.shape()) {
                    (
                        ResourceKind::VolumeAttachment { instance, volume },
                        Shape::Symmetric | Shape::Asymmetric,
                    ) => {
                        let side = |e: &Endpoint| match e {
                            Endpoint::Resource(x) => Reference::Resource(*x),
                            Endpoint::External(s) => Reference::External(s.clone()),
                        };
                        self.pair(p, &side(instance), &side(volume), &mut out);
                    }
                    (_, Shape::Monadic) if r.is_relevant(policy.kind.relevance()) => {
                        out.push(Application {
                            policy: p,
                            subject: Subject::One(ResourceId(ri as u32)),
                        });
                    }
                    _ => {}
                }
            }
            for rel in &r.relationships {
                self.relationship(me, rel, &mut out);
            }
        }
        // Document order of the policies (nested groups are read before their parent's list).
        out.sort_by_key(|a| {
            let p = self.policy(a.policy);
            (p.map_or(0, |p| p.line), p.map_or(0, |p| p.column), a.policy)
        });
        out
    }

    fn relationship(&self, from: Member, rel: &Relationship, out: &mut Vec<Application>) {
        let from = match from {
            Member::Group(g) => Reference::Group(g),
            Member::Resource(r) => Reference::Resource(r),
        };
        for &p in &rel.policies {
            self.pair(p, &from, &rel.related, out);
        }
    }

    fn pair(&self, p: PolicyId, a: &Reference, b: &Reference, out: &mut Vec<Application>) {
        let Some(policy) = self.policy(p) else { return };
        let rel = policy.kind.relevance();
        let subject = match (self.reference_cover(a, rel), self.reference_cover(b, rel)) {
            (Ok(x), Ok(y)) => {
                if x.is_empty() || y.is_empty() {
                    return;
                }
                match policy.kind.shape() {
                    Shape::Asymmetric => Subject::Between(x, y),
                    // Overlapping ends cannot be split into disjoint parts: explicit pairs.
                    _ if x.iter().any(|r| y.contains(r)) => Subject::Between(x, y),
                    _ => Subject::Across(vec![x, y]),
                }
            }
            (Ok(x), Err(rid)) | (Err(rid), Ok(x)) => {
                if x.is_empty() {
                    return;
                }
                Subject::External(x, rid)
            }
            (Err(_), Err(_)) => return,
        };
        out.push(Application { policy: p, subject });
    }
}
