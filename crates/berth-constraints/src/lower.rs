//! Lowering a template's constraints onto a solver `Problem`: one variable per demand, one
//! or more solver constraints per template constraint, all named after it for the triage.

use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;
use std::sync::Arc;

use berth_inventory::{AttrValue, Candidate, ServiceController};
use berth_solver::{
    AllDifferentGroup, AtMostCount, Capacity, Filter, Keys, NO_KEY, Pairwise, Problem, SameGroup,
    Value, VarId,
};
use berth_template::{
    Constraint as TemplateConstraint, ConstraintKind, NetworkProps, Template, ZoneProps,
    ZoneQualifier,
};
use berth_units::{Quantity, Threshold, Unit};

use crate::attribute::{AttributeRule, Op};
use crate::fit::ControllerFit;
use crate::group::{CommonGroup, GroupSets};
use crate::hpa::{HpaMatch, match_candidate};
use crate::request::parse_request;
use crate::space::Sites;
use crate::{ConstraintError, Environment, Space};

/// The result of lowering: the problem to solve and what the plan reports besides ids.
pub struct Lowered {
    /// Variables (demands, in space order), constraints and objective.
    pub problem: Problem,
    /// Per demand: the HPA flavors chosen for each candidate, when an `hpa` constraint applies.
    pub hpa: Vec<Option<Arc<[Option<HpaMatch>]>>>,
}

impl std::fmt::Debug for Lowered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lowered")
            .field("problem", &self.problem)
            .finish_non_exhaustive()
    }
}

/// Zone ids of one category (interned across demands) and each demand's key table.
type ZoneIndex = (BTreeMap<String, u32>, BTreeMap<usize, Keys>);

/// One fit constraint judged by the built-in capacity rule.
struct BuiltinFit {
    name: String,
    demands: Vec<usize>,
    request: BTreeMap<String, i64>,
}

/// Lowering state shared by the constraint and objective translators.
pub(crate) struct Lower<'a> {
    pub(crate) template: &'a Template,
    pub(crate) space: &'a Space,
    pub(crate) env: &'a Environment<'a>,
    pub(crate) sites: Sites,
    pub(crate) problem: Problem,
    zones: BTreeMap<berth_inventory::ZoneCategory, ZoneIndex>,
    builtin_fits: Vec<BuiltinFit>,
    pub(crate) hpa: Vec<Option<Arc<[Option<HpaMatch>]>>>,
}

/// Lowers every constraint and the objective of `template` over `space`; all errors at once.
pub fn lower(
    template: &Template,
    space: &Space,
    env: &Environment<'_>,
) -> Result<Lowered, Vec<ConstraintError>> {
    let mut l = Lower::new(template, space, env);
    let mut errors = Vec::new();
    for c in template.constraints.values() {
        if let Err(e) = l.constraint(c) {
            errors.push(e);
        }
    }
    l.finish_fits();
    if let Err(e) = l.objective() {
        errors.push(e);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Lowered {
        problem: l.problem,
        hpa: l.hpa,
    })
}

/// Distance in km as a quantity a threshold can test.
pub(crate) fn km(d: f64) -> Quantity {
    Quantity::new(d, Unit::Km)
}

/// Whether `value` of a family's base unit passes `t`; an unlimited value (`None`) passes
/// only thresholds without an upper bound.
fn admits_base(t: &Threshold, value: Option<f64>) -> bool {
    match value {
        Some(v) => t.admits(&Quantity::new(v, t.family().base_unit())),
        None => t.upper_bound_base().is_none(),
    }
}

impl<'a> Lower<'a> {
    pub(crate) fn new(
        template: &'a Template,
        space: &'a Space,
        env: &'a Environment<'a>,
    ) -> Lower<'a> {
        let mut problem = Problem::new();
        for d in &space.demands {
            let labels: Arc<[String]> = d
                .candidates
                .iter()
                .map(|c| c.candidate_id.to_string())
                .collect();
            problem.add_var_labeled(d.name.clone(), labels);
        }
        Lower {
            template,
            space,
            env,
            sites: Sites::new(space, env.topology.as_deref()),
            problem,
            zones: BTreeMap::new(),
            builtin_fits: Vec::new(),
            hpa: vec![None; space.demands.len()],
        }
    }

    pub(crate) fn demand(&self, origin: &str, name: &str) -> Result<usize, ConstraintError> {
        self.space
            .index(name)
            .ok_or_else(|| ConstraintError::UnknownDemand {
                origin: origin.to_owned(),
                demand: name.to_owned(),
            })
    }

    pub(crate) fn candidates(&self, d: usize) -> &'a [Arc<Candidate>] {
        self.space
            .demands
            .get(d)
            .map_or(&[], |x| x.candidates.as_slice())
    }

    /// Adds a unary filter named `name` removing the candidates of `d` that `keep` rejects.
    pub(crate) fn filter(
        &mut self,
        name: &str,
        d: usize,
        mut keep: impl FnMut(usize, &Candidate) -> bool,
    ) {
        let forbidden: Vec<Value> = self
            .candidates(d)
            .iter()
            .enumerate()
            .filter(|(i, c)| !keep(*i, c))
            .map(|(i, _)| Value(i as u32))
            .collect();
        if !forbidden.is_empty() {
            self.problem
                .add_constraint(name, Filter::forbid(VarId(d as u32), forbidden));
        }
    }

    fn location_point(
        &self,
        origin: &str,
        loc: &str,
    ) -> Result<crate::geo::Point, ConstraintError> {
        self.space
            .locations
            .get(loc)
            .map(|&(lat, lon)| crate::geo::Point::new(lat, lon))
            .ok_or_else(|| ConstraintError::UnlocatedLocation {
                origin: origin.to_owned(),
                location: loc.to_owned(),
            })
    }

    pub(crate) fn constraint(&mut self, c: &TemplateConstraint) -> Result<(), ConstraintError> {
        let name = c.name.as_str();
        let ds = c
            .demands
            .iter()
            .map(|d| self.demand(name, d))
            .collect::<Result<Vec<usize>, _>>()?;
        match &c.kind {
            ConstraintKind::Attribute(p) => {
                let mut checks = Vec::new();
                for (key, ops) in &p.evaluate {
                    let ops = ops
                        .iter()
                        .filter(|o| !crate::attribute::is_blank(o))
                        .map(|o| Op::new(o, name))
                        .collect::<Result<Vec<_>, _>>()?;
                    if !ops.is_empty() {
                        checks.push((key.clone(), ops));
                    }
                }
                let rule = AttributeRule { checks };
                for &d in &ds {
                    self.filter(name, d, |_, c| rule.admits(c));
                }
            }
            ConstraintKind::Threshold(p) => {
                for &d in &ds {
                    self.filter(name, d, |_, c| {
                        p.evaluate
                            .iter()
                            .all(|chk| crate::attribute::threshold_admits(chk, c))
                    });
                }
            }
            ConstraintKind::DistanceToLocation(p) => {
                let loc = self.location_point(name, &p.location)?;
                for &d in &ds {
                    let pts = self.sites.points[d].clone();
                    self.filter(name, d, |i, _| {
                        pts[i].is_some_and(|q| p.distance.admits(&km(q.distance_km(&loc))))
                    });
                }
            }
            ConstraintKind::DistanceBetweenDemands(p) => {
                let t = p.distance;
                for (k, &a) in ds.iter().enumerate() {
                    for &b in &ds[k + 1..] {
                        let (pa, pb) = (self.sites.points[a].clone(), self.sites.points[b].clone());
                        let rel = move |x: Value, y: Value| match (
                            pa.get(x.index()).copied().flatten(),
                            pb.get(y.index()).copied().flatten(),
                        ) {
                            (Some(p), Some(q)) => t.admits(&km(p.distance_km(&q))),
                            _ => false,
                        };
                        self.problem.add_constraint(
                            name,
                            Pairwise::new(VarId(a as u32), VarId(b as u32), rel),
                        );
                    }
                }
            }
            ConstraintKind::Zone(p) => self.zone(name, &ds, p)?,
            // Seed 000: "only pair-wise groups are supported; if three or more demands are
            // specified, only the first two will be used" (the template loader warns).
            ConstraintKind::InventoryGroup => self.group(name, &ds[..ds.len().min(2)]),
            ConstraintKind::InstanceFit(p)
            | ConstraintKind::RegionFit(p)
            | ConstraintKind::VimFit(p) => {
                self.fit(name, &ds, &p.controller, p.request.as_ref())?;
            }
            ConstraintKind::Service(p) => {
                let controller = p.controller.clone().unwrap_or_else(|| "service".to_owned());
                self.fit(name, &ds, &controller, p.request.as_ref())?;
            }
            ConstraintKind::License(p) => {
                let info = self.env.provider.license(&p.id).ok_or_else(|| {
                    ConstraintError::UnknownLicense {
                        origin: name.to_owned(),
                        id: p.id.clone(),
                    }
                })?;
                let wanted = AttrValue::Str(p.id.clone());
                let sets: Vec<Arc<[bool]>> = ds
                    .iter()
                    .map(|&d| {
                        let existing = self.space.demands[d].existing.as_ref();
                        self.candidates(d)
                            .iter()
                            .map(|c| {
                                let held =
                                    c.attribute("licenses").is_some_and(|v| v.matches(&wanted));
                                !held && existing != Some(&c.candidate_id)
                            })
                            .collect()
                    })
                    .collect();
                let vars = ds.iter().map(|&d| VarId(d as u32)).collect();
                let limit = u32::try_from(info.available).unwrap_or(u32::MAX);
                self.problem
                    .add_constraint(name, AtMostCount::new(vars, sets, limit));
            }
            ConstraintKind::NetworkBetweenDemands(p) => self.network_between(name, &ds, p)?,
            ConstraintKind::NetworkToLocation(p) => {
                self.network_to_location(name, &ds, &p.network, &p.location)?
            }
            ConstraintKind::Capability(h) | ConstraintKind::Capacity(h) => {
                let flavors = crate::heat::stack_flavors(h, name)?;
                let room = matches!(c.kind, ConstraintKind::Capacity(_));
                for &d in &ds {
                    self.filter(name, d, |_, c| crate::heat::admits(c, &flavors, room));
                }
            }
            ConstraintKind::Hpa(p) => {
                for &d in &ds {
                    let matches: Arc<[Option<HpaMatch>]> = self
                        .candidates(d)
                        .iter()
                        .map(|c| match_candidate(&p.evaluate, c))
                        .collect();
                    let m = matches.clone();
                    self.filter(name, d, |i, _| m.get(i).is_some_and(Option::is_some));
                    let merged: Arc<[Option<HpaMatch>]> = match self.hpa[d].take() {
                        None => matches,
                        Some(prev) => prev
                            .iter()
                            .zip(matches.iter())
                            .map(|(a, b)| match (a, b) {
                                (Some(a), Some(b)) => Some(HpaMatch {
                                    flavors: a.flavors.iter().chain(&b.flavors).cloned().collect(),
                                    score: a.score + b.score,
                                    directives: a
                                        .directives
                                        .iter()
                                        .chain(&b.directives)
                                        .cloned()
                                        .collect(),
                                }),
                                _ => None,
                            })
                            .collect(),
                    };
                    self.hpa[d] = Some(merged);
                }
            }
        }
        Ok(())
    }

    fn zone_keys(&mut self, cat: berth_inventory::ZoneCategory, d: usize) -> Keys {
        let cands = self
            .space
            .demands
            .get(d)
            .map_or(&[][..], |x| x.candidates.as_slice());
        let (intern, cache) = self.zones.entry(cat).or_default();
        if let Some(k) = cache.get(&d) {
            return k.clone();
        }
        let keys: Keys = cands
            .iter()
            .map(|c| match c.zone(cat) {
                Some(z) => {
                    let next = intern.len() as u32;
                    *intern.entry(z.to_owned()).or_insert(next)
                }
                None => NO_KEY,
            })
            .collect();
        cache.insert(d, keys.clone());
        keys
    }

    fn zone(&mut self, name: &str, ds: &[usize], p: &ZoneProps) -> Result<(), ConstraintError> {
        let cat = berth_inventory::ZoneCategory::from_str(p.category.as_str()).map_err(|e| {
            ConstraintError::Unsupported {
                origin: name.to_owned(),
                reason: e.to_string(),
            }
        })?;
        if let Some(loc) = &p.location {
            if cat != berth_inventory::ZoneCategory::Country {
                return Err(ConstraintError::Unsupported {
                    origin: name.to_owned(),
                    reason: format!(
                        "a zone location is only meaningful for category country, not {}",
                        p.category.as_str()
                    ),
                });
            }
            let country = self
                .template
                .locations
                .get(loc)
                .and_then(|l| l.placemark.as_ref())
                .and_then(|pm| pm.iso_country_code.clone())
                .ok_or_else(|| ConstraintError::Unsupported {
                    origin: name.to_owned(),
                    reason: format!("location `{loc}` has no country; expected a placemark with iso_country_code"),
                })?;
            for &d in ds {
                let same = p.qualifier == ZoneQualifier::Same;
                self.filter(name, d, |_, c| {
                    c.zone(cat)
                        .is_some_and(|z| z.eq_ignore_ascii_case(&country) == same)
                });
            }
            return Ok(());
        }
        let keys: Vec<Keys> = ds.iter().map(|&d| self.zone_keys(cat, d)).collect();
        let vars: Vec<VarId> = ds.iter().map(|&d| VarId(d as u32)).collect();
        match p.qualifier {
            ZoneQualifier::Same => {
                self.problem
                    .add_constraint(name, SameGroup::new(vars, keys));
            }
            ZoneQualifier::Different => {
                // A candidate of unknown zone cannot be shown to differ: it is removed.
                for (&d, k) in ds.iter().zip(&keys) {
                    self.filter(name, d, |i, _| k.get(i).is_some_and(|&z| z != NO_KEY));
                }
                self.problem
                    .add_constraint(name, AllDifferentGroup::new(vars, keys));
            }
        }
        Ok(())
    }

    fn group(&mut self, name: &str, ds: &[usize]) {
        let mut intern: BTreeMap<&str, u32> = BTreeMap::new();
        let mut sets: Vec<GroupSets> = Vec::new();
        for &d in ds {
            let s: GroupSets = self
                .candidates(d)
                .iter()
                .map(|c| {
                    let mut gs: Vec<u32> = c
                        .groups
                        .iter()
                        .map(|g| {
                            let next = intern.len() as u32;
                            *intern.entry(g.as_str()).or_insert(next)
                        })
                        .collect();
                    gs.sort_unstable();
                    gs.dedup();
                    gs
                })
                .collect();
            sets.push(s);
        }
        let vars = ds.iter().map(|&d| VarId(d as u32)).collect();
        let n = intern.len();
        self.problem
            .add_constraint(name, CommonGroup::new(vars, sets, n));
    }

    fn fit(
        &mut self,
        name: &str,
        ds: &[usize],
        controller: &str,
        request: Option<&serde_json::Value>,
    ) -> Result<(), ConstraintError> {
        let request = parse_request(name, request)?;
        if request.is_empty() {
            // No amounts (HAS's `request` is optional): nothing to check.
            return Ok(());
        }
        if let Some(ctl) = self.env.controllers.get(controller).cloned() {
            for &d in ds {
                self.filter(name, d, |_, c| ctl.fits(c, &request).fits());
            }
            self.controller_fit(name, ds, ctl, &request);
            return Ok(());
        }
        for &d in ds {
            self.filter(name, d, |_, c| builtin_fits(c, &request));
        }
        self.builtin_fits.push(BuiltinFit {
            name: name.to_owned(),
            demands: ds.to_vec(),
            request,
        });
        Ok(())
    }

    /// Candidate ids of the demands in `ds` as shared holder keys, with one candidate per holder.
    fn holders(&self, ds: &[usize]) -> (Vec<Keys>, Vec<Arc<Candidate>>) {
        let mut index: BTreeMap<&str, u32> = BTreeMap::new();
        let mut sites: Vec<Arc<Candidate>> = Vec::new();
        let mut keys = Vec::new();
        for &d in ds {
            let k: Keys = self
                .candidates(d)
                .iter()
                .map(|c| {
                    *index.entry(c.candidate_id.as_str()).or_insert_with(|| {
                        sites.push(c.clone());
                        sites.len() as u32 - 1
                    })
                })
                .collect();
            keys.push(k);
        }
        (keys, sites)
    }

    fn controller_fit(
        &mut self,
        name: &str,
        ds: &[usize],
        ctl: Arc<dyn ServiceController>,
        request: &BTreeMap<String, i64>,
    ) {
        let (keys, sites) = self.holders(ds);
        let dims: Vec<String> = request.keys().cloned().collect();
        let req: Vec<i64> = request.values().copied().collect();
        let vars = ds.iter().map(|&d| VarId(d as u32)).collect();
        let requests = vec![req; ds.len()];
        self.problem.add_constraint(
            name,
            ControllerFit::new(ctl, vars, keys, sites, dims, requests),
        );
    }

    /// One `Capacity` over every demand of the built-in fit constraints: requests of all the
    /// constraints naming a demand add up, and demands on one candidate share its capacity.
    fn finish_fits(&mut self) {
        if self.builtin_fits.is_empty() {
            return;
        }
        let fits = std::mem::take(&mut self.builtin_fits);
        let dims: BTreeSet<&str> = fits
            .iter()
            .flat_map(|f| f.request.keys().map(String::as_str))
            .collect();
        let dims: Vec<&str> = dims.into_iter().collect();
        let ds: BTreeSet<usize> = fits
            .iter()
            .flat_map(|f| f.demands.iter().copied())
            .collect();
        let ds: Vec<usize> = ds.into_iter().collect();
        let (keys, sites) = self.holders(&ds);
        let capacity: Vec<Vec<i64>> = sites
            .iter()
            .map(|c| {
                dims.iter()
                    .map(|d| c.capacity.get(*d).copied().unwrap_or(0))
                    .collect()
            })
            .collect();
        let demands = ds
            .iter()
            .zip(keys)
            .map(|(&d, k)| {
                let need: Vec<i64> = dims
                    .iter()
                    .map(|dim| {
                        fits.iter()
                            .filter(|f| f.demands.contains(&d))
                            .map(|f| f.request.get(*dim).copied().unwrap_or(0))
                            .fold(0i64, i64::saturating_add)
                    })
                    .collect();
                (VarId(d as u32), k, need)
            })
            .collect();
        let names: Vec<&str> = fits.iter().map(|f| f.name.as_str()).collect();
        self.problem.add_constraint(
            names.join(", "),
            Capacity::new(dims.len(), capacity, demands),
        );
    }

    fn network_check(
        &self,
        name: &str,
        ds: &[usize],
        p: &NetworkProps,
        location_leaf: Option<Option<berth_topology::LeafId>>,
    ) -> Result<(), ConstraintError> {
        let first_without_leaf = ds.iter().find_map(|&d| {
            self.sites.leaves[d]
                .iter()
                .position(Option::is_none)
                .map(|i| {
                    format!(
                        "candidate `{}` of demand `{}` names no topology node",
                        self.candidates(d)[i].candidate_id,
                        self.space.demands[d].name
                    )
                })
        });
        let missing = match location_leaf {
            Some(None) => Some("the location is not a topology node".to_owned()),
            _ => first_without_leaf,
        };
        let missing = if self.env.topology.is_none() {
            Some("no topology is loaded".to_owned())
        } else {
            missing
        };
        if let Some(reason) = missing {
            if p.bandwidth.is_some() {
                return Err(ConstraintError::NoTopology {
                    origin: name.to_owned(),
                    reason,
                });
            }
            if p.latency.is_some() && self.env.latency.is_none() {
                return Err(ConstraintError::NoLatencyModel {
                    origin: name.to_owned(),
                    reason,
                });
            }
        }
        Ok(())
    }

    fn network_between(
        &mut self,
        name: &str,
        ds: &[usize],
        p: &NetworkProps,
    ) -> Result<(), ConstraintError> {
        self.network_check(name, ds, p, None)?;
        for (k, &a) in ds.iter().enumerate() {
            for &b in &ds[k + 1..] {
                let link = self.link_fn(a, b);
                let p = p.clone();
                let rel = move |x: Value, y: Value| {
                    link(x.index(), y.index()).is_some_and(|l| l.admits(&p))
                };
                self.problem
                    .add_constraint(name, Pairwise::new(VarId(a as u32), VarId(b as u32), rel));
            }
        }
        Ok(())
    }

    fn network_to_location(
        &mut self,
        name: &str,
        ds: &[usize],
        p: &NetworkProps,
        loc: &str,
    ) -> Result<(), ConstraintError> {
        let leaf = self.env.topology.as_ref().and_then(|t| t.leaf(loc));
        let point = self
            .space
            .locations
            .get(loc)
            .map(|&(a, b)| crate::geo::Point::new(a, b));
        if point.is_none() && leaf.is_none() {
            return Err(ConstraintError::UnlocatedLocation {
                origin: name.to_owned(),
                location: loc.to_owned(),
            });
        }
        self.network_check(name, ds, p, Some(leaf))?;
        for &d in ds {
            let f = self.location_link_fn(d, point, leaf);
            self.filter(name, d, |i, _| f(i).is_some_and(|l| l.admits(p)));
        }
        Ok(())
    }

    /// How candidate `x` of demand `a` and candidate `y` of demand `b` are linked.
    pub(crate) fn link_fn(
        &self,
        a: usize,
        b: usize,
    ) -> impl Fn(usize, usize) -> Option<Link> + Send + Sync + 'static {
        let (pa, pb) = (self.sites.points[a].clone(), self.sites.points[b].clone());
        let (la, lb) = (self.sites.leaves[a].clone(), self.sites.leaves[b].clone());
        let topo = self.env.topology.clone();
        let model = self.env.latency;
        move |x, y| {
            let geo = match (pa.get(x).copied().flatten(), pb.get(y).copied().flatten()) {
                (Some(p), Some(q)) => Some(p.distance_km(&q)),
                _ => None,
            };
            let leaves = (la.get(x).copied().flatten(), lb.get(y).copied().flatten());
            Link::between(topo.as_deref(), leaves, geo, model)
        }
    }

    /// How candidate `x` of demand `d` is linked to a location.
    pub(crate) fn location_link_fn(
        &self,
        d: usize,
        point: Option<crate::geo::Point>,
        leaf: Option<berth_topology::LeafId>,
    ) -> impl Fn(usize) -> Option<Link> + Send + Sync + 'static {
        let pd = self.sites.points[d].clone();
        let ld = self.sites.leaves[d].clone();
        let topo = self.env.topology.clone();
        let model = self.env.latency;
        move |x| {
            let geo = match (pd.get(x).copied().flatten(), point) {
                (Some(p), Some(q)) => Some(p.distance_km(&q)),
                _ => None,
            };
            Link::between(
                topo.as_deref(),
                (ld.get(x).copied().flatten(), leaf),
                geo,
                model,
            )
        }
    }
}

/// Distance, latency and bandwidth between two sites.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Link {
    /// km (network path distance = great-circle distance between the sites).
    pub(crate) km: Option<f64>,
    /// One-way latency in ms, when known.
    pub(crate) latency_ms: Option<f64>,
    /// Bottleneck bandwidth in Mbps: `Some(None)` unlimited, `None` unknown.
    pub(crate) bandwidth: Option<Option<f64>>,
}

impl Link {
    fn between(
        topo: Option<&berth_topology::Topology>,
        leaves: (
            Option<berth_topology::LeafId>,
            Option<berth_topology::LeafId>,
        ),
        geo: Option<f64>,
        model: Option<crate::LatencyModel>,
    ) -> Option<Link> {
        if let (Some(t), (Some(a), Some(b))) = (topo, leaves) {
            return Some(Link {
                km: geo.or_else(|| t.geo_distance_km(a, b)),
                latency_ms: Some(t.path_latency_ms(a, b)),
                bandwidth: Some(t.path_bottleneck_bandwidth(a, b).map(|m| m as f64)),
            });
        }
        let km = geo?;
        Some(Link {
            km: Some(km),
            latency_ms: model.map(|m| m.latency_ms(km)),
            bandwidth: None,
        })
    }

    fn admits(&self, p: &NetworkProps) -> bool {
        let ok = |t: &Option<Threshold>, v: Option<Option<f64>>| match (t, v) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(t), Some(v)) => admits_base(t, v),
        };
        ok(&p.distance, self.km.map(Some))
            && ok(&p.latency, self.latency_ms.map(Some))
            && ok(&p.bandwidth, self.bandwidth)
    }
}

/// Whether `request` fits a candidate's advertised capacity (a dimension it lacks has none).
fn builtin_fits(c: &Candidate, request: &BTreeMap<String, i64>) -> bool {
    request
        .iter()
        .all(|(d, &n)| n <= c.capacity.get(d).copied().unwrap_or(0))
}
