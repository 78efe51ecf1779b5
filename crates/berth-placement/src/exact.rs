//! Exact search through `berth-solver`: the whole instance (small ones) or a neighbourhood of
//! the large-neighbourhood search, encoded as variables over candidate leaves with the
//! solver's built-ins plus three placement constraints (distinct count, exclusive volumes,
//! link bandwidth, hard and soft).

use std::collections::BTreeMap;
use std::sync::Arc;

use berth_solver::{
    AllDifferentGroup, Assignment, AtMostCount, Capacity, Conflict, Constraint, Ctx, Expr, Filter,
    Keys, NO_KEY, Pairwise, Problem, Sense, Value, VarId,
};
use berth_topology::{LeafId, LevelId, Topology};

use crate::instance::{Instance, ItemId, RuleKind};
use crate::state::{Objective, Weights, link_penalty};

/// A relation between the leaves of two items.
type Rel = Arc<dyn Fn(u32, u32) -> bool + Send + Sync>;

/// At least `n` distinct keys among the scope (LLMN's "at least N level-L1 vertices"); on a
/// partial assignment `max(0, n - distinct - unassigned)`, a lower bound of every completion.
struct MinDistinct {
    vars: Vec<VarId>,
    keys: Vec<Keys>,
    n: u32,
}

impl Constraint for MinDistinct {
    fn scope(&self) -> &[VarId] {
        &self.vars
    }
    fn propagate(&self, _: &mut Ctx<'_>) -> Result<(), Conflict> {
        Ok(())
    }
    fn violation(&self, a: &Assignment<'_>) -> f64 {
        let mut seen = std::collections::BTreeSet::new();
        let mut unassigned = 0i64;
        for (i, &x) in self.vars.iter().enumerate() {
            match a.get(x) {
                None => unassigned += 1,
                Some(v) => {
                    let k = self.keys[i].get(v.index()).copied().unwrap_or(NO_KEY);
                    if k != NO_KEY {
                        seen.insert(k);
                    }
                }
            }
        }
        (i64::from(self.n) - seen.len() as i64 - unassigned).max(0) as f64
    }
}

/// The exclusive volume `vars[0]` shares its leaf with none of the other volumes `vars[1..]`.
struct Exclusive {
    vars: Vec<VarId>,
    leaf_of: Vec<Arc<[u32]>>,
    /// Leaves already holding a volume outside the encoded variables.
    taken: Arc<[bool]>,
}

impl Constraint for Exclusive {
    fn scope(&self) -> &[VarId] {
        &self.vars
    }
    fn propagate(&self, _: &mut Ctx<'_>) -> Result<(), Conflict> {
        Ok(())
    }
    fn violation(&self, a: &Assignment<'_>) -> f64 {
        let leaf = |i: usize| {
            a.get(self.vars[i])
                .and_then(|v| self.leaf_of[i].get(v.index()).copied())
        };
        let Some(mine) = leaf(0) else { return 0.0 };
        let shared = self.taken.get(mine as usize).copied().unwrap_or(false)
            || (1..self.vars.len()).any(|i| leaf(i) == Some(mine));
        if shared { 1.0 } else { 0.0 }
    }
}

/// Bandwidth reservations over the links. `soft = false`: hard reservations fit every link,
/// violation = total hard overflow in Mbit/s. `soft = true`: the soft penalty of
/// [`link_penalty`] summed over links (rule weights included), a lower bound of every
/// completion since a link's penalty never decreases when a reservation is added.
struct Links {
    vars: Vec<VarId>,
    leaf_of: Vec<Arc<[u32]>>,
    /// `(end, end, Mbit/s, None = hard | Some(weight))`, ends indexing `vars`.
    pairs: Vec<(usize, usize, u64, Option<f64>)>,
    /// Per edge: hard Mbit/s, soft Mbit/s, soft weight of the pairs outside the variables.
    base: BTreeMap<u32, (u64, u64, f64)>,
    topo: Arc<Topology>,
    soft: bool,
}

impl Constraint for Links {
    fn scope(&self) -> &[VarId] {
        &self.vars
    }
    fn propagate(&self, _: &mut Ctx<'_>) -> Result<(), Conflict> {
        Ok(())
    }
    fn violation(&self, a: &Assignment<'_>) -> f64 {
        let leaf = |i: usize| {
            a.get(self.vars[i])
                .and_then(|v| self.leaf_of[i].get(v.index()).copied())
        };
        let mut used = self.base.clone();
        for &(x, y, mbps, weight) in &self.pairs {
            if let (Some(p), Some(q)) = (leaf(x), leaf(y)) {
                for e in self.topo.path_edges(LeafId(p), LeafId(q)) {
                    let u = used.entry(e.0).or_default();
                    match weight {
                        None => u.0 = u.0.saturating_add(mbps),
                        Some(w) => {
                            u.1 = u.1.saturating_add(mbps);
                            u.2 += w;
                        }
                    }
                }
            }
        }
        let mut hard = 0u64;
        let mut soft = 0.0;
        for (&e, &(h, s, w)) in &used {
            if let Some(c) = self
                .topo
                .edge_link(berth_topology::NetEdgeId(e))
                .bandwidth_mbps
            {
                hard = hard.saturating_add(h.saturating_sub(c));
                soft += link_penalty(c, h, s, w);
            }
        }
        if self.soft { soft } else { hard as f64 }
    }
}

/// What the encoder needs besides the instance: which items are variables, their candidate
/// leaves, and the fixed surroundings (loads and counts of items that are not variables).
pub(crate) struct Scope<'a> {
    pub(crate) items: Vec<ItemId>,
    pub(crate) cands: Vec<Vec<u32>>,
    /// Placement of the items that are not variables (`None` = not placed or a variable).
    pub(crate) fixed: &'a [Option<LeafId>],
}

/// Builds the solver problem. Values of variable `k` are indexes into `cands[k]`.
pub(crate) fn encode(
    inst: &Instance,
    scope: &Scope<'_>,
    objective: Objective,
    w: Weights,
) -> Problem {
    let topo = &inst.topo;
    let mut p = Problem::new();
    let var_of: BTreeMap<ItemId, usize> = scope
        .items
        .iter()
        .enumerate()
        .map(|(k, &i)| (i, k))
        .collect();
    let cands: Vec<Arc<[u32]>> = scope
        .cands
        .iter()
        .map(|c| Arc::from(c.as_slice()))
        .collect();
    let vars: Vec<VarId> = scope
        .items
        .iter()
        .zip(&cands)
        .map(|(&i, c)| p.add_var(inst.items[i as usize].name.clone(), c.len() as u32))
        .collect();
    let fixed_at = |i: ItemId| scope.fixed.get(i as usize).copied().flatten();

    // Capacity over the union of candidate leaves, minus the fixed items' load.
    let mut holders: Vec<u32> = cands.iter().flat_map(|c| c.iter().copied()).collect();
    holders.sort_unstable();
    holders.dedup();
    let holder_index: BTreeMap<u32, u32> = holders
        .iter()
        .enumerate()
        .map(|(h, &l)| (l, h as u32))
        .collect();
    let mut capacity: Vec<Vec<i64>> = holders
        .iter()
        .map(|&l| topo.leaf_capacity(LeafId(l)).to_vec())
        .collect();
    for (i, it) in inst.items.iter().enumerate() {
        if var_of.contains_key(&(i as u32)) {
            continue;
        }
        if let Some(l) = fixed_at(i as u32)
            && let Some(&h) = holder_index.get(&l.0)
        {
            for (k, d) in it.demand.iter().enumerate() {
                capacity[h as usize][k] -= d;
            }
        }
    }
    // A negative residual (an overfull surrounding) forbids the holder outright.
    let bad_holder: Vec<bool> = capacity.iter().map(|c| c.iter().any(|&x| x < 0)).collect();
    for c in &mut capacity {
        for x in c.iter_mut() {
            *x = (*x).max(0);
        }
    }
    let keys_of = |c: &Arc<[u32]>| -> Keys {
        c.iter()
            .map(|l| holder_index.get(l).copied().unwrap_or(NO_KEY))
            .collect()
    };
    let demands: Vec<(VarId, Keys, Vec<i64>)> = scope
        .items
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            (
                vars[k],
                keys_of(&cands[k]),
                inst.items[i as usize].demand.clone(),
            )
        })
        .collect();
    if inst.dims > 0 {
        p.add_constraint("capacity", Capacity::new(inst.dims, capacity, demands));
    }
    for (k, &i) in scope.items.iter().enumerate() {
        let it = &inst.items[i as usize];
        let c = cands[k].clone();
        let fixed = it.fixed;
        let bad = bad_holder.clone();
        let hi = holder_index.clone();
        p.add_constraint(
            format!("{} fixed", it.name),
            Filter::keep(vars[k], c.len() as u32, move |v| {
                let l = c[v.index()];
                fixed.is_none_or(|f| f.0 == l) && !hi.get(&l).is_some_and(|&h| bad[h as usize])
            }),
        );
    }

    let leaf_at = |k: usize, v: Value| cands[k].get(v.index()).copied().unwrap_or(u32::MAX);
    let add = |p: &mut Problem, name: String, hard: bool, weight: f64, c: Box<dyn Constraint>| {
        let wt = if hard { None } else { Some(w.soft * weight) };
        p.add_boxed(name, c, wt);
    };
    // Unary relation of a variable against a fixed item, as a filter (hard) or a soft pair.
    for (r, rule) in inst.rules.iter().enumerate() {
        let name = format!("rule {r}");
        let pair_rel = |a: ItemId, b: ItemId, rel: Rel| match (
            var_of.get(&a),
            var_of.get(&b),
            fixed_at(a),
            fixed_at(b),
        ) {
            (Some(&ka), Some(&kb), _, _) => {
                let (ca, cb) = (cands[ka].clone(), cands[kb].clone());
                let rel = rel.clone();
                let c = Pairwise::new(vars[ka], vars[kb], move |x, y| {
                    rel(
                        ca.get(x.index()).copied().unwrap_or(u32::MAX),
                        cb.get(y.index()).copied().unwrap_or(u32::MAX),
                    )
                });
                Some(Box::new(c) as Box<dyn Constraint>)
            }
            (Some(&ka), None, _, Some(lb)) => {
                let ca = cands[ka].clone();
                Some(Box::new(Filter::keep(vars[ka], ca.len() as u32, move |x| {
                    rel(ca[x.index()], lb.0)
                })) as Box<dyn Constraint>)
            }
            (None, Some(&kb), Some(la), _) => {
                let cb = cands[kb].clone();
                Some(Box::new(Filter::keep(vars[kb], cb.len() as u32, move |y| {
                    rel(la.0, cb[y.index()])
                })) as Box<dyn Constraint>)
            }
            _ => None,
        };
        let t = topo.clone();
        let level_rel = |level: LevelId, same: bool| -> Rel {
            let t = t.clone();
            Arc::new(move |x, y| {
                x != u32::MAX
                    && y != u32::MAX
                    && t.same_at_level(LeafId(x), LeafId(y), level) == same
            })
        };
        let mut pairs: Vec<(ItemId, ItemId, Rel)> = Vec::new();
        match &rule.kind {
            RuleKind::Spread { level, parts } | RuleKind::Together { level, parts } => {
                let same = matches!(rule.kind, RuleKind::Together { .. });
                let rel = level_rel(*level, same);
                for (i, a) in parts.iter().enumerate() {
                    for b in &parts[i + 1..] {
                        for &x in a {
                            for &y in b {
                                pairs.push((x, y, rel.clone()));
                            }
                        }
                    }
                }
            }
            RuleKind::Pair { a, b, level, same } => pairs.push((*a, *b, level_rel(*level, *same))),
            RuleKind::MaxHops { a, b, hops } => {
                let t = topo.clone();
                let h = *hops;
                pairs.push((
                    *a,
                    *b,
                    Arc::new(move |x, y| {
                        x != u32::MAX && y != u32::MAX && t.hops(LeafId(x), LeafId(y)) <= h
                    }),
                ));
            }
            RuleKind::Llmn {
                l1,
                l2,
                n,
                cap,
                members,
            } => {
                let vmembers: Vec<usize> = members
                    .iter()
                    .filter_map(|m| var_of.get(m).copied())
                    .collect();
                let mut outside1: BTreeMap<u32, u32> = BTreeMap::new();
                let mut outside2: BTreeMap<u32, u32> = BTreeMap::new();
                let mut placed_outside = 0u32;
                for &m in members {
                    if var_of.contains_key(&m) {
                        continue;
                    }
                    if let Some(l) = fixed_at(m) {
                        placed_outside += 1;
                        *outside1.entry(topo.vertex_at_level(l, *l1).0).or_default() += 1;
                        *outside2.entry(topo.vertex_at_level(l, *l2).0).or_default() += 1;
                    }
                }
                let key = |level: LevelId, k: usize| -> Keys {
                    cands[k]
                        .iter()
                        .map(|&l| topo.vertex_at_level(LeafId(l), level).0)
                        .collect()
                };
                // L2: no two members on one vertex (members outside: filters).
                let keys2: Vec<Keys> = vmembers.iter().map(|&k| key(*l2, k)).collect();
                add(
                    &mut p,
                    format!("{name} l2"),
                    rule.hard,
                    rule.weight,
                    Box::new(AllDifferentGroup::new(
                        vmembers.iter().map(|&k| vars[k]).collect(),
                        keys2.clone(),
                    )),
                );
                for (j, &k) in vmembers.iter().enumerate() {
                    let taken: Vec<bool> = keys2[j]
                        .iter()
                        .map(|g| *g != NO_KEY && outside2.contains_key(g))
                        .collect();
                    if taken.iter().any(|&b| b) {
                        let c = Filter::forbid(
                            vars[k],
                            taken
                                .iter()
                                .enumerate()
                                .filter(|(_, b)| **b)
                                .map(|(v, _)| Value(v as u32)),
                        );
                        add(
                            &mut p,
                            format!("{name} l2 fixed"),
                            rule.hard,
                            rule.weight,
                            Box::new(c),
                        );
                    }
                }
                // L1: at most `cap` per vertex, counting members outside.
                let keys1: Vec<Keys> = vmembers.iter().map(|&k| key(*l1, k)).collect();
                let mut verts: Vec<u32> = keys1
                    .iter()
                    .flat_map(|k| k.iter().copied())
                    .filter(|&g| g != NO_KEY)
                    .collect();
                verts.sort_unstable();
                verts.dedup();
                for g in verts {
                    let limit = cap.saturating_sub(outside1.get(&g).copied().unwrap_or(0));
                    let sets: Vec<Arc<[bool]>> = keys1
                        .iter()
                        .map(|k| k.iter().map(|&x| x == g).collect())
                        .collect();
                    add(
                        &mut p,
                        format!("{name} l1 {g}"),
                        rule.hard,
                        rule.weight,
                        Box::new(AtMostCount::new(
                            vmembers.iter().map(|&k| vars[k]).collect(),
                            sets,
                            limit,
                        )),
                    );
                    // Excess already outside is not the variables' doing: excluded from the limit.
                }
                // At least n vertices: outside ones count as distinct keys already placed.
                let need = n.saturating_sub(outside1.len() as u32);
                let _ = placed_outside;
                if need > 0 {
                    let keys: Vec<Keys> = keys1
                        .iter()
                        .map(|k| {
                            k.iter()
                                .map(|&g| if outside1.contains_key(&g) { NO_KEY } else { g })
                                .collect()
                        })
                        .collect();
                    let unplaced_outside = members
                        .iter()
                        .filter(|m| !var_of.contains_key(m) && fixed_at(**m).is_none())
                        .count() as u32;
                    add(
                        &mut p,
                        format!("{name} n"),
                        rule.hard,
                        rule.weight,
                        Box::new(MinDistinct {
                            vars: vmembers.iter().map(|&k| vars[k]).collect(),
                            keys,
                            n: need.saturating_sub(unplaced_outside),
                        }),
                    );
                }
            }
            RuleKind::VolExclusive { item } => {
                if let Some(&k) = var_of.get(item) {
                    let mut vs = vec![vars[k]];
                    let mut leaf_of = vec![cands[k].clone()];
                    for (j, &i) in scope.items.iter().enumerate() {
                        if i != *item && inst.items[i as usize].volume {
                            vs.push(vars[j]);
                            leaf_of.push(cands[j].clone());
                        }
                    }
                    let mut taken = vec![false; topo.leaf_count()];
                    for (i, it) in inst.items.iter().enumerate() {
                        if it.volume
                            && !var_of.contains_key(&(i as u32))
                            && let Some(l) = fixed_at(i as u32)
                        {
                            taken[l.index()] = true;
                        }
                    }
                    add(
                        &mut p,
                        name.clone(),
                        rule.hard,
                        rule.weight,
                        Box::new(Exclusive {
                            vars: vs,
                            leaf_of,
                            taken: Arc::from(taken),
                        }),
                    );
                }
            }
            RuleKind::Bandwidth { .. } => {}
        }
        for (a, b, rel) in pairs {
            if let Some(c) = pair_rel(a, b, rel) {
                add(&mut p, name.clone(), rule.hard, rule.weight, c);
            }
        }
    }
    // Bandwidth: one hard and one soft constraint over every pair with a variable end.
    let mut bw_pairs = Vec::new();
    let mut bw_vars: Vec<usize> = Vec::new();
    let mut base: BTreeMap<u32, (u64, u64, f64)> = BTreeMap::new();
    for rule in &inst.rules {
        if let RuleKind::Bandwidth { a, b, mbps } = &rule.kind {
            let weight = (!rule.hard).then_some(rule.weight);
            match (var_of.get(a), var_of.get(b)) {
                (None, None) => {
                    if let (Some(x), Some(y)) = (fixed_at(*a), fixed_at(*b)) {
                        for e in topo.path_edges(x, y) {
                            let u = base.entry(e.0).or_default();
                            match weight {
                                None => u.0 = u.0.saturating_add(*mbps),
                                Some(w) => {
                                    u.1 = u.1.saturating_add(*mbps);
                                    u.2 += w;
                                }
                            }
                        }
                    }
                }
                (ka, kb) => {
                    let mut slot = |k: Option<&usize>, item: ItemId| -> Option<usize> {
                        match k {
                            Some(&k) => {
                                if let Some(pos) = bw_vars.iter().position(|&x| x == k) {
                                    Some(pos)
                                } else {
                                    bw_vars.push(k);
                                    Some(bw_vars.len() - 1)
                                }
                            }
                            None => fixed_at(item).map(|l| usize::MAX - l.index()),
                        }
                    };
                    if let (Some(x), Some(y)) = (slot(ka, *a), slot(kb, *b)) {
                        bw_pairs.push((x, y, *mbps, weight));
                    }
                }
            }
        }
    }
    if !bw_pairs.is_empty() {
        // Fixed ends become one-value pseudo variables: encode them through a constant leaf.
        let mut vs: Vec<VarId> = bw_vars.iter().map(|&k| vars[k]).collect();
        let mut leaf_of: Vec<Arc<[u32]>> = bw_vars.iter().map(|&k| cands[k].clone()).collect();
        let mut pairs = Vec::new();
        let mut fixed_ends: BTreeMap<usize, usize> = BTreeMap::new();
        for (x, y, m, weight) in bw_pairs {
            let mut fix = |s: usize| -> usize {
                if s < bw_vars.len() {
                    return s;
                }
                *fixed_ends.entry(s).or_insert_with(|| {
                    let leaf = (usize::MAX - s) as u32;
                    let v = p.add_var("fixed end", 1);
                    vs.push(v);
                    leaf_of.push(Arc::from(vec![leaf]));
                    vs.len() - 1
                })
            };
            let (x, y) = (fix(x), fix(y));
            pairs.push((x, y, m, weight));
        }
        let any_hard = pairs.iter().any(|q| q.3.is_none());
        let any_soft = pairs.iter().any(|q| q.3.is_some()) || base.values().any(|b| b.1 > 0);
        let links = |soft: bool| Links {
            vars: vs.clone(),
            leaf_of: leaf_of.clone(),
            pairs: pairs.clone(),
            base: base.clone(),
            topo: topo.clone(),
            soft,
        };
        if any_hard {
            p.add_constraint("bandwidth", links(false));
        }
        if any_soft {
            p.add_soft("soft bandwidth", w.soft, links(true));
        }
    }

    // Objective.
    let mut terms: Vec<(f64, Expr)> = Vec::new();
    match objective {
        Objective::Pack => {
            let mut by_leaf: BTreeMap<u32, Vec<Expr>> = BTreeMap::new();
            for (k, c) in cands.iter().enumerate() {
                for (v, &l) in c.iter().enumerate() {
                    let costs: Vec<f64> = (0..c.len())
                        .map(|j| if j == v { 1.0 } else { 0.0 })
                        .collect();
                    by_leaf
                        .entry(l)
                        .or_default()
                        .push(Expr::unary(vars[k], costs));
                }
            }
            for (l, list) in by_leaf {
                // A leaf already used by a fixed item costs nothing more.
                let occupied = scope
                    .fixed
                    .iter()
                    .enumerate()
                    .any(|(i, f)| *f == Some(LeafId(l)) && !var_of.contains_key(&(i as u32)));
                if !occupied {
                    terms.push((w.objective, Expr::Max(list)));
                }
            }
        }
        Objective::Spread => {
            let ic = |l: u32, d: usize| {
                let c = topo.leaf_capacity(LeafId(l))[d];
                if c > 0 { 1.0 / c as f64 } else { 0.0 }
            };
            let mut base_load: BTreeMap<u32, Vec<i64>> = BTreeMap::new();
            for (i, it) in inst.items.iter().enumerate() {
                if !var_of.contains_key(&(i as u32))
                    && let Some(l) = fixed_at(i as u32)
                {
                    let e = base_load.entry(l.0).or_insert_with(|| vec![0; inst.dims]);
                    for (k, d) in it.demand.iter().enumerate() {
                        e[k] += d;
                    }
                }
            }
            for (k, &i) in scope.items.iter().enumerate() {
                let dem = &inst.items[i as usize].demand;
                let costs: Vec<f64> = cands[k]
                    .iter()
                    .map(|&l| {
                        let b = base_load.get(&l);
                        (0..inst.dims)
                            .map(|d| {
                                let x = dem[d] as f64;
                                let bl = b.map_or(0.0, |b| b[d] as f64);
                                (x * x + 2.0 * x * bl) * ic(l, d) * ic(l, d)
                            })
                            .sum()
                    })
                    .collect();
                terms.push((w.objective, Expr::unary(vars[k], costs)));
            }
            for a in 0..scope.items.len() {
                for b in a + 1..scope.items.len() {
                    let (da, db) = (
                        inst.items[scope.items[a] as usize].demand.clone(),
                        inst.items[scope.items[b] as usize].demand.clone(),
                    );
                    let (ca, cb) = (cands[a].clone(), cands[b].clone());
                    let t = topo.clone();
                    let dims = inst.dims;
                    let f = move |x: Value, y: Value| {
                        let (la, lb) = (ca[x.index()], cb[y.index()]);
                        if la != lb {
                            return 0.0;
                        }
                        (0..dims)
                            .map(|d| {
                                let c = t.leaf_capacity(LeafId(la))[d];
                                if c > 0 {
                                    2.0 * da[d] as f64 * db[d] as f64 / (c as f64 * c as f64)
                                } else {
                                    0.0
                                }
                            })
                            .sum()
                    };
                    let upper = (0..inst.dims)
                        .map(|d| {
                            let da = inst.items[scope.items[a] as usize].demand[d] as f64;
                            let db = inst.items[scope.items[b] as usize].demand[d] as f64;
                            let m = cands[a].iter().map(|&l| ic(l, d)).fold(0.0f64, f64::max);
                            2.0 * da * db * m * m
                        })
                        .sum::<f64>();
                    if upper > 0.0 {
                        terms.push((w.objective, Expr::pair(vars[a], vars[b], 0.0, upper, f)));
                    }
                }
            }
        }
    }
    // License charges per (product, leaf).
    for (pi, lic) in inst.licenses.iter().enumerate() {
        let mut by_leaf: BTreeMap<u32, Vec<Expr>> = BTreeMap::new();
        for (k, &i) in scope.items.iter().enumerate() {
            if !inst.items[i as usize].licenses.contains(&(pi as u32)) {
                continue;
            }
            for (v, &l) in cands[k].iter().enumerate() {
                let costs: Vec<f64> = (0..cands[k].len())
                    .map(|j| if j == v { 1.0 } else { 0.0 })
                    .collect();
                by_leaf
                    .entry(l)
                    .or_default()
                    .push(Expr::unary(vars[k], costs));
            }
        }
        for (l, list) in by_leaf {
            let already = inst.items.iter().enumerate().any(|(i, it)| {
                !var_of.contains_key(&(i as u32))
                    && it.licenses.contains(&(pi as u32))
                    && fixed_at(i as u32) == Some(LeafId(l))
            });
            let charge = lic.charge[l as usize];
            if !already && charge > 0.0 {
                terms.push((w.license * charge, Expr::Max(list)));
            }
        }
    }
    let _ = leaf_at;
    p.set_objective(Sense::Minimize, Expr::sum(terms));
    p
}
