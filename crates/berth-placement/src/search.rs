//! The heuristic: greedy construction (policy-bound items spread within a capacity share,
//! then a bin-centric fill of the policy-free ones; honouring hard policies) and
//! large-neighbourhood search (destroy/repair, exact repair of small neighbourhoods through
//! `berth-solver`), anytime under a deadline, seeded.

use std::collections::BTreeSet;
use std::sync::Arc;

use berth_solver::{Deadline, Outcome, SolveOptions};
use berth_topology::{LeafId, NetVertexId};

use crate::check::{Report, check};
use crate::exact::{Scope, encode};
use crate::freetree::FreeTree;
use crate::instance::{Instance, ItemId, RuleKind};
use crate::pool::Pool;
use crate::state::{NONE, Objective, State, Weights};

/// How hard to try for a proof of optimality.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExactMode {
    /// Exact search on small instances (at most [`Options::exact_max_items`] items and
    /// [`Options::exact_max_leaves`] leaves) after the heuristic; heuristic otherwise.
    #[default]
    Auto,
    /// Heuristic only.
    Off,
    /// Exact search only (whatever the size; limits still apply).
    Only,
}

/// Options of [`solve`].
#[derive(Clone)]
pub struct Options {
    /// Primary objective.
    pub objective: Objective,
    /// Weights of the cost terms.
    pub weights: Weights,
    /// Seed of the neighbourhood choices: same seed and iteration count, same placement.
    pub seed: u64,
    /// Stop the improvement phase when this says so.
    pub deadline: Option<Arc<dyn Deadline>>,
    /// Stop after this many neighbourhoods (deterministic, unlike the deadline).
    pub max_iterations: Option<u64>,
    /// Exact search policy.
    pub exact: ExactMode,
    /// Largest instance (items) solved exactly in [`ExactMode::Auto`].
    pub exact_max_items: usize,
    /// Largest instance (leaves) solved exactly in [`ExactMode::Auto`].
    pub exact_max_leaves: usize,
    /// Node limit of one exact search.
    pub exact_node_limit: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            objective: Objective::Pack,
            weights: Weights::default(),
            seed: 0,
            deadline: None,
            max_iterations: Some(2_000),
            exact: ExactMode::Auto,
            exact_max_items: 16,
            exact_max_leaves: 64,
            exact_node_limit: 2_000_000,
        }
    }
}

/// Whether a placement was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every item placed, every hard policy satisfied (the checker agrees).
    Placed,
    /// Proven: no placement satisfies the hard policies.
    Infeasible,
    /// No valid placement found within the limits (not a proof).
    Unsolved,
}

impl Status {
    /// `placed`, `infeasible` or `unsolved`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Placed => "placed",
            Status::Infeasible => "infeasible",
            Status::Unsolved => "unsolved",
        }
    }
}

/// Counters of one solve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Items placed by the greedy construction.
    pub greedy_placed: usize,
    /// Neighbourhoods tried.
    pub iterations: u64,
    /// Neighbourhoods that improved the cost.
    pub improvements: u64,
    /// Neighbourhoods repaired by the exact search.
    pub exact_repairs: u64,
    /// Search nodes of every exact search.
    pub exact_nodes: u64,
    /// Hosts used after the greedy construction.
    pub greedy_hosts: usize,
    /// Lower bound on hosts ([`Instance::hosts_lower_bound`]).
    pub lower_bound: usize,
}

/// A solve's answer.
#[derive(Clone, Debug)]
pub struct Solution {
    /// Outcome.
    pub status: Status,
    /// Proven optimal for the weighted cost (exact search completed).
    pub optimal: bool,
    /// Leaf of each item (`None` = unplaced).
    pub assignment: Vec<Option<LeafId>>,
    /// The independent checker's verdict and the cost terms.
    pub report: Report,
    /// Counters.
    pub stats: Stats,
}

/// Greedy construction only (see the crate docs): the assignment before any search.
#[must_use]
pub fn greedy(inst: &Instance, objective: Objective, weights: Weights) -> Vec<Option<LeafId>> {
    let mut s = Search::new(inst, objective, weights, 0);
    s.construct();
    s.assignment()
}

/// Places the instance: heuristic (greedy + LNS) and, for small instances, exact search.
#[must_use]
pub fn solve(inst: &Instance, opts: &Options) -> Solution {
    let small =
        inst.items.len() <= opts.exact_max_items && inst.topo.leaf_count() <= opts.exact_max_leaves;
    let mut stats = Stats {
        lower_bound: inst.hosts_lower_bound(),
        ..Stats::default()
    };
    let mut best: Option<Vec<Option<LeafId>>> = None;
    if opts.exact != ExactMode::Only {
        let mut s = Search::new(inst, opts.objective, opts.weights, opts.seed);
        s.construct();
        stats.greedy_placed = s.st.placed;
        stats.greedy_hosts = s.st.active;
        // Small instances keep most of the budget for the exact search.
        let mut lns = opts.clone();
        if opts.exact == ExactMode::Auto && small {
            lns.max_iterations = Some(opts.max_iterations.unwrap_or(200).min(200));
        }
        s.improve(&lns, &mut stats);
        best = Some(s.assignment());
    }
    let mut optimal = false;
    let mut proven_infeasible = false;
    if opts.exact == ExactMode::Only || (opts.exact == ExactMode::Auto && small) {
        let all: Vec<u32> = (0..inst.topo.leaf_count() as u32).collect();
        let none = vec![None; inst.items.len()];
        let scope = Scope {
            items: (0..inst.items.len() as u32).collect(),
            cands: inst.items.iter().map(|_| all.clone()).collect(),
            fixed: &none,
        };
        let p = encode(inst, &scope, opts.objective, opts.weights);
        let so = SolveOptions {
            node_limit: Some(opts.exact_node_limit),
            deadline: opts.deadline.clone(),
            explain_checks: 0,
            ..SolveOptions::default()
        };
        match p.solve(&so) {
            Ok(Outcome::Solved {
                solutions,
                optimal: opt,
                stats: st,
                ..
            }) => {
                stats.exact_nodes += st.nodes;
                if let Some(sol) = solutions.first() {
                    let a: Vec<Option<LeafId>> = sol
                        .values
                        .iter()
                        .take(inst.items.len())
                        .map(|v| Some(LeafId(v.0)))
                        .collect();
                    let r = check(inst, &a, opts.objective, opts.weights);
                    let better = match &best {
                        Some(b) => {
                            let rb = check(inst, b, opts.objective, opts.weights);
                            !rb.is_valid() || (r.is_valid() && r.cost.total <= rb.cost.total + 1e-9)
                        }
                        None => true,
                    };
                    if r.is_valid() && better {
                        best = Some(a);
                    }
                    optimal = opt && r.is_valid();
                }
            }
            Ok(Outcome::Infeasible { stats: st, .. }) => {
                stats.exact_nodes += st.nodes;
                proven_infeasible = true;
            }
            Ok(Outcome::Stopped { stats: st, .. }) => stats.exact_nodes += st.nodes,
            // An encoding the solver rejects is a bug of ours; the heuristic answer stands.
            Err(_) => {}
        }
    }
    let assignment = best.unwrap_or_else(|| vec![None; inst.items.len()]);
    let report = check(inst, &assignment, opts.objective, opts.weights);
    let status = if report.is_valid() {
        Status::Placed
    } else if proven_infeasible || trivially_infeasible(inst) {
        Status::Infeasible
    } else {
        Status::Unsolved
    };
    Solution {
        status,
        optimal: optimal && status == Status::Placed,
        assignment,
        report,
        stats,
    }
}

/// Some item fits no leaf even alone.
fn trivially_infeasible(inst: &Instance) -> bool {
    inst.items.iter().any(|it| {
        !inst.topo.leaves().any(|l| {
            it.fixed.is_none_or(|f| f == l)
                && inst
                    .topo
                    .leaf_capacity(l)
                    .iter()
                    .zip(&it.demand)
                    .all(|(c, d)| d <= c)
        })
    })
}

/// SplitMix64: seeded, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const SCALE: f64 = 1e6;

struct Search<'i> {
    st: State<'i>,
    /// Per-dimension normaliser: 1 / largest capacity.
    norm: Vec<f64>,
    /// Per-dimension scarcity: total demand over total capacity.
    wdim: Vec<f64>,
    size_key: Vec<u64>,
    /// Pack: open leaves by residual measure. Spread: every leaf by utilisation.
    open: BTreeSet<(u64, u32)>,
    /// Pack: empty leaves, largest capacity first.
    empty: BTreeSet<(u64, u32)>,
    key: Vec<u64>,
    unplaced: Vec<ItemId>,
    rng: Rng,
    building: bool,
    /// Items on each leaf (unordered), so a neighbourhood costs O(its leaves), not O(items).
    on_leaf: Vec<Vec<ItemId>>,
    /// Index of each placed item in its leaf's list.
    slot: Vec<u32>,
    /// Free capacity of the open leaves, for the pack repair.
    free: FreeTree,
    /// Where the current neighbourhood's repair starts scanning leaves (seeded).
    probe: u64,
    /// Construction of policy-bound items: the share of each leaf's capacity they may use
    /// (`None` = all of it), so they spread and leave room for the bin-centric fill.
    share_cap: Option<Vec<i64>>,
    /// Construction: the leaf of the last placement, where the next search starts.
    cursor: u32,
}

/// Free-index nodes one pack repair step examines before it gives up on open leaves.
const REPAIR_NODES: usize = 2048;
/// Feasible open leaves a pack repair compares (the tightest wins).
const REPAIR_FEASIBLE: usize = 8;

/// Policy-bound items may use this multiple of their share of the total demand (in the
/// dimension where it is largest) on each leaf during construction.
const SHARE_SLACK: f64 = 1.5;
/// Tree buckets the bin-centric construction examines per choice once it has a candidate:
/// near-best choices in bounded time (measured to pack as tightly as the exact choice).
const POOL_BUDGET: usize = 8;
/// Feasible open leaves a construction step of a policy-bound item compares.
const BUILD_FEASIBLE: usize = 4;

/// Leaves near placed partners a placement step also tries.
const NEAR: usize = 64;

impl<'i> Search<'i> {
    fn new(inst: &'i Instance, objective: Objective, w: Weights, seed: u64) -> Self {
        let st = State::new(inst, objective, w);
        let dims = inst.dims;
        let mut norm = vec![0.0; dims];
        for l in inst.topo.leaves() {
            for (d, &c) in inst.topo.leaf_capacity(l).iter().enumerate() {
                norm[d] = f64::max(norm[d], c as f64);
            }
        }
        for x in &mut norm {
            *x = if *x > 0.0 { 1.0 / *x } else { 0.0 };
        }
        let size_key = inst
            .items
            .iter()
            .map(|it| {
                (it.demand
                    .iter()
                    .zip(&norm)
                    .map(|(&d, n)| d as f64 * n)
                    .sum::<f64>()
                    * SCALE) as u64
            })
            .collect();
        // Scarcity of each dimension: total demand over total capacity.
        let wdim: Vec<f64> = (0..dims)
            .map(|k| {
                let dem: f64 = inst.items.iter().map(|it| it.demand[k] as f64).sum();
                let cap: f64 = inst
                    .topo
                    .leaves()
                    .map(|l| inst.topo.leaf_capacity(l)[k] as f64)
                    .sum();
                if cap > 0.0 { dem / cap } else { 0.0 }
            })
            .collect();
        let mut s = Search {
            st,
            norm,
            wdim,
            size_key,
            open: BTreeSet::new(),
            empty: BTreeSet::new(),
            key: vec![0; inst.topo.leaf_count()],
            unplaced: Vec::new(),
            rng: Rng(seed ^ 0x5EED),
            building: false,
            on_leaf: vec![Vec::new(); inst.topo.leaf_count()],
            slot: vec![0; inst.items.len()],
            free: FreeTree::new(inst.topo.leaf_count(), inst.dims),
            probe: 0,
            share_cap: None,
            cursor: 0,
        };
        for l in 0..inst.topo.leaf_count() as u32 {
            s.index_insert(l);
        }
        s
    }

    fn measure(&self, leaf: u32) -> u64 {
        let inst = self.st.inst;
        let dims = inst.dims;
        let cap = inst.topo.leaf_capacity(LeafId(leaf));
        let base = leaf as usize * dims;
        let v: f64 = match self.st.objective {
            Objective::Pack => (0..dims)
                .map(|d| (cap[d] - self.st.load[base + d]).max(0) as f64 * self.norm[d])
                .sum(),
            Objective::Spread => (0..dims)
                .map(|d| self.st.load[base + d] as f64 * self.st.inv_cap[base + d])
                .sum(),
        };
        (v * SCALE) as u64
    }

    fn index_insert(&mut self, leaf: u32) {
        let k = self.measure(leaf);
        self.key[leaf as usize] = k;
        if self.st.objective == Objective::Pack && self.st.count[leaf as usize] == 0 {
            self.empty.insert((u64::MAX - k, leaf));
        } else {
            self.open.insert((k, leaf));
        }
    }

    fn index_remove(&mut self, leaf: u32) {
        let k = self.key[leaf as usize];
        if !self.open.remove(&(k, leaf)) {
            self.empty.remove(&(u64::MAX - k, leaf));
        }
    }

    fn place(&mut self, item: ItemId, leaf: u32) {
        self.index_remove(leaf);
        self.st.place(item, leaf);
        self.index_insert(leaf);
        let list = &mut self.on_leaf[leaf as usize];
        self.slot[item as usize] = list.len() as u32;
        list.push(item);
        self.refresh_free(leaf);
    }

    fn unplace(&mut self, item: ItemId) -> u32 {
        let leaf = self.st.at[item as usize];
        if leaf != NONE {
            self.index_remove(leaf);
            self.st.remove(item);
            self.index_insert(leaf);
            let list = &mut self.on_leaf[leaf as usize];
            let k = self.slot[item as usize] as usize;
            list.swap_remove(k);
            if let Some(&moved) = list.get(k) {
                self.slot[moved as usize] = k as u32;
            }
            self.refresh_free(leaf);
        }
        leaf
    }

    /// Updates the leaf's entry in the free-capacity index.
    fn refresh_free(&mut self, leaf: u32) {
        let d = self.st.inst.dims;
        let l = leaf as usize;
        let open = self.st.count.get(l).is_some_and(|&c| c > 0);
        let span = l * d..(l + 1) * d;
        let cap = self.share_cap.as_deref().unwrap_or(&self.st.cap);
        let cap_load = match (cap.get(span.clone()), self.st.load.get(span)) {
            (Some(c), Some(ld)) if open => Some((c, ld)),
            _ => None,
        };
        self.free.set(l, cap_load);
    }

    /// Items on the leaves, ascending.
    fn items_on(&self, leaves: &[u32]) -> Vec<ItemId> {
        let mut out: Vec<ItemId> = leaves
            .iter()
            .flat_map(|&l| self.on_leaf[l as usize].iter().copied())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    fn assignment(&self) -> Vec<Option<LeafId>> {
        self.st
            .at
            .iter()
            .map(|&l| (l != NONE).then_some(LeafId(l)))
            .collect()
    }

    /// Leaves a placed partner forces the item into (the smallest such set), if any.
    fn anchored(&self, item: ItemId) -> Option<Vec<u32>> {
        let inst = self.st.inst;
        let topo = &inst.topo;
        let mut best: Option<Vec<u32>> = None;
        let consider = |set: Vec<u32>, best: &mut Option<Vec<u32>>| {
            if best.as_ref().is_none_or(|b| set.len() < b.len()) {
                *best = Some(set);
            }
        };
        if let Some(f) = inst.items[item as usize].fixed {
            return Some(vec![f.0]);
        }
        for &r in &inst.item_rules[item as usize] {
            let rule = &inst.rules[r as usize];
            if !rule.hard {
                continue;
            }
            let partner = |a: ItemId, b: ItemId| {
                let o = if a == item { b } else { a };
                Some(self.st.at[o as usize]).filter(|&l| l != NONE)
            };
            match &rule.kind {
                RuleKind::MaxHops { a, b, hops } if *hops <= 4 => {
                    if let Some(pl) = partner(*a, *b) {
                        consider(
                            within_hops(topo, topo.leaf_network(LeafId(pl)), *hops),
                            &mut best,
                        );
                    }
                }
                RuleKind::Pair {
                    a,
                    b,
                    level,
                    same: true,
                } => {
                    if let Some(pl) = partner(*a, *b)
                        && let Some(v) = topo.ancestor_at_level(LeafId(pl), *level)
                    {
                        consider(topo.leaves_under(v).collect(), &mut best);
                    }
                }
                RuleKind::Together { level, parts } => {
                    let placed = parts
                        .iter()
                        .flatten()
                        .map(|&m| self.st.at[m as usize])
                        .find(|&l| l != NONE);
                    if let Some(pl) = placed
                        && let Some(v) = topo.ancestor_at_level(LeafId(pl), *level)
                    {
                        consider(topo.leaves_under(v).collect(), &mut best);
                    }
                }
                _ => {}
            }
        }
        best
    }

    /// Construction fit of an item on a leaf, lower is better: minus the scarcity-weighted
    /// dot product of its demand and the leaf's free capacity (both relative to the leaf's
    /// capacity), so items go where their large dimensions have room.
    fn fit(&self, item: ItemId, leaf: u32) -> f64 {
        let st = &self.st;
        let d = st.inst.dims;
        let base = leaf as usize * d;
        let dem = st.inst.demand(item);
        let mut dot = 0.0;
        for (k, &x) in dem.iter().enumerate().take(d) {
            let ic = st.inv_cap[base + k];
            let free = (st.cap[base + k] - st.load[base + k]) as f64 * ic;
            dot += self.wdim[k] * x as f64 * ic * free;
        }
        -dot
    }

    /// Leaves where a soft penalty of the item may vanish: the leaves of placed partners of
    /// its bandwidth, hop-count and soft collocation rules, and those within two network hops
    /// of them (same switch); at most [`NEAR`] leaves.
    fn near_partners(&self, item: ItemId) -> Vec<u32> {
        let inst = self.st.inst;
        let mut out: Vec<u32> = Vec::new();
        for &r in &inst.item_rules[item as usize] {
            let rule = &inst.rules[r as usize];
            let (a, b) = match rule.kind {
                RuleKind::Bandwidth { a, b, .. } => (a, b),
                RuleKind::MaxHops { a, b, .. }
                | RuleKind::Pair {
                    a, b, same: true, ..
                } if !rule.hard => (a, b),
                _ => continue,
            };
            let o = if a == item { b } else { a };
            let pl = self.st.at.get(o as usize).copied().unwrap_or(NONE);
            if o == item || pl == NONE || out.contains(&pl) {
                continue;
            }
            out.push(pl);
            let topo = &inst.topo;
            for l in within_hops(topo, topo.leaf_network(LeafId(pl)), 2) {
                if out.len() >= NEAR {
                    break;
                }
                if !out.contains(&l) {
                    out.push(l);
                }
            }
            if out.len() >= NEAR {
                break;
            }
        }
        out
    }

    /// The cheapest feasible leaf for the item, avoiding `forbid`.
    fn best_leaf(&self, item: ItemId, forbid: &[u32]) -> Option<u32> {
        self.best_leaf_in(item, forbid, true)
    }

    /// [`Search::best_leaf`]; `open_ok = false` skips the pack repair's open leaves (known
    /// not to fit).
    fn best_leaf_in(&self, item: ItemId, forbid: &[u32], open_ok: bool) -> Option<u32> {
        let st = &self.st;
        let mut best: Option<(f64, f64, u32)> = None;
        let consider = |leaf: u32, best: &mut Option<(f64, f64, u32)>| -> bool {
            if forbid.contains(&leaf) || !st.fits(item, leaf) {
                return false;
            }
            if let Some(share) = &self.share_cap {
                let d = st.inst.dims;
                let base = leaf as usize * d;
                let dem = st.inst.demand(item);
                if (0..d).any(|k| st.load[base + k] + dem[k] > share[base + k]) {
                    return false;
                }
            }
            if !st.feasible(item, leaf) {
                return false;
            }
            let c = st.delta(item, leaf).cost;
            let k = if self.building && st.objective == Objective::Pack {
                self.fit(item, leaf)
            } else {
                self.key[leaf as usize] as f64
            };
            if best.is_none_or(|(bc, bk, _)| c < bc - 1e-12 || (c <= bc + 1e-12 && k < bk)) {
                *best = Some((c, k, leaf));
            }
            true
        };
        if let Some(set) = self.anchored(item) {
            for &l in set.iter().take(1 << 14) {
                consider(l, &mut best);
            }
            return best.map(|b| b.2);
        }
        for l in self.near_partners(item) {
            consider(l, &mut best);
        }
        // An open leaf whose cost carries a penalty may lose to a fresh one.
        let penalised = |best: &Option<(f64, f64, u32)>| best.is_none_or(|b| b.0 > 1e-9);
        if self.building && st.objective == Objective::Pack {
            // Next fit over the open leaves from the last one used (the free index holds their
            // capacity share), best aligned of the first few; else the next empty leaf.
            let mut feasible = 0;
            let start = self.cursor as usize;
            self.free
                .for_each_fit(st.inst.demand(item), start, REPAIR_NODES, &mut |l| {
                    if consider(l as u32, &mut best) {
                        feasible += 1;
                    }
                    feasible >= BUILD_FEASIBLE
                });
            if penalised(&best) {
                for &(_, l) in &self.empty {
                    if consider(l, &mut best) {
                        break;
                    }
                }
            }
            if best.is_some() {
                return best.map(|b| b.2);
            }
        }
        if !self.building && st.objective == Objective::Pack {
            // Repair: open leaves that fit, from a seeded leaf on, tightest of the first few.
            let start = self
                .probe
                .wrapping_add(u64::from(item).wrapping_mul(0x9E37_79B9));
            let start = (start % st.count.len().max(1) as u64) as usize;
            let mut feasible = 0;
            let demand = if open_ok { st.inst.demand(item) } else { &[] };
            self.free
                .for_each_fit(demand, start, REPAIR_NODES, &mut |l| {
                    if consider(l as u32, &mut best) {
                        feasible += 1;
                    }
                    feasible >= REPAIR_FEASIBLE
                });
            if penalised(&best) {
                for &(_, l) in self.empty.iter().take(256) {
                    if consider(l, &mut best) {
                        break;
                    }
                }
            }
            return best.map(|b| b.2);
        }
        let size = self.size_key[item as usize].saturating_sub(self.st.inst.dims as u64 + 1);
        // Tight leaves often fail in one dimension: scan further before opening a new leaf.
        let (max_feasible, max_scan) = (4, if self.building { 1024 } else { usize::MAX });
        let (mut feasible, mut scanned) = (0, 0);
        let start = match st.objective {
            Objective::Pack => size,
            Objective::Spread => 0,
        };
        for &(_, l) in self.open.range((start, 0)..) {
            scanned += 1;
            if consider(l, &mut best) {
                feasible += 1;
            }
            if feasible >= max_feasible || scanned >= max_scan {
                break;
            }
        }
        let mut scanned = 0;
        for &(_, l) in &self.empty {
            scanned += 1;
            if consider(l, &mut best) || scanned >= 256 {
                break;
            }
        }
        if best.is_none() {
            // Last resort: every leaf (policies may rule out everything near the front).
            for l in 0..st.inst.topo.leaf_count() as u32 {
                consider(l, &mut best);
            }
        }
        best.map(|b| b.2)
    }

    /// Items in construction order: bundles of hard hop/collocation partners together,
    /// constrained bundles first, then by decreasing normalised size.
    fn order(&self) -> Vec<ItemId> {
        let inst = self.st.inst;
        let n = inst.items.len();
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn find(p: &mut [u32], mut x: u32) -> u32 {
            while p[x as usize] != x {
                p[x as usize] = p[p[x as usize] as usize];
                x = p[x as usize];
            }
            x
        }
        for rule in inst.rules.iter().filter(|r| r.hard) {
            let ends: Vec<(ItemId, ItemId)> = match &rule.kind {
                RuleKind::MaxHops { a, b, .. }
                | RuleKind::Pair {
                    a, b, same: true, ..
                } => vec![(*a, *b)],
                RuleKind::Together { parts, .. } => {
                    let all: Vec<ItemId> = parts.iter().flatten().copied().collect();
                    all.windows(2).map(|w| (w[0], w[1])).collect()
                }
                _ => Vec::new(),
            };
            for (a, b) in ends {
                let (x, y) = (find(&mut parent, a), find(&mut parent, b));
                if x != y {
                    parent[x as usize] = y;
                }
            }
        }
        let mut root = vec![0u32; n];
        let mut bundle_size = vec![0u64; n];
        let mut bundle_hard = vec![false; n];
        for i in 0..n as u32 {
            let r = find(&mut parent, i);
            root[i as usize] = r;
            bundle_size[r as usize] += self.size_key[i as usize];
            let hard = inst.items[i as usize].fixed.is_some()
                || inst.item_rules[i as usize]
                    .iter()
                    .any(|&r| inst.rules[r as usize].hard);
            bundle_hard[r as usize] |= hard;
        }
        let mut items: Vec<ItemId> = (0..n as u32).collect();
        items.sort_by(|&a, &b| {
            let (ra, rb) = (root[a as usize] as usize, root[b as usize] as usize);
            let fa = inst.items[a as usize].fixed.is_none();
            let fb = inst.items[b as usize].fixed.is_none();
            (
                !bundle_hard[ra],
                std::cmp::Reverse(bundle_size[ra]),
                ra,
                fa,
                std::cmp::Reverse(self.size_key[a as usize]),
                a,
            )
                .cmp(&(
                    !bundle_hard[rb],
                    std::cmp::Reverse(bundle_size[rb]),
                    rb,
                    fb,
                    std::cmp::Reverse(self.size_key[b as usize]),
                    b,
                ))
        });
        items
    }

    /// Bin-centric construction of policy-free items: leaves are filled one at a time
    /// (those already open first, then empty ones, largest first), each time with the item
    /// closest to the leaf's free capacity in scarcity-weighted squared distance.
    fn fill_bins(&mut self, items: Vec<ItemId>) {
        let inst = self.st.inst;
        let mut pool = Pool::new(inst.dims, &items, |i| inst.demand(i));
        let mut leaves: Vec<u32> = (0..inst.topo.leaf_count() as u32)
            .filter(|&l| self.st.count[l as usize] > 0)
            .collect();
        leaves.extend(self.empty.iter().map(|&(_, l)| l));
        self.fill_from(&mut pool, &leaves);
        self.unplaced.extend(pool.drain());
    }

    /// Greedy construction. Spread: every item on its cheapest leaf in [`Search::order`].
    /// Pack: policy-bound items first (next fit within a share of each leaf's capacity, so
    /// they spread), then the policy-free items bin-centrically ([`Search::fill_bins`]).
    fn construct(&mut self) {
        let inst = self.st.inst;
        let pack = self.st.objective == Objective::Pack;
        let (free, bound): (Vec<ItemId>, Vec<ItemId>) = if pack {
            self.order().into_iter().partition(|&i| self.policy_free(i))
        } else {
            (Vec::new(), self.order())
        };
        self.building = true;
        if pack && !free.is_empty() {
            self.share_cap = Some(self.capacity_share(&bound));
        }
        for item in bound {
            let mut choice = self.best_leaf(item, &[]);
            if choice.is_none() && self.share_cap.is_some() {
                let share = self.share_cap.take();
                choice = self.best_leaf(item, &[]);
                self.share_cap = share;
            }
            match choice {
                Some(l) => {
                    self.place(item, l);
                    self.cursor = l;
                }
                None => self.unplaced.push(item),
            }
        }
        if self.share_cap.take().is_some() {
            for l in 0..inst.topo.leaf_count() as u32 {
                self.refresh_free(l);
            }
        }
        self.fill_bins(free);
        self.building = false;
    }

    /// Per leaf and dimension, the capacity policy-bound items may use during construction:
    /// [`SHARE_SLACK`] times their share of the total demand (in the dimension where it is
    /// largest), at most all of it.
    fn capacity_share(&self, bound: &[ItemId]) -> Vec<i64> {
        let inst = self.st.inst;
        let d = inst.dims;
        let mut share = 0.0f64;
        for k in 0..d {
            let total: i64 = inst.items.iter().map(|it| it.demand[k]).sum();
            let part: i64 = bound.iter().map(|&i| inst.demand(i)[k]).sum();
            if total > 0 {
                share = share.max(part as f64 / total as f64);
            }
        }
        let theta = (SHARE_SLACK * share).min(1.0);
        self.st
            .cap
            .iter()
            .map(|&c| (theta * c as f64).floor() as i64)
            .collect()
    }

    fn expired(opts: &Options, it: u64) -> bool {
        opts.max_iterations.is_some_and(|m| it >= m)
            || opts.deadline.as_ref().is_some_and(|d| d.expired())
    }

    /// Large-neighbourhood search: accept a repaired neighbourhood when it places no fewer
    /// items and costs no more.
    fn improve(&mut self, opts: &Options, stats: &mut Stats) {
        let inst = self.st.inst;
        if inst.items.is_empty() || inst.topo.leaf_count() == 0 {
            return;
        }
        let mut it = 0u64;
        while !Self::expired(opts, it) {
            it += 1;
            let before = (self.unplaced.len(), self.st.cost());
            let op = self.rng.below(100);
            self.probe = self.rng.next();
            let (removed, forbid) = if self.st.objective == Objective::Pack && op < 55 {
                self.destroy_emptiest()
            } else if op < 85 || self.st.objective == Objective::Spread {
                (self.destroy_random(), Vec::new())
            } else {
                match self.exact_neighbourhood(opts, stats) {
                    Some(true) => {
                        stats.improvements += 1;
                        continue;
                    }
                    _ => continue,
                }
            };
            if removed.is_empty() && self.unplaced.is_empty() {
                continue;
            }
            let old: Vec<(ItemId, u32)> = removed.iter().map(|&(i, l)| (i, l)).collect();
            let mut todo: Vec<ItemId> = removed.iter().map(|&(i, _)| i).collect();
            let prev_unplaced = std::mem::take(&mut self.unplaced);
            todo.extend(&prev_unplaced);
            todo.sort_by_key(|&i| std::cmp::Reverse(self.size_key[i as usize]));
            let mut placed_now = Vec::new();
            let mut failed = Vec::new();
            // Pack: policy-free items the free index found no open leaf for. Repair only adds
            // load, so a demand dominating one of theirs is not searched for again.
            let mut no_fit: Vec<ItemId> = Vec::new();
            let pack = self.st.objective == Objective::Pack;
            for i in todo {
                let dem = inst.demand(i);
                let open_ok = !(pack
                    && no_fit
                        .iter()
                        .any(|&f| inst.demand(f).iter().zip(dem).all(|(a, b)| b >= a)));
                let choice = self
                    .best_leaf_in(i, &forbid, open_ok)
                    .or_else(|| self.best_leaf_in(i, &[], open_ok));
                match choice {
                    Some(l) => {
                        let it = &inst.items[i as usize];
                        if pack
                            && open_ok
                            && self.st.count[l as usize] == 0
                            && inst.item_rules[i as usize].is_empty()
                            && it.fixed.is_none()
                            && it.licenses.is_empty()
                        {
                            no_fit.push(i);
                        }
                        self.place(i, l);
                        placed_now.push(i);
                    }
                    None => failed.push(i),
                }
            }
            let after = (failed.len(), self.st.cost());
            let better = after.0 < before.0 || (after.0 == before.0 && after.1 <= before.1 + 1e-9);
            if better && self.st.hard <= 1e-9 {
                if after.1 < before.1 - 1e-9 || after.0 < before.0 {
                    stats.improvements += 1;
                }
                self.unplaced = failed;
            } else {
                for i in placed_now {
                    self.unplace(i);
                }
                for (i, l) in old {
                    self.place(i, l);
                }
                self.unplaced = prev_unplaced;
            }
        }
        stats.iterations = it;
    }

    /// Whether the item is free of policies (the bin-centric fill may place it anywhere).
    fn policy_free(&self, i: ItemId) -> bool {
        let inst = self.st.inst;
        let it = &inst.items[i as usize];
        inst.item_rules[i as usize].is_empty()
            && it.fixed.is_none()
            && it.licenses.is_empty()
            && it.movable
    }

    /// Fills the leaves one at a time, in order, from the pool (see [`Search::fill_bins`]).
    fn fill_from(&mut self, pool: &mut Pool, leaves: &[u32]) {
        let d = self.st.inst.dims;
        let mut free = vec![0i64; d];
        for &leaf in leaves {
            if pool.len() == 0 {
                break;
            }
            let base = leaf as usize * d;
            loop {
                for (k, f) in free.iter_mut().enumerate() {
                    *f = self.st.cap[base + k] - self.st.load[base + k];
                }
                let scale = &self.st.inv_cap[base..base + d];
                let Some(t) = pool.best(&free, scale, &self.wdim, POOL_BUDGET) else {
                    break;
                };
                let Some(i) = pool.take(t) else { break };
                self.place(i, leaf);
            }
        }
    }

    /// Removes every movable item of one of the emptiest open leaves (and sometimes of a
    /// second random open leaf); the emptied leaves are avoided by the repair.
    fn destroy_emptiest(&mut self) -> (Vec<(ItemId, u32)>, Vec<u32>) {
        let k = self.open.len().min(8);
        if k == 0 {
            return (Vec::new(), Vec::new());
        }
        let pick = self.rng.below(k);
        let Some(&(_, leaf)) = self.open.iter().rev().nth(pick) else {
            return (Vec::new(), Vec::new());
        };
        let mut leaves = vec![leaf];
        if self.rng.below(2) == 0 && self.open.len() > 1 {
            let j = self.rng.below(self.open.len().min(64));
            if let Some(&(_, other)) = self.open.iter().rev().nth(j)
                && other != leaf
            {
                leaves.push(other);
            }
        }
        let mut removed = Vec::new();
        for &l in &leaves {
            let on = self.items_on(&[l]);
            removed.extend(self.take(&on));
        }
        (removed, vec![leaf])
    }

    fn take(&mut self, items: &[ItemId]) -> Vec<(ItemId, u32)> {
        let mut out = Vec::new();
        for &i in items {
            let it = &self.st.inst.items[i as usize];
            if !it.movable || it.fixed.is_some() {
                continue;
            }
            let l = self.unplace(i);
            if l != NONE {
                out.push((i, l));
            }
        }
        out
    }

    /// Removes a few random items and, with them, the items of one of their rules.
    fn destroy_random(&mut self) -> Vec<(ItemId, u32)> {
        let inst = self.st.inst;
        let n = inst.items.len();
        let count = 2 + self.rng.below(6);
        let mut picked: Vec<ItemId> = Vec::new();
        for _ in 0..count {
            picked.push(self.rng.below(n) as ItemId);
        }
        if let Some(&first) = picked.first() {
            let rules = &inst.item_rules[first as usize];
            if !rules.is_empty() {
                let r = rules[self.rng.below(rules.len())];
                let members: Vec<ItemId> = match &inst.rules[r as usize].kind {
                    RuleKind::Spread { parts, .. } | RuleKind::Together { parts, .. } => {
                        parts.iter().flatten().copied().take(12).collect()
                    }
                    RuleKind::Llmn { members, .. } => members.iter().copied().take(12).collect(),
                    RuleKind::Pair { a, b, .. }
                    | RuleKind::MaxHops { a, b, .. }
                    | RuleKind::Bandwidth { a, b, .. } => vec![*a, *b],
                    RuleKind::VolExclusive { item } => vec![*item],
                };
                picked.extend(members);
            }
        }
        picked.sort_unstable();
        picked.dedup();
        self.take(&picked)
    }

    /// Exact repair: take the items of a few lightly loaded leaves and re-solve them over
    /// those leaves plus a few with room, through `berth-solver`. `Some(true)` = improved.
    fn exact_neighbourhood(&mut self, opts: &Options, stats: &mut Stats) -> Option<bool> {
        let inst = self.st.inst;
        let k = 2 + self.rng.below(2);
        let light: Vec<u32> = self
            .open
            .iter()
            .rev()
            .take(k + self.rng.below(4))
            .map(|&(_, l)| l)
            .collect();
        let mut leaves: Vec<u32> = light
            .iter()
            .copied()
            .skip(self.rng.below(2))
            .take(k)
            .collect();
        let roomy: Vec<u32> = self
            .open
            .iter()
            .rev()
            .skip(8)
            .take(2)
            .map(|&(_, l)| l)
            .collect();
        leaves.extend(roomy);
        leaves.sort_unstable();
        leaves.dedup();
        let items = self.items_on(&leaves);
        if items.is_empty()
            || items.len() > 10
            || items
                .iter()
                .any(|&i| !inst.items[i as usize].movable || inst.items[i as usize].fixed.is_some())
        {
            return None;
        }
        let before = self.st.cost();
        let old: Vec<(ItemId, u32)> = items.iter().map(|&i| (i, self.st.at[i as usize])).collect();
        for &i in &items {
            self.unplace(i);
        }
        let fixed = self.assignment();
        let cands: Vec<Vec<u32>> = items
            .iter()
            .map(|&i| {
                leaves
                    .iter()
                    .copied()
                    .filter(|&l| self.st.feasible(i, l))
                    .collect()
            })
            .collect();
        let mut improved = false;
        if cands.iter().all(|c| !c.is_empty()) {
            let scope = Scope {
                items: items.clone(),
                cands: cands.clone(),
                fixed: &fixed,
            };
            let p = encode(inst, &scope, self.st.objective, self.st.w);
            let so = SolveOptions {
                node_limit: Some(20_000),
                explain_checks: 0,
                ..SolveOptions::default()
            };
            stats.exact_repairs += 1;
            if let Ok(Outcome::Solved {
                solutions,
                stats: st,
                ..
            }) = p.solve(&so)
            {
                stats.exact_nodes += st.nodes;
                if let Some(sol) = solutions.first() {
                    for (k, &i) in items.iter().enumerate() {
                        if let Some(&l) = sol.values.get(k).and_then(|v| cands[k].get(v.index())) {
                            self.place(i, l);
                        }
                    }
                    let complete = items.iter().all(|&i| self.st.at[i as usize] != NONE);
                    improved = complete && self.st.hard <= 1e-9 && self.st.cost() < before - 1e-9;
                    if !improved {
                        for &i in &items {
                            self.unplace(i);
                        }
                    }
                }
            }
        }
        if !improved {
            for (i, l) in old {
                self.place(i, l);
            }
        }
        let _ = opts;
        Some(improved)
    }
}

/// Leaves within `hops` network edges of a vertex (breadth-first over the tree).
fn within_hops(topo: &berth_topology::Topology, from: NetVertexId, hops: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut frontier = vec![(from, None::<NetVertexId>, 0u32)];
    while let Some((v, came, d)) = frontier.pop() {
        if let Some(l) = topo.net_leaf(v) {
            out.push(l.0);
        }
        if d == hops {
            continue;
        }
        if let Some(p) = topo.net_parent(v)
            && Some(p) != came
        {
            frontier.push((p, Some(v), d + 1));
        }
        for c in topo.net_children(v) {
            if Some(c) != came {
                frontier.push((c, Some(v), d + 1));
            }
        }
    }
    out.sort_unstable();
    out
}
