//! Exact repair of a small neighbourhood through `berth-solver`.

use berth_solver::{Outcome, SolveOptions};

use crate::exact::{Scope, encode};
use crate::instance::ItemId;
use crate::state::NONE;

use super::placed::Search;
use super::{Options, Stats};

impl<'i> Search<'i> {
    /// Exact repair: take the items of a few lightly loaded leaves and re-solve them over
    /// those leaves plus a few with room, through `berth-solver`. `Some(true)` = improved.
    pub(super) fn exact_neighbourhood(
        &mut self,
        opts: &Options,
        stats: &mut Stats,
    ) -> Option<bool> {
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
