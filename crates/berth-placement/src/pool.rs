//! The pool of policy-free items for the bin-centric construction: items grouped by demand
//! vector under a k-d tree, so the remaining item that best fills a leaf's free capacity is
//! found by branch and bound instead of a scan of every demand vector.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap};

use crate::instance::ItemId;

const NONE: u32 = u32::MAX;
/// Demand vectors per tree leaf.
const BUCKET: usize = 8;

/// A bound ordered by `f64::total_cmp`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Key(f64);

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[derive(Clone, Copy, Debug)]
struct Node {
    /// Children (`NONE` for a bucket).
    left: u32,
    right: u32,
    /// Bucket: the range of `order` it holds.
    start: u32,
    end: u32,
    parent: u32,
}

/// Items grouped by demand vector ("types"), with per-type stacks and a k-d tree over the
/// vectors whose nodes know their bounding box and how many items remain below them.
#[derive(Clone, Debug)]
pub(crate) struct Pool {
    dims: usize,
    /// Demand vector of each type, flat (`t * dims..`), types in ascending vector order.
    dem: Vec<i64>,
    /// Remaining items of each type, taken from the back.
    items: Vec<Vec<ItemId>>,
    nodes: Vec<Node>,
    /// Bounding box of each node, flat (`node * dims..`).
    lo: Vec<i64>,
    hi: Vec<i64>,
    /// Items remaining under each node.
    count: Vec<u32>,
    /// Types in tree order (buckets are ranges of it).
    order: Vec<u32>,
    /// Bucket node of each type.
    bucket: Vec<u32>,
    /// Scratch queue of the search.
    heap: BinaryHeap<(Key, Reverse<u32>)>,
}

impl Pool {
    /// Groups `items` (in the order they should be taken within a type) by `demand`; items
    /// whose vector is not `dims` long are left out.
    pub(crate) fn new<'d>(
        dims: usize,
        items: &[ItemId],
        demand: impl Fn(ItemId) -> &'d [i64],
    ) -> Pool {
        let mut by: BTreeMap<&[i64], Vec<ItemId>> = BTreeMap::new();
        for &i in items.iter().rev() {
            let d = demand(i);
            if d.len() == dims {
                by.entry(d).or_default().push(i);
            }
        }
        let mut dem = Vec::with_capacity(by.len() * dims);
        let mut stacks = Vec::with_capacity(by.len());
        for (d, list) in by {
            dem.extend_from_slice(d);
            stacks.push(list);
        }
        let types = stacks.len();
        let mut p = Pool {
            dims,
            dem,
            items: stacks,
            nodes: Vec::new(),
            lo: Vec::new(),
            hi: Vec::new(),
            count: Vec::new(),
            order: (0..types as u32).collect(),
            bucket: vec![NONE; types],
            heap: BinaryHeap::new(),
        };
        if types > 0 {
            p.build(0, types, NONE);
        }
        p
    }

    /// Builds the subtree over `order[start..end]`; returns its node.
    fn build(&mut self, start: usize, end: usize, parent: u32) -> u32 {
        let d = self.dims;
        let id = self.nodes.len() as u32;
        let mut lo = vec![i64::MAX; d];
        let mut hi = vec![i64::MIN; d];
        let mut count = 0u32;
        for &t in &self.order[start..end] {
            let v = &self.dem[t as usize * d..(t as usize + 1) * d];
            for k in 0..d {
                lo[k] = lo[k].min(v[k]);
                hi[k] = hi[k].max(v[k]);
            }
            count += self.items[t as usize].len() as u32;
        }
        self.nodes.push(Node {
            left: NONE,
            right: NONE,
            start: start as u32,
            end: end as u32,
            parent,
        });
        self.lo.extend_from_slice(&lo);
        self.hi.extend_from_slice(&hi);
        self.count.push(count);
        if end - start <= BUCKET {
            for &t in &self.order[start..end] {
                self.bucket[t as usize] = id;
            }
            return id;
        }
        // Split at the median of the widest dimension (ties by type: deterministic).
        let k = (0..d).max_by_key(|&k| (hi[k] - lo[k], d - k)).unwrap_or(0);
        let dem = &self.dem;
        self.order[start..end].sort_unstable_by_key(|&t| (dem[t as usize * d + k], t));
        let mid = start + (end - start) / 2;
        let left = self.build(start, mid, id);
        let right = self.build(mid, end, id);
        let n = &mut self.nodes[id as usize];
        n.left = left;
        n.right = right;
        id
    }

    /// Items left.
    pub(crate) fn len(&self) -> usize {
        self.count.first().copied().unwrap_or(0) as usize
    }

    /// The type whose vector `u` fits `free` and maximises
    /// `sum_k w[k] * (2 r_k u_k - u_k^2)` with `u_k = u[k] * scale[k]`, `r_k = free[k] *
    /// scale[k]`: the closest to the free capacity in weighted squared distance, among those
    /// that fit; `None` when none fits. Best first over the tree; once a candidate is found,
    /// at most `budget` buckets are examined (`usize::MAX`: exact, ties to the lower type).
    pub(crate) fn best(
        &mut self,
        free: &[i64],
        scale: &[f64],
        w: &[f64],
        budget: usize,
    ) -> Option<u32> {
        let d = self.dims;
        if self.len() == 0 || free.len() != d || scale.len() != d || w.len() != d {
            return None;
        }
        let gain = |k: usize, x: i64| {
            let u = x as f64 * scale[k];
            let r = free[k] as f64 * scale[k];
            w[k] * (2.0 * r * u - u * u)
        };
        // Upper bound over a node: each term grows with u_k up to r_k.
        let bound = |n: usize| -> Option<f64> {
            let mut b = 0.0;
            for (k, &f) in free.iter().enumerate() {
                if self.lo[n * d + k] > f {
                    return None;
                }
                b += gain(k, self.hi[n * d + k].min(f));
            }
            Some(b)
        };
        let mut best: Option<(f64, u32)> = None;
        let mut heap = std::mem::take(&mut self.heap);
        heap.clear();
        if let Some(b) = bound(0) {
            heap.push((Key(b), Reverse(0)));
        }
        let mut buckets = 0usize;
        while let Some((Key(b), Reverse(n))) = heap.pop() {
            if best.is_some_and(|(s, _)| b < s) || (best.is_some() && buckets >= budget) {
                break;
            }
            let node = self.nodes[n as usize];
            if node.left == NONE {
                buckets += 1;
                for &t in &self.order[node.start as usize..node.end as usize] {
                    if self.items[t as usize].is_empty() {
                        continue;
                    }
                    let v = &self.dem[t as usize * d..(t as usize + 1) * d];
                    if v.iter().zip(free).any(|(x, f)| x > f) {
                        continue;
                    }
                    let s: f64 = (0..d).map(|k| gain(k, v[k])).sum();
                    if best.is_none_or(|(bs, bt)| s > bs || (s == bs && t < bt)) {
                        best = Some((s, t));
                    }
                }
                continue;
            }
            for c in [node.left, node.right] {
                if self.count[c as usize] > 0
                    && let Some(b) = bound(c as usize)
                    && best.is_none_or(|(s, _)| b >= s)
                {
                    heap.push((Key(b), Reverse(c)));
                }
            }
        }
        self.heap = heap;
        best.map(|(_, t)| t)
    }

    /// The demand vector of a type.
    #[cfg(test)]
    pub(crate) fn demand(&self, t: u32) -> &[i64] {
        let d = self.dims;
        self.dem
            .get(t as usize * d..(t as usize + 1) * d)
            .unwrap_or(&[])
    }

    /// Takes the next item of a type.
    pub(crate) fn take(&mut self, t: u32) -> Option<ItemId> {
        let item = self.items.get_mut(t as usize)?.pop()?;
        let mut n = self.bucket[t as usize];
        while n != NONE {
            self.count[n as usize] -= 1;
            n = self.nodes[n as usize].parent;
        }
        Some(item)
    }

    /// Every item left, type by type.
    pub(crate) fn drain(&mut self) -> Vec<ItemId> {
        let out: Vec<ItemId> = self
            .items
            .iter_mut()
            .flat_map(|l| std::mem::take(l).into_iter().rev())
            .collect();
        self.count.iter_mut().for_each(|c| *c = 0);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Pool;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn best_equals_a_scan_of_every_item(
            demands in proptest::collection::vec(proptest::collection::vec(0i64..6, 3), 0..200),
            queries in proptest::collection::vec((proptest::collection::vec(0i64..12, 3), any::<bool>()), 1..30),
            budget in 1usize..4,
        ) {
            let w = [0.9, 0.5, 0.2];
            let scale = [1.0 / 12.0, 1.0 / 8.0, 1.0 / 10.0];
            let items: Vec<u32> = (0..demands.len() as u32).collect();
            let mut pool = Pool::new(3, &items, |i| demands[i as usize].as_slice());
            let mut left: Vec<u32> = items.clone();
            for (free, take) in queries {
                let gain = |v: &[i64]| -> f64 {
                    (0..3).map(|k| {
                        let (u, r) = (v[k] as f64 * scale[k], free[k] as f64 * scale[k]);
                        w[k] * (2.0 * r * u - u * u)
                    }).sum()
                };
                let fits = |v: &[i64]| v.iter().zip(&free).all(|(x, f)| x <= f);
                let scan = left
                    .iter()
                    .filter(|&&i| fits(&demands[i as usize]))
                    .map(|&i| gain(&demands[i as usize]))
                    .fold(None, |b: Option<f64>, s| Some(b.map_or(s, |b| b.max(s))));
                // Exact without a budget; with one, some remaining item that fits.
                let exact = pool.best(&free, &scale, &w, usize::MAX);
                let near = pool.best(&free, &scale, &w, budget);
                match (scan, exact, near) {
                    (None, None, None) => {}
                    (Some(s), Some(t), Some(n)) => {
                        prop_assert!((gain(pool.demand(t)) - s).abs() < 1e-12);
                        prop_assert!(fits(pool.demand(t)) && fits(pool.demand(n)));
                        prop_assert!(gain(pool.demand(n)) <= s + 1e-12);
                        if take {
                            let i = pool.take(n).unwrap();
                            prop_assert_eq!(demands[i as usize].as_slice(), pool.demand(n));
                            prop_assert!(left.contains(&i));
                            left.retain(|&x| x != i);
                        }
                    }
                    (s, e, n) => prop_assert!(false, "scan {:?} vs pool {:?} / {:?}", s, e, n),
                }
                prop_assert_eq!(pool.len(), left.len());
            }
            let mut rest = pool.drain();
            rest.sort_unstable();
            prop_assert_eq!(rest, left);
            prop_assert_eq!(pool.len(), 0);
        }
    }
}
