//! Incremental placement state: loads, rule counters and cost, with O(rules of the item)
//! deltas for placing or removing one item. The search runs on this; the checker does not.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use berth_topology::{LeafId, LevelId, NetEdgeId};

use crate::instance::{Instance, ItemId, RuleKind};

/// Fx-style multiplicative hasher: the keys are small integers; no iteration reaches output.
#[derive(Default, Clone, Copy)]
pub(crate) struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
}

pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

/// Marks an unplaced item.
pub(crate) const NONE: u32 = u32::MAX;

/// The primary objective.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Objective {
    /// Fewest active hosts (consolidation).
    #[default]
    Pack,
    /// Balanced load: the sum over hosts and dimensions of squared utilisation.
    Spread,
}

/// Weights of the cost terms: `objective * primary + license * charges + soft * penalties`
/// (each soft rule's penalty is its own weight times its violation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    /// Weight of the primary objective (hosts or squared utilisation).
    pub objective: f64,
    /// Weight of license charges.
    pub license: f64,
    /// Weight of soft-policy penalties (default 10: a violated soft policy costs more than
    /// an extra host).
    pub soft: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            objective: 1.0,
            license: 1.0,
            soft: 10.0,
        }
    }
}

#[derive(Clone, Debug)]
enum RState {
    /// Spread / together: count per vertex, per (vertex, part), placed per part.
    Group {
        n: FastMap<u32, u32>,
        np: FastMap<(u32, u32), u32>,
        total: u32,
        per_part: FastMap<u32, u32>,
    },
    Llmn {
        c1: FastMap<u32, u32>,
        c2: FastMap<u32, u32>,
        distinct: u32,
        unplaced: u32,
    },
    Plain,
}

/// Why an item may not go on a leaf ([`State::blocking`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Block {
    /// It is fixed elsewhere (`OS::VolNotMoved`).
    Fixed,
    /// This dimension has no room for it.
    Capacity(usize),
    /// This hard rule would break.
    Rule(u32),
}

/// Change of cost and of hard violation if an item were placed on a leaf.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Delta {
    pub(crate) hard: f64,
    pub(crate) cost: f64,
}

/// The incremental state.
#[derive(Clone, Debug)]
pub(crate) struct State<'i> {
    pub(crate) inst: &'i Instance,
    pub(crate) objective: Objective,
    pub(crate) w: Weights,
    pub(crate) at: Vec<u32>,
    pub(crate) load: Vec<i64>,
    pub(crate) count: Vec<u32>,
    vols: Vec<u32>,
    /// Exclusive-volume rules whose volume sits on each leaf.
    excl_on: FastMap<u32, Vec<u32>>,
    rs: Vec<RState>,
    pub(crate) viol: Vec<f64>,
    /// Mbit/s reserved per network edge by hard and by soft bandwidth rules, and the sum of
    /// the soft rules' weights crossing it.
    edge_hard: Vec<u64>,
    edge_soft: Vec<u64>,
    edge_w: Vec<f64>,
    lic: FastMap<(u32, u32), u32>,
    pub(crate) inv_cap: Vec<f64>,
    /// Capacity per leaf and dimension, flat (a copy of the topology's, for the hot loop).
    pub(crate) cap: Vec<i64>,
    pub(crate) active: usize,
    pub(crate) sumsq: f64,
    pub(crate) license: f64,
    pub(crate) soft: f64,
    pub(crate) hard: f64,
    pub(crate) placed: usize,
    excl_rule: Vec<Vec<u32>>,
}

impl<'i> State<'i> {
    pub(crate) fn new(inst: &'i Instance, objective: Objective, w: Weights) -> Self {
        let topo = &inst.topo;
        let leaves = topo.leaf_count();
        let dims = inst.dims;
        let mut inv_cap = vec![0.0; leaves * dims];
        let mut cap = vec![0; leaves * dims];
        for l in topo.leaves() {
            for (d, &c) in topo.leaf_capacity(l).iter().enumerate() {
                cap[l.index() * dims + d] = c;
                if c > 0 {
                    inv_cap[l.index() * dims + d] = 1.0 / c as f64;
                }
            }
        }
        let rs = inst
            .rules
            .iter()
            .map(|r| match &r.kind {
                RuleKind::Spread { .. } | RuleKind::Together { .. } => RState::Group {
                    n: FastMap::default(),
                    np: FastMap::default(),
                    total: 0,
                    per_part: FastMap::default(),
                },
                RuleKind::Llmn { members, .. } => RState::Llmn {
                    c1: FastMap::default(),
                    c2: FastMap::default(),
                    distinct: 0,
                    unplaced: members.len() as u32,
                },
                _ => RState::Plain,
            })
            .collect();
        // A volume may carry several exclusivity rules (one per policy naming it).
        let mut excl_rule = vec![Vec::new(); inst.items.len()];
        for (r, rule) in inst.rules.iter().enumerate() {
            if let RuleKind::VolExclusive { item } = rule.kind
                && let Some(list) = excl_rule.get_mut(item as usize)
            {
                list.push(r as u32);
            }
        }
        let s = State {
            inst,
            objective,
            w,
            at: vec![NONE; inst.items.len()],
            load: vec![0; leaves * dims],
            count: vec![0; leaves],
            vols: vec![0; leaves],
            excl_on: FastMap::default(),
            rs,
            viol: vec![0.0; inst.rules.len()],
            edge_hard: vec![0; topo.net_count()],
            edge_soft: vec![0; topo.net_count()],
            edge_w: vec![0.0; topo.net_count()],
            lic: FastMap::default(),
            inv_cap,
            cap,
            active: 0,
            sumsq: 0.0,
            license: 0.0,
            soft: 0.0,
            hard: 0.0,
            placed: 0,
            excl_rule,
        };
        // LLMN deficits of an empty placement are 0: `n - 0 - M <= 0` since n <= M.
        s
    }

    /// The total cost.
    pub(crate) fn cost(&self) -> f64 {
        let primary = match self.objective {
            Objective::Pack => self.active as f64,
            Objective::Spread => self.sumsq,
        };
        self.w.objective * primary + self.w.license * self.license + self.w.soft * self.soft
    }

    pub(crate) fn fits(&self, item: ItemId, leaf: u32) -> bool {
        let d = self.inst.dims;
        let dem = self.inst.demand(item);
        let base = leaf as usize * d;
        let (Some(load), Some(cap), true) = (
            self.load.get(base..base + d),
            self.cap.get(base..base + d),
            dem.len() == d,
        ) else {
            return false;
        };
        load.iter()
            .zip(cap)
            .zip(dem)
            .all(|((&l, &c), &x)| l + x <= c)
    }

    /// Where the leaf is at the level (a leaf lacking the level stands for its own place
    /// there: `Topology::vertex_at_level`).
    fn anc(&self, leaf: u32, level: LevelId) -> u32 {
        self.inst.topo.vertex_at_level(LeafId(leaf), level).0
    }

    /// Violation change of rule `r` if `item` (not placed) were placed on `leaf`.
    fn rule_delta(&self, r: u32, item: ItemId, leaf: u32) -> f64 {
        let inst = self.inst;
        let Some(rule) = inst.rules.get(r as usize) else {
            return 0.0;
        };
        let other = |a: ItemId, b: ItemId| {
            let o = if a == item { b } else { a };
            self.at.get(o as usize).copied().filter(|&l| l != NONE)
        };
        match (&rule.kind, &self.rs[r as usize]) {
            (RuleKind::Spread { level, .. }, RState::Group { n, np, .. }) => {
                let v = self.anc(leaf, *level);
                let p = inst.part.get(&(r, item)).copied().unwrap_or(NONE);
                let nv = n.get(&v).copied().unwrap_or(0);
                let nvp = np.get(&(v, p)).copied().unwrap_or(0);
                f64::from(nv - nvp)
            }
            (
                RuleKind::Together { level, .. },
                RState::Group {
                    n,
                    np,
                    total,
                    per_part,
                },
            ) => {
                let p = inst.part.get(&(r, item)).copied().unwrap_or(NONE);
                let others = total - per_part.get(&p).copied().unwrap_or(0);
                let v = self.anc(leaf, *level);
                let nv = n.get(&v).copied().unwrap_or(0);
                let nvp = np.get(&(v, p)).copied().unwrap_or(0);
                f64::from(others - (nv - nvp))
            }
            (
                RuleKind::Llmn { l1, l2, n, cap, .. },
                RState::Llmn {
                    c1,
                    c2,
                    distinct,
                    unplaced,
                },
            ) => {
                let mut d = 0.0;
                let c = c1.get(&self.anc(leaf, *l1)).copied().unwrap_or(0);
                if c >= *cap {
                    d += 1.0;
                }
                let new_vertex = c == 0;
                if c2.get(&self.anc(leaf, *l2)).copied().unwrap_or(0) >= 1 {
                    d += 1.0;
                }
                let before = i64::from(*n) - i64::from(*distinct) - i64::from(*unplaced);
                let after = before - i64::from(new_vertex) + 1;
                d + (after.max(0) - before.max(0)) as f64
            }
            (RuleKind::Pair { a, b, level, same }, _) => match other(*a, *b) {
                Some(ol) => {
                    let together = self
                        .inst
                        .topo
                        .same_at_level(LeafId(leaf), LeafId(ol), *level);
                    if together == *same { 0.0 } else { 1.0 }
                }
                None => 0.0,
            },
            (RuleKind::MaxHops { a, b, hops }, _) => match other(*a, *b) {
                Some(ol) if inst.topo.hops(LeafId(leaf), LeafId(ol)) > *hops => 1.0,
                _ => 0.0,
            },
            // Bandwidth is not additive per rule (rules share links): see `bw_adds`.
            // The item's own exclusivity; others on the leaf are handled by `excl_delta`.
            (RuleKind::VolExclusive { .. }, _) if self.vols[leaf as usize] >= 1 => 1.0,
            _ => 0.0,
        }
    }

    /// Reservations the (unplaced) item would add on `leaf`, per network edge: `(edge, hard
    /// Mbit/s, soft Mbit/s, soft weight)`, merged by edge (two rules of the item may share
    /// a link, so per-rule deltas would not add up).
    fn bw_adds(&self, item: ItemId, leaf: u32) -> Vec<(u32, u64, u64, f64)> {
        let inst = self.inst;
        let mut out: Vec<(u32, u64, u64, f64)> = Vec::new();
        for &r in &inst.item_rules[item as usize] {
            let rule = &inst.rules[r as usize];
            let RuleKind::Bandwidth { a, b, mbps } = rule.kind else {
                continue;
            };
            let o = if a == item { b } else { a };
            let ol = self.at.get(o as usize).copied().unwrap_or(NONE);
            if o == item || ol == NONE {
                continue;
            }
            for e in inst.topo.path_edges(LeafId(leaf), LeafId(ol)) {
                out.push(if rule.hard {
                    (e.0, mbps, 0, 0.0)
                } else {
                    (e.0, 0, mbps, rule.weight)
                });
            }
        }
        if out.len() > 1 {
            out.sort_unstable_by_key(|x| x.0);
            out.dedup_by(|x, keep| {
                if x.0 != keep.0 {
                    return false;
                }
                keep.1 += x.1;
                keep.2 += x.2;
                keep.3 += x.3;
                true
            });
        }
        out
    }

    /// Hard overflow (Mbit/s) and soft penalty (rule weights included) added by `adds`.
    fn bw_eval(&self, adds: &[(u32, u64, u64, f64)]) -> (f64, f64) {
        let mut hard = 0u64;
        let mut soft = 0.0;
        for &(e, h, s, w) in adds {
            let Some(cap) = self.inst.topo.edge_link(NetEdgeId(e)).bandwidth_mbps else {
                continue;
            };
            let i = e as usize;
            let (h0, s0, w0) = (self.edge_hard[i], self.edge_soft[i], self.edge_w[i]);
            let (h1, s1) = (h0.saturating_add(h), s0.saturating_add(s));
            hard = hard.saturating_add(h1.saturating_sub(cap) - h0.saturating_sub(cap));
            soft += link_penalty(cap, h1, s1, w0 + w) - link_penalty(cap, h0, s0, w0);
        }
        (hard as f64, soft)
    }

    fn bw_apply(&mut self, adds: &[(u32, u64, u64, f64)], add: bool) {
        for &(e, h, s, w) in adds {
            let i = e as usize;
            if add {
                self.edge_hard[i] = self.edge_hard[i].saturating_add(h);
                self.edge_soft[i] = self.edge_soft[i].saturating_add(s);
                self.edge_w[i] += w;
            } else {
                self.edge_hard[i] = self.edge_hard[i].saturating_sub(h);
                self.edge_soft[i] = self.edge_soft[i].saturating_sub(s);
                // Exactly zero when no soft reservation is left (no float residue).
                self.edge_w[i] = if self.edge_soft[i] == 0 {
                    0.0
                } else {
                    self.edge_w[i] - w
                };
            }
        }
    }

    /// Exclusive volumes already on `leaf` that become violated when a volume joins them.
    fn excl_delta(&self, leaf: u32) -> (f64, f64) {
        if self.vols[leaf as usize] != 1 {
            return (0.0, 0.0);
        }
        let mut hard = 0.0;
        let mut soft = 0.0;
        for &r in self.excl_on.get(&leaf).map_or(&[][..], Vec::as_slice) {
            let rule = &self.inst.rules[r as usize];
            if rule.hard {
                hard += 1.0;
            } else {
                soft += rule.weight;
            }
        }
        (hard, soft)
    }

    fn primary_delta(&self, item: ItemId, leaf: u32) -> f64 {
        match self.objective {
            Objective::Pack => {
                if self.count[leaf as usize] == 0 {
                    1.0
                } else {
                    0.0
                }
            }
            Objective::Spread => {
                let d = self.inst.dims;
                let base = leaf as usize * d;
                let dem = self.inst.demand(item);
                (0..d)
                    .map(|k| {
                        let ic = self.inv_cap[base + k];
                        let l = self.load[base + k] as f64;
                        let x = dem[k] as f64;
                        ((l + x) * (l + x) - l * l) * ic * ic
                    })
                    .sum()
            }
        }
    }

    /// Cost and hard-violation change of placing the (unplaced) item on the leaf.
    pub(crate) fn delta(&self, item: ItemId, leaf: u32) -> Delta {
        let mut hard = 0.0;
        let mut soft = 0.0;
        for &r in &self.inst.item_rules[item as usize] {
            let d = self.rule_delta(r, item, leaf);
            if d != 0.0 {
                let rule = &self.inst.rules[r as usize];
                if rule.hard {
                    hard += d;
                } else {
                    soft += rule.weight * d;
                }
            }
        }
        if self.inst.items[item as usize].volume {
            let (h, s) = self.excl_delta(leaf);
            hard += h;
            soft += s;
        }
        let (h, s) = self.bw_eval(&self.bw_adds(item, leaf));
        hard += h;
        soft += s;
        let mut license = 0.0;
        for &p in &self.inst.items[item as usize].licenses {
            if self.lic.get(&(p, leaf)).copied().unwrap_or(0) == 0 {
                license += self.inst.licenses[p as usize].charge[leaf as usize];
            }
        }
        let cost = self.w.objective * self.primary_delta(item, leaf)
            + self.w.license * license
            + self.w.soft * soft;
        Delta { hard, cost }
    }

    /// Whether a hard `Together` rule would still allow every member on one vertex: all its
    /// placed members already sit under `leaf`'s vertex (stronger than the pairwise delta,
    /// and necessary once two parts are placed).
    pub(crate) fn together_ok(&self, item: ItemId, leaf: u32) -> bool {
        for &r in &self.inst.item_rules[item as usize] {
            let rule = &self.inst.rules[r as usize];
            if let (true, RuleKind::Together { level, .. }, RState::Group { n, total, .. }) =
                (rule.hard, &rule.kind, &self.rs[r as usize])
                && *total > 0
                && n.get(&self.anc(leaf, *level)).copied().unwrap_or(0) != *total
            {
                return false;
            }
        }
        true
    }

    /// The first reason the (unplaced) item may not go on `leaf` beside what is placed:
    /// its fixed leaf, a dimension without room, or a hard rule it would break; `None` when
    /// it may ([`State::feasible`]).
    pub(crate) fn blocking(&self, item: ItemId, leaf: u32) -> Option<Block> {
        let inst = self.inst;
        let it = &inst.items[item as usize];
        if let Some(f) = it.fixed
            && f.0 != leaf
        {
            return Some(Block::Fixed);
        }
        let d = inst.dims;
        let base = leaf as usize * d;
        for (k, &x) in inst.demand(item).iter().enumerate() {
            if self.load[base + k] + x > self.cap[base + k] {
                return Some(Block::Capacity(k));
            }
        }
        for &r in &inst.item_rules[item as usize] {
            let rule = &inst.rules[r as usize];
            if !rule.hard {
                continue;
            }
            let breaks = match rule.kind {
                RuleKind::Bandwidth { .. } => false,
                RuleKind::Together { .. } => {
                    self.rule_delta(r, item, leaf) > 0.0 || !self.together_rule_ok(r, leaf)
                }
                _ => self.rule_delta(r, item, leaf) > 0.0,
            };
            if breaks {
                return Some(Block::Rule(r));
            }
        }
        if it.volume && self.excl_delta(leaf).0 > 0.0 {
            let on = self.excl_on.get(&leaf).map_or(&[][..], Vec::as_slice);
            if let Some(&r) = on.iter().find(|&&r| inst.rules[r as usize].hard) {
                return Some(Block::Rule(r));
            }
        }
        if self.bw_eval(&self.bw_adds(item, leaf)).0 > 0.0 {
            let r = inst.item_rules[item as usize].iter().copied().find(|&r| {
                let rule = &inst.rules[r as usize];
                rule.hard && matches!(rule.kind, RuleKind::Bandwidth { .. })
            });
            return r.map(Block::Rule);
        }
        None
    }

    /// Whether hard `Together` rule `r` still allows every member under `leaf`'s vertex.
    fn together_rule_ok(&self, r: u32, leaf: u32) -> bool {
        match (&self.inst.rules[r as usize].kind, &self.rs[r as usize]) {
            (RuleKind::Together { level, .. }, RState::Group { n, total, .. }) => {
                *total == 0 || n.get(&self.anc(leaf, *level)).copied().unwrap_or(0) == *total
            }
            _ => true,
        }
    }

    /// Capacity, fixed leaf, and no new hard violation.
    pub(crate) fn feasible(&self, item: ItemId, leaf: u32) -> bool {
        let it = &self.inst.items[item as usize];
        if let Some(f) = it.fixed
            && f.0 != leaf
        {
            return false;
        }
        self.fits(item, leaf) && self.delta(item, leaf).hard == 0.0 && self.together_ok(item, leaf)
    }

    /// Moves the counters of every rule of the item (placing or removing).
    fn counters(&mut self, item: ItemId, leaf: u32, add: bool) {
        let inst = self.inst;
        for &r in &inst.item_rules[item as usize] {
            let rule = &inst.rules[r as usize];
            let (level_a, level_b) = match &rule.kind {
                RuleKind::Spread { level, .. } | RuleKind::Together { level, .. } => {
                    (Some(*level), None)
                }
                RuleKind::Llmn { l1, l2, .. } => (Some(*l1), Some(*l2)),
                _ => (None, None),
            };
            let va = level_a.map(|l| self.anc(leaf, l));
            let vb = level_b.map(|l| self.anc(leaf, l));
            let p = inst.part.get(&(r, item)).copied().unwrap_or(NONE);
            match &mut self.rs[r as usize] {
                RState::Group {
                    n,
                    np,
                    total,
                    per_part,
                } => {
                    bump(per_part, p, add);
                    if add {
                        *total += 1
                    } else {
                        *total -= 1
                    }
                    if let Some(v) = va {
                        bump(n, v, add);
                        bump(np, (v, p), add);
                    }
                }
                RState::Llmn {
                    c1,
                    c2,
                    distinct,
                    unplaced,
                } => {
                    if add {
                        *unplaced -= 1
                    } else {
                        *unplaced += 1
                    }
                    if let Some(v) = va {
                        let before = c1.get(&v).copied().unwrap_or(0);
                        bump(c1, v, add);
                        if add && before == 0 {
                            *distinct += 1;
                        }
                        if !add && before == 1 {
                            *distinct -= 1;
                        }
                    }
                    if let Some(v) = vb {
                        bump(c2, v, add);
                    }
                }
                RState::Plain => {}
            }
        }
    }

    fn add_viol(&mut self, r: u32, x: f64) {
        let rule = &self.inst.rules[r as usize];
        self.viol[r as usize] += x;
        if rule.hard {
            self.hard += x;
        } else {
            self.soft += rule.weight * x;
        }
    }

    fn excl_here(&self, leaf: u32) -> Vec<u32> {
        self.excl_on.get(&leaf).cloned().unwrap_or_default()
    }

    /// Places an unplaced item.
    pub(crate) fn place(&mut self, item: ItemId, leaf: u32) {
        let inst = self.inst;
        let it = &inst.items[item as usize];
        for &r in &inst.item_rules[item as usize] {
            let x = self.rule_delta(r, item, leaf);
            if x != 0.0 {
                self.add_viol(r, x);
            }
        }
        if it.volume && self.vols[leaf as usize] == 1 {
            for r in self.excl_here(leaf) {
                self.add_viol(r, 1.0);
            }
        }
        if self.objective == Objective::Spread {
            self.sumsq += self.primary_delta(item, leaf);
        }
        for &p in &it.licenses {
            let c = self.lic.entry((p, leaf)).or_insert(0);
            if *c == 0 {
                self.license += inst.licenses[p as usize].charge[leaf as usize];
            }
            *c += 1;
        }
        let adds = self.bw_adds(item, leaf);
        let (h, s) = self.bw_eval(&adds);
        self.hard += h;
        self.soft += s;
        self.bw_apply(&adds, true);
        self.counters(item, leaf, true);
        if self.count[leaf as usize] == 0 {
            self.active += 1;
        }
        self.count[leaf as usize] += 1;
        let dims = inst.dims;
        for k in 0..dims {
            self.load[leaf as usize * dims + k] += it.demand[k];
        }
        if it.volume {
            self.vols[leaf as usize] += 1;
            let rules = &self.excl_rule[item as usize];
            if !rules.is_empty() {
                self.excl_on.entry(leaf).or_default().extend(rules);
            }
        }
        self.at[item as usize] = leaf;
        self.placed += 1;
    }

    /// Removes a placed item (exactly undoing [`State::place`]).
    pub(crate) fn remove(&mut self, item: ItemId) {
        let leaf = self.at[item as usize];
        if leaf == NONE {
            return;
        }
        let inst = self.inst;
        let it = &inst.items[item as usize];
        self.at[item as usize] = NONE;
        self.placed -= 1;
        if it.volume {
            self.vols[leaf as usize] -= 1;
            if let Some(list) = self.excl_on.get_mut(&leaf) {
                for r in &self.excl_rule[item as usize] {
                    if let Some(pos) = list.iter().position(|x| x == r) {
                        list.swap_remove(pos);
                    }
                }
            }
        }
        let dims = inst.dims;
        for k in 0..dims {
            self.load[leaf as usize * dims + k] -= it.demand[k];
        }
        self.count[leaf as usize] -= 1;
        if self.count[leaf as usize] == 0 {
            self.active -= 1;
        }
        self.counters(item, leaf, false);
        let adds = self.bw_adds(item, leaf);
        self.bw_apply(&adds, false);
        let (h, s) = self.bw_eval(&adds);
        self.hard -= h;
        self.soft -= s;
        for &p in &it.licenses {
            if let Some(c) = self.lic.get_mut(&(p, leaf)) {
                *c -= 1;
                if *c == 0 {
                    self.license -= inst.licenses[p as usize].charge[leaf as usize];
                    self.lic.remove(&(p, leaf));
                }
            }
        }
        // The state is now "without the item": subtract what placing it adds.
        for &r in &inst.item_rules[item as usize] {
            let x = self.rule_delta(r, item, leaf);
            if x != 0.0 {
                self.add_viol(r, -x);
            }
        }
        if it.volume && self.vols[leaf as usize] == 1 {
            for r in self.excl_here(leaf) {
                self.add_viol(r, -1.0);
            }
        }
        if self.objective == Objective::Spread {
            self.sumsq -= self.primary_delta(item, leaf);
        }
    }
}

/// Penalty of the soft reservations on one link of capacity `cap`: the soft Mbit/s beyond
/// what the hard reservations leave free, shared among the soft reservations in proportion to
/// their Mbit/s, each charged its weight per overflowing fraction of its own Mbit/s; in sum
/// `overflow * (sum of weights) / (soft Mbit/s)`. Never decreases when a reservation is added.
pub(crate) fn link_penalty(cap: u64, hard: u64, soft: u64, weight: f64) -> f64 {
    if soft == 0 {
        return 0.0;
    }
    let over = hard.saturating_add(soft).saturating_sub(cap).min(soft);
    over as f64 * weight / soft as f64
}

fn bump<K: std::hash::Hash + Eq>(m: &mut FastMap<K, u32>, k: K, add: bool) {
    if add {
        *m.entry(k).or_insert(0) += 1;
    } else if let Some(c) = m.get_mut(&k) {
        *c -= 1;
        if *c == 0 {
            m.remove(&k);
        }
    }
}
