//! Greedy construction: policy-bound items spread within a capacity share, then a bin-centric fill.

use crate::instance::{ItemId, RuleKind};
use crate::pool::Pool;
use crate::state::Objective;

use super::placed::Search;

/// Policy-bound items may use this multiple of their share of the total demand (in the
/// dimension where it is largest) on each leaf during construction.
const SHARE_SLACK: f64 = 1.5;
/// Tree buckets the bin-centric construction examines per choice once it has a candidate:
/// near-best choices in bounded time (measured to pack as tightly as the exact choice).
pub(super) const POOL_BUDGET: usize = 8;

impl<'i> Search<'i> {
    /// Items in construction order: bundles of hard hop/collocation partners together,
    /// constrained bundles first, then by decreasing normalised size.
    pub(super) fn order(&self) -> Vec<ItemId> {
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
    pub(super) fn fill_bins(&mut self, items: Vec<ItemId>) {
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
    pub(super) fn construct(&mut self) {
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
    pub(super) fn capacity_share(&self, bound: &[ItemId]) -> Vec<i64> {
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
}
