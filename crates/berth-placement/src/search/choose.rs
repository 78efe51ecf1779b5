//! Choosing a leaf for one item: anchors of its rules, fit, partners nearby, the best leaf.

use berth_topology::{LeafId, NetVertexId};

use crate::instance::{ItemId, RuleKind};
use crate::state::{NONE, Objective};

use super::placed::Search;

/// Free-index nodes one pack repair step examines before it gives up on open leaves.
const REPAIR_NODES: usize = 2048;
/// Feasible open leaves a pack repair compares (the tightest wins).
const REPAIR_FEASIBLE: usize = 8;
/// Feasible open leaves a construction step of a policy-bound item compares.
const BUILD_FEASIBLE: usize = 4;

/// Leaves near placed partners a placement step also tries.
const NEAR: usize = 64;

impl<'i> Search<'i> {
    /// Leaves a placed partner forces the item into (the smallest such set), if any.
    pub(super) fn anchored(&self, item: ItemId) -> Option<Vec<u32>> {
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
                    if let Some(pl) = partner(*a, *b) {
                        let v = topo.vertex_at_level(LeafId(pl), *level);
                        consider(topo.leaves_under(v).collect(), &mut best);
                    }
                }
                RuleKind::Together { level, parts } => {
                    let placed = parts
                        .iter()
                        .flatten()
                        .map(|&m| self.st.at[m as usize])
                        .find(|&l| l != NONE);
                    if let Some(pl) = placed {
                        let v = topo.vertex_at_level(LeafId(pl), *level);
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
    pub(super) fn fit(&self, item: ItemId, leaf: u32) -> f64 {
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
    pub(super) fn near_partners(&self, item: ItemId) -> Vec<u32> {
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
    pub(super) fn best_leaf(&self, item: ItemId, forbid: &[u32]) -> Option<u32> {
        self.best_leaf_in(item, forbid, true)
    }

    /// [`Search::best_leaf`]; `open_ok = false` skips the pack repair's open leaves (known
    /// not to fit).
    pub(super) fn best_leaf_in(&self, item: ItemId, forbid: &[u32], open_ok: bool) -> Option<u32> {
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
