//! Property resolution: `${…}` references across sections, cycles, counts and policy numbers.

use std::collections::{BTreeMap, BTreeSet};

use berth_doc::{Diagnostics, Path, Pos};
use indexmap::IndexMap;

use crate::load::declared;
use crate::model::{ClusterDef, Count, Descriptor, Expr, Properties};
use crate::policy::{ClusterSpec, ScalePolicy};
use crate::template::Seg;

/// Longest chain of property references followed before giving up.
const MAX_CHAIN: usize = 200;

/// Where a property lives.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Scope {
    Top,
    Component(String),
    Reference(String),
    Relationship(String),
    /// Counts, policies: single-part references go to the top level, nothing of its own.
    Free,
}

/// A resolved value before per-instance substitution.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece {
    Lit(String),
    InstanceName,
    InstanceId,
    /// A top-level property left for the request (validation only).
    Param(String),
    /// A property of a component or reference known only once it exists.
    Runtime {
        owner: String,
        prop: String,
    },
    /// `${source.x}` / `${target.x}` in a relationship.
    Side {
        source: bool,
        prop: String,
    },
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Resolved {
    pub pieces: Vec<Piece>,
    /// Components whose runtime properties this value waits for (installed first).
    pub deps: BTreeSet<String>,
}

impl Resolved {
    fn lit(s: &str) -> Self {
        Resolved {
            pieces: vec![Piece::Lit(s.to_owned())],
            deps: BTreeSet::new(),
        }
    }

    fn extend(&mut self, other: &Resolved) {
        self.pieces.extend(other.pieces.iter().cloned());
        self.deps.extend(other.deps.iter().cloned());
    }

    fn instance_dependent(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p, Piece::InstanceName | Piece::InstanceId))
    }

    /// The literal text if every piece is literal.
    fn literal(&self) -> Option<String> {
        let mut s = String::new();
        for p in &self.pieces {
            match p {
                Piece::Lit(t) => s.push_str(t),
                _ => return None,
            }
        }
        Some(s)
    }
}

/// Resolution mode: validation keeps unset top-level properties open for the request.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Mode<'r> {
    Validate,
    Plan(&'r BTreeMap<String, String>),
}

/// Resolved property sections (value `None`: declared without a value).
pub(crate) type ResolvedProps = IndexMap<String, Option<Resolved>>;

#[derive(Debug, Default)]
pub(crate) struct EvalComponent {
    /// Instances to create; `None` when it depends on a request parameter (validation).
    pub count: Option<u32>,
    pub cluster: Option<ClusterSpec>,
    pub props: ResolvedProps,
    pub deps: BTreeSet<String>,
}

#[derive(Debug, Default)]
pub(crate) struct Evaluated {
    pub top: ResolvedProps,
    pub components: IndexMap<String, EvalComponent>,
    pub references: IndexMap<String, ResolvedProps>,
    pub relationships: IndexMap<String, (ResolvedProps, BTreeSet<String>)>,
    pub policies: IndexMap<String, ScalePolicy>,
}

enum Slot {
    Visiting,
    Done(Option<Resolved>),
    Failed,
}

struct Resolver<'d> {
    d: &'d Descriptor,
    mode: Mode<'d>,
    memo: BTreeMap<(Scope, String), Slot>,
    stack: Vec<(Scope, String)>,
    diags: Diagnostics,
}

/// Resolves every section of `d`; problems go to the returned diagnostics.
pub(crate) fn evaluate<'d>(d: &'d Descriptor, mode: Mode<'d>) -> (Evaluated, Diagnostics) {
    let mut r = Resolver {
        d,
        mode,
        memo: BTreeMap::new(),
        stack: Vec::new(),
        diags: Diagnostics::new(),
    };
    let mut ev = Evaluated::default();
    for (name, def) in &d.properties {
        let v = r.prop(&Scope::Top, name).ok().flatten();
        if v.is_none()
            && def.required
            && matches!(mode, Mode::Plan(_))
            && !matches!(r.memo.get(&(Scope::Top, name.clone())), Some(Slot::Failed))
        {
            r.diags.error(
                &prop_path(&Scope::Top, name),
                def.pos,
                format!("required property `{name}` has no value; expected a `value`, a `default` or a request parameter `{name}=…`"),
            );
        }
        ev.top.insert(name.clone(), v);
    }
    for (name, c) in &d.composition {
        let scope = Scope::Component(name.clone());
        let base = Path::root().key("composition").key(name.clone());
        let mut ec = EvalComponent::default();
        match &c.count {
            Count::Quantity(q) => {
                ec.count = match q {
                    None => Some(1),
                    Some(e) => r.count(e, &base.key("quantity")).ok().flatten(),
                };
            }
            Count::Cluster(cd) => {
                ec.cluster = r.cluster(cd, &base.key("cluster"));
                ec.count = ec.cluster.map(|c| c.initial);
            }
        }
        let (props, deps) = r.section(&scope, &c.properties);
        ec.props = props;
        ec.deps = deps;
        ec.deps.remove(name);
        ev.components.insert(name.clone(), ec);
    }
    for (name, rf) in &d.references {
        let (props, _) = r.section(&Scope::Reference(name.clone()), &rf.properties);
        ev.references.insert(name.clone(), props);
    }
    for (name, rel) in &d.relationships {
        let section = r.section(&Scope::Relationship(name.clone()), &rel.properties);
        ev.relationships.insert(name.clone(), section);
    }
    for (name, p) in &d.policies {
        if let Some(sp) = r.policy(name, p) {
            ev.policies.insert(name.clone(), sp);
        }
    }
    (ev, r.diags)
}

/// The path of a property in its section.
pub(crate) fn prop_path(scope: &Scope, name: &str) -> Path {
    let root = Path::root();
    let base = match scope {
        Scope::Top | Scope::Free => root,
        Scope::Component(c) => root.key("composition").key(c.clone()),
        Scope::Reference(c) => root.key("references").key(c.clone()),
        Scope::Relationship(c) => root.key("relationships").key(c.clone()),
    };
    base.key("properties").key(name)
}

impl Resolver<'_> {
    fn props(&self, scope: &Scope) -> Option<&Properties> {
        let d = self.d;
        match scope {
            Scope::Top => Some(&d.properties),
            Scope::Component(c) => d.composition.get(c).map(|c| &c.properties),
            Scope::Reference(c) => d.references.get(c).map(|c| &c.properties),
            Scope::Relationship(c) => d.relationships.get(c).map(|c| &c.properties),
            Scope::Free => None,
        }
    }

    fn section(&mut self, scope: &Scope, props: &Properties) -> (ResolvedProps, BTreeSet<String>) {
        let mut out = IndexMap::new();
        let mut deps = BTreeSet::new();
        for name in props.keys() {
            let v = self.prop(scope, name).ok().flatten();
            if let Some(v) = &v {
                deps.extend(v.deps.iter().cloned());
            }
            out.insert(name.clone(), v);
        }
        (out, deps)
    }

    /// Resolves one declared property; `Err` means a problem was reported.
    fn prop(&mut self, scope: &Scope, name: &str) -> Result<Option<Resolved>, ()> {
        let key = (scope.clone(), name.to_owned());
        match self.memo.get(&key) {
            Some(Slot::Done(v)) => return Ok(v.clone()),
            Some(Slot::Failed) => return Err(()),
            Some(Slot::Visiting) => {
                self.report_cycle(&key);
                return Err(());
            }
            None => {}
        }
        let Some(def) = self.props(scope).and_then(|p| p.get(name)) else {
            return Ok(None);
        };
        let def = def.clone();
        if self.stack.len() >= MAX_CHAIN {
            // Deep chains would exhaust the stack; no real descriptor comes close.
            self.diags.error(
                &prop_path(scope, name),
                def.pos,
                format!(
                    "property references nest deeper than {MAX_CHAIN}; expected a shorter chain"
                ),
            );
            self.memo.insert(key, Slot::Failed);
            return Err(());
        }
        self.memo.insert(key.clone(), Slot::Visiting);
        self.stack.push(key.clone());
        let request = match self.mode {
            Mode::Plan(req) if *scope == Scope::Top && !def.read_only => req.get(name),
            _ => None,
        };
        let path = prop_path(scope, name);
        let result = if let Some(text) = request {
            // Request values are taken literally: they are data, not templates.
            Ok(Some(Resolved::lit(text)))
        } else if let Some(e) = &def.value {
            self.expr(scope, e, &path.key("value")).map(Some)
        } else if let Some(e) = &def.default {
            self.expr(scope, e, &path.key("default")).map(Some)
        } else if *scope == Scope::Top && matches!(self.mode, Mode::Validate) {
            Ok(Some(Resolved {
                pieces: vec![Piece::Param(name.to_owned())],
                deps: BTreeSet::new(),
            }))
        } else {
            Ok(None)
        };
        self.stack.pop();
        let slot = match &result {
            Ok(v) => Slot::Done(v.clone()),
            Err(()) => Slot::Failed,
        };
        self.memo.insert(key, slot);
        result
    }

    fn report_cycle(&mut self, key: &(Scope, String)) {
        let Some(start) = self.stack.iter().position(|k| k == key) else {
            return;
        };
        let chain: Vec<String> = self.stack[start..]
            .iter()
            .chain(std::iter::once(key))
            .map(|(s, n)| prop_path(s, n).to_string())
            .collect();
        let (s, n) = &self.stack[start];
        let pos = self
            .props(s)
            .and_then(|p| p.get(n))
            .map_or(Pos::UNKNOWN, |d| d.pos);
        self.diags.error(
            &prop_path(s, n),
            pos,
            format!("cyclic property reference: {}", chain.join(" -> ")),
        );
    }

    /// Resolves a template; reports every bad reference in it.
    fn expr(&mut self, scope: &Scope, e: &Expr, path: &Path) -> Result<Resolved, ()> {
        let Some(t) = &e.template else { return Err(()) };
        let mut out = Resolved::default();
        let mut failed = false;
        for seg in &t.0 {
            let r = match seg {
                Seg::Lit(s) => Ok(Resolved::lit(s)),
                Seg::Ref { owner: None, name } => self.top_ref(name, e.pos, path),
                Seg::Ref {
                    owner: Some(o),
                    name,
                } => self.owned_ref(scope, o, name, e.pos, path),
            };
            match r {
                Ok(r) => out.extend(&r),
                Err(()) => failed = true,
            }
        }
        if failed { Err(()) } else { Ok(out) }
    }

    fn top_ref(&mut self, name: &str, pos: Pos, path: &Path) -> Result<Resolved, ()> {
        if !self.d.properties.contains_key(name) {
            let known: Vec<&str> = self.d.properties.keys().map(String::as_str).collect();
            self.diags.error(
                path,
                pos,
                format!(
                    "unknown property `{name}` in `${{{name}}}`; expected a top-level property ({})",
                    if known.is_empty() { "none declared".to_owned() } else { known.join(", ") }
                ),
            );
            return Err(());
        }
        match self.prop(&Scope::Top, name)? {
            Some(r) => Ok(r),
            None => {
                self.diags.error(
                    path,
                    pos,
                    format!("`${{{name}}}` refers to property `{name}`, which has no value; expected a `value`, a `default` or a request parameter"),
                );
                Err(())
            }
        }
    }

    fn owned_ref(
        &mut self,
        scope: &Scope,
        owner: &str,
        name: &str,
        pos: Pos,
        path: &Path,
    ) -> Result<Resolved, ()> {
        let one = |p: Piece| Resolved {
            pieces: vec![p],
            deps: BTreeSet::new(),
        };
        match owner {
            "instance" => match name {
                "name" => return Ok(one(Piece::InstanceName)),
                "id" => return Ok(one(Piece::InstanceId)),
                _ => {
                    self.diags.error(
                        path,
                        pos,
                        format!("unknown `${{instance.{name}}}`; expected `${{instance.name}}` or `${{instance.id}}`"),
                    );
                    return Err(());
                }
            },
            "source" | "target" => {
                if matches!(scope, Scope::Relationship(_)) {
                    return Ok(one(Piece::Side {
                        source: owner == "source",
                        prop: name.to_owned(),
                    }));
                }
                self.diags.error(
                    path,
                    pos,
                    format!("`${{{owner}.{name}}}` outside a relationship; expected `${{{owner}.…}}` only in relationship properties"),
                );
                return Err(());
            }
            _ => {}
        }
        let target_scope = if self.d.composition.contains_key(owner) {
            Scope::Component(owner.to_owned())
        } else if self.d.references.contains_key(owner) {
            Scope::Reference(owner.to_owned())
        } else {
            self.diags.error(
                path,
                pos,
                format!(
                    "unknown component or reference `{owner}` in `${{{owner}.{name}}}`; expected one of {}",
                    declared(self.d)
                ),
            );
            return Err(());
        };
        let runtime = one(Piece::Runtime {
            owner: owner.to_owned(),
            prop: name.to_owned(),
        });
        let declared_static = self
            .props(&target_scope)
            .and_then(|p| p.get(name))
            .is_some_and(|p| p.value.is_some() || p.default.is_some());
        let known = if declared_static {
            // Several instances may each see a different value: only the runtime knows.
            self.prop(&target_scope, name)?
                .filter(|v| !v.instance_dependent())
        } else {
            None
        };
        // A value known now orders nothing; a runtime value waits for its owner's install.
        Ok(known.unwrap_or_else(|| {
            let mut r = runtime;
            if matches!(target_scope, Scope::Component(_)) {
                r.deps.insert(owner.to_owned());
            }
            r
        }))
    }

    /// In validation, `e` as a lone `${name}` of a top-level property that takes its
    /// `default` and that a request may set (no `value`, not read-only): name and default.
    fn overridable_default(&self, e: &Expr) -> Option<(String, Expr)> {
        if !matches!(self.mode, Mode::Validate) {
            return None;
        }
        let name = e.text.trim().strip_prefix("${")?.strip_suffix('}')?.trim();
        let def = self.d.properties.get(name)?;
        if def.read_only || def.value.is_some() {
            return None;
        }
        Some((name.to_owned(), def.default.clone()?))
    }

    /// A whole non-negative number; `Ok(None)` when it waits for a request parameter.
    fn count(&mut self, e: &Expr, path: &Path) -> Result<Option<u32>, ()> {
        let r = self.expr(&Scope::Free, e, path)?;
        if let Some(text) = r.literal() {
            return match text.trim().parse::<u32>() {
                Ok(n) => Ok(Some(n)),
                Err(_) => {
                    if let Some((name, default)) = self.overridable_default(e) {
                        // A request can set it: the plan needs one, validation warns.
                        self.diags.warning(
                            &prop_path(&Scope::Top, &name).key("default"),
                            default.pos,
                            format!(
                                "default `{}` of `{name}` is not a whole number, so a plan needs a request that sets `{name}`; expected a count such as 2",
                                default.text
                            ),
                        );
                        return Ok(None);
                    }
                    let shown = if text == e.text {
                        format!("`{text}`")
                    } else {
                        format!("`{}` (= `{text}`)", e.text)
                    };
                    self.diags.error(
                        path,
                        e.pos,
                        format!("{shown} is not a whole number; expected a count such as 2"),
                    );
                    Err(())
                }
            };
        }
        if let Some(p) = r
            .pieces
            .iter()
            .find(|p| !matches!(p, Piece::Lit(_) | Piece::Param(_)))
        {
            let what = match p {
                Piece::Runtime { owner, prop } => {
                    format!("`${{{owner}.{prop}}}`, known only at runtime")
                }
                _ => "an instance name or id".to_owned(),
            };
            self.diags.error(
                path,
                e.pos,
                format!(
                    "`{}` depends on {what}; expected a number or a top-level property",
                    e.text
                ),
            );
            return Err(());
        }
        Ok(None)
    }

    fn cluster(&mut self, cd: &ClusterDef, path: &Path) -> Option<ClusterSpec> {
        let field = |r: &mut Self, e: &Option<Expr>, key: &str| match e {
            None => Ok(None),
            Some(e) => r.count(e, &path.key(key)).map(|n| n.map(|n| (n, e.pos))),
        };
        let initial = field(self, &cd.initial_quantity, "initial-quantity");
        let minimum = field(self, &cd.minimum_nodes, "minimum-nodes");
        let maximum = field(self, &cd.maximum_nodes, "maximum-nodes");
        let increment = field(self, &cd.scaling_increment, "scaling-increment");
        let (Ok(initial), Ok(minimum), Ok(maximum), Ok(increment)) =
            (initial, minimum, maximum, increment)
        else {
            return None;
        };
        // Absent fields take their defaults; fields waiting for a request skip the checks.
        let open = |e: &Option<Expr>, v: &Option<(u32, Pos)>| e.is_some() && v.is_none();
        if open(&cd.initial_quantity, &initial)
            || open(&cd.minimum_nodes, &minimum)
            || open(&cd.maximum_nodes, &maximum)
            || open(&cd.scaling_increment, &increment)
        {
            return None;
        }
        let min = minimum.map_or(1, |m| m.0);
        let mut ok = true;
        if let Some((inc, pos)) = increment
            && inc == 0
        {
            self.diags.error(
                &path.key("scaling-increment"),
                pos,
                "scaling-increment is 0; expected at least 1",
            );
            ok = false;
        }
        if let Some((max, pos)) = maximum
            && max < min
        {
            self.diags.error(
                &path.key("maximum-nodes"),
                pos,
                format!("maximum-nodes {max} is below minimum-nodes {min}; expected maximum-nodes >= minimum-nodes"),
            );
            ok = false;
        }
        let init = initial.map_or(min, |i| i.0);
        if let Some((_, pos)) = initial
            && (init < min || maximum.is_some_and(|(max, _)| init > max))
        {
            let bounds = match maximum {
                Some((max, _)) => format!("between {min} and {max}"),
                None => format!("at least {min}"),
            };
            self.diags.error(
                &path.key("initial-quantity"),
                pos,
                format!("initial-quantity {init} is out of bounds; expected {bounds}"),
            );
            ok = false;
        }
        ok.then_some(ClusterSpec {
            initial: init,
            minimum: min,
            maximum: maximum.map(|m| m.0),
            increment: increment.map_or(1, |i| i.0),
        })
    }

    fn number(&mut self, e: &Expr, path: &Path) -> Result<Option<f64>, ()> {
        let r = self.expr(&Scope::Free, e, path)?;
        match r.literal() {
            Some(text) => match text.trim().parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Some(v)),
                _ => {
                    self.diags.error(
                        path,
                        e.pos,
                        format!("`{text}` is not a number; expected e.g. 80"),
                    );
                    Err(())
                }
            },
            None if r
                .pieces
                .iter()
                .all(|p| matches!(p, Piece::Lit(_) | Piece::Param(_))) =>
            {
                Ok(None)
            }
            None => {
                self.diags.error(
                    path,
                    e.pos,
                    format!("`{}` depends on a runtime value; expected a number or a top-level property", e.text),
                );
                Err(())
            }
        }
    }

    fn policy(&mut self, name: &str, p: &crate::model::PolicyDef) -> Option<ScalePolicy> {
        let path = Path::root().key("policies").key(name).key("properties");
        let out = match &p.scale_out {
            Some(e) => self
                .number(e, &path.key("scaleOut_threshold"))
                .map(|v| v.map(Some)),
            None => Ok(Some(None)),
        };
        let inn = match &p.scale_in {
            Some(e) => self
                .number(e, &path.key("scaleIn_threshold"))
                .map(|v| v.map(Some)),
            None => Ok(Some(None)),
        };
        let smoothing = match &p.smoothing {
            Some(e) => {
                let pp = path.key("smoothing");
                match self.count(e, &pp) {
                    Ok(Some(0)) => {
                        self.diags
                            .error(&pp, e.pos, "smoothing is 0; expected at least 1 breach");
                        Err(())
                    }
                    other => other,
                }
            }
            None => Ok(Some(1)),
        };
        if let (Ok(Some(Some(o))), Ok(Some(Some(i)))) = (&out, &inn)
            && i >= o
        {
            let pos = p.scale_in.as_ref().map_or(p.pos, |e| e.pos);
            self.diags.error(
                &path.key("scaleIn_threshold"),
                pos,
                format!(
                    "scaleIn_threshold {i} is not below scaleOut_threshold {o}; expected in < out"
                ),
            );
            return None;
        }
        let (Ok(Some(out)), Ok(Some(inn)), Ok(Some(smoothing))) = (out, inn, smoothing) else {
            return None;
        };
        let (metric, target) = (p.metric.as_ref()?, p.target.as_ref()?);
        Some(ScalePolicy {
            name: name.to_owned(),
            metric_owner: metric.owner.clone(),
            metric: metric.name.clone(),
            target: target.clone(),
            scale_out_threshold: out,
            scale_in_threshold: inn,
            smoothing,
        })
    }
}
