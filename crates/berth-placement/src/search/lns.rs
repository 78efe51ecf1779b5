//! Large-neighbourhood search: destroy (emptiest leaves, random items) and repair, anytime.

use std::sync::Arc;

use berth_solver::Progress;

use crate::instance::{ItemId, RuleKind};
use crate::pool::Pool;
use crate::state::{NONE, Objective};

use super::construct::POOL_BUDGET;
use super::placed::Search;
use super::{Options, Stats};

impl<'i> Search<'i> {
    /// Tells `progress` the current cost and, when packing, the weighted host bound.
    pub(super) fn report(&self, progress: &Option<Arc<dyn Progress>>, hosts_bound: Option<usize>) {
        if let Some(p) = progress {
            let bound = hosts_bound
                .filter(|_| self.st.objective == Objective::Pack)
                .map(|b| self.st.w.objective * b as f64);
            p.improved(self.st.cost(), bound);
        }
    }

    pub(super) fn expired(opts: &Options, it: u64) -> bool {
        opts.max_iterations.is_some_and(|m| it >= m)
            || opts.deadline.as_ref().is_some_and(|d| d.expired())
    }

    /// Large-neighbourhood search: accept a repaired neighbourhood when it places no fewer
    /// items and costs no more.
    pub(super) fn improve(&mut self, opts: &Options, stats: &mut Stats) {
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
                        self.report(&opts.progress, stats.lower_bound);
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
                    self.report(&opts.progress, stats.lower_bound);
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
    pub(super) fn policy_free(&self, i: ItemId) -> bool {
        let inst = self.st.inst;
        let it = &inst.items[i as usize];
        inst.item_rules[i as usize].is_empty()
            && it.fixed.is_none()
            && it.licenses.is_empty()
            && it.movable
    }

    /// Fills the leaves one at a time, in order, from the pool (see [`Search::fill_bins`]).
    pub(super) fn fill_from(&mut self, pool: &mut Pool, leaves: &[u32]) {
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
    pub(super) fn destroy_emptiest(&mut self) -> (Vec<(ItemId, u32)>, Vec<u32>) {
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

    pub(super) fn take(&mut self, items: &[ItemId]) -> Vec<(ItemId, u32)> {
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
    pub(super) fn destroy_random(&mut self) -> Vec<(ItemId, u32)> {
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
}
