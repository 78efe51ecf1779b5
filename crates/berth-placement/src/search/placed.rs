//! The search state: placements, the leaf indexes kept in step with them, the assignment.

use std::collections::BTreeSet;

use berth_topology::LeafId;

use crate::freetree::FreeTree;
use crate::instance::{Instance, ItemId};
use crate::state::{NONE, Objective, State, Weights};

use super::rng::Rng;

pub(super) const SCALE: f64 = 1e6;

pub(super) struct Search<'i> {
    pub(super) st: State<'i>,
    /// Per-dimension normaliser: 1 / largest capacity.
    pub(super) norm: Vec<f64>,
    /// Per-dimension scarcity: total demand over total capacity.
    pub(super) wdim: Vec<f64>,
    pub(super) size_key: Vec<u64>,
    /// Pack: open leaves by residual measure. Spread: every leaf by utilisation.
    pub(super) open: BTreeSet<(u64, u32)>,
    /// Pack: empty leaves, largest capacity first.
    pub(super) empty: BTreeSet<(u64, u32)>,
    pub(super) key: Vec<u64>,
    pub(super) unplaced: Vec<ItemId>,
    pub(super) rng: Rng,
    pub(super) building: bool,
    /// Items on each leaf (unordered), so a neighbourhood costs O(its leaves), not O(items).
    pub(super) on_leaf: Vec<Vec<ItemId>>,
    /// Index of each placed item in its leaf's list.
    pub(super) slot: Vec<u32>,
    /// Free capacity of the open leaves, for the pack repair.
    pub(super) free: FreeTree,
    /// Where the current neighbourhood's repair starts scanning leaves (seeded).
    pub(super) probe: u64,
    /// Construction of policy-bound items: the share of each leaf's capacity they may use
    /// (`None` = all of it), so they spread and leave room for the bin-centric fill.
    pub(super) share_cap: Option<Vec<i64>>,
    /// Construction: the leaf of the last placement, where the next search starts.
    pub(super) cursor: u32,
}

impl<'i> Search<'i> {
    pub(super) fn new(inst: &'i Instance, objective: Objective, w: Weights, seed: u64) -> Self {
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

    pub(super) fn measure(&self, leaf: u32) -> u64 {
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

    pub(super) fn index_insert(&mut self, leaf: u32) {
        let k = self.measure(leaf);
        self.key[leaf as usize] = k;
        if self.st.objective == Objective::Pack && self.st.count[leaf as usize] == 0 {
            self.empty.insert((u64::MAX - k, leaf));
        } else {
            self.open.insert((k, leaf));
        }
    }

    pub(super) fn index_remove(&mut self, leaf: u32) {
        let k = self.key[leaf as usize];
        if !self.open.remove(&(k, leaf)) {
            self.empty.remove(&(u64::MAX - k, leaf));
        }
    }

    pub(super) fn place(&mut self, item: ItemId, leaf: u32) {
        self.index_remove(leaf);
        self.st.place(item, leaf);
        self.index_insert(leaf);
        let list = &mut self.on_leaf[leaf as usize];
        self.slot[item as usize] = list.len() as u32;
        list.push(item);
        self.refresh_free(leaf);
    }

    pub(super) fn unplace(&mut self, item: ItemId) -> u32 {
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
    pub(super) fn refresh_free(&mut self, leaf: u32) {
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
    pub(super) fn items_on(&self, leaves: &[u32]) -> Vec<ItemId> {
        let mut out: Vec<ItemId> = leaves
            .iter()
            .flat_map(|&l| self.on_leaf[l as usize].iter().copied())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    pub(super) fn assignment(&self) -> Vec<Option<LeafId>> {
        self.st
            .at
            .iter()
            .map(|&l| (l != NONE).then_some(LeafId(l)))
            .collect()
    }
}
