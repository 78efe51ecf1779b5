//! Large-neighbourhood improvement: which variables to free around the incumbent.
//!
//! A round fixes every variable to its incumbent value except a neighbourhood and searches
//! the freed ones for a strictly better plan (run by `search/rounds.rs`). A
//! neighbourhood grows from a random variable through what binds it: the other variables of
//! its small constraints and objective terms (pairs, groups, anti-affinity), the variables
//! holding the same capacity holder, and those holding the holders of its cheapest values
//! (they must move for it to move there). One round in four instead frees variables drawn
//! at random: changes between unrelated demands, which the grown neighbourhoods never pair
//! (60×800 at 10 s, four seeds: 83 607 to 83 723 without, 83 585 to 83 593 with). With a
//! relaxation's adjusted costs ([`Neighbourhoods::guide`]) the cheapest values are its,
//! and half the grown rounds start where the incumbent departs from its optimum. Its size
//! adapts: a round that searched its whole neighbourhood without improving grows the next
//! one, a round cut by its node budget shrinks it, and a long run of rounds in vain deepens
//! their node budget. The random source is a seeded xorshift, so a fixed seed gives fixed rounds.

use crate::expr::Compiled;
use crate::{ConstraintId, Keys, NO_KEY, Problem, Value};

/// Constraints with more variables (a shared capacity) do not relate their variables.
const SMALL_SCOPE: usize = 16;
/// How many of a variable's cheapest values lead to the holders it would rather use.
const CHEAP_VALUES: usize = 3;
/// Rounds in vain per doubling of a round's node budget, and the most doublings.
const STALE_ROUNDS: u64 = 500;
const MOST_DOUBLINGS: u64 = 4;
/// Smallest and first neighbourhood size.
const MIN_SIZE: usize = 4;
const FIRST_SIZE: usize = 8;

/// Neighbourhood choice for one problem, with its random state and adaptive size.
pub(crate) struct Neighbourhoods {
    rng: u64,
    size: usize,
    /// Per variable: variables sharing a small constraint or an objective term.
    related: Vec<Vec<u32>>,
    /// Per variable: `(capacity, holder of each value)` of each capacity it is in.
    holders: Vec<Vec<(usize, Keys)>>,
    /// Per variable: its cheapest values (static objective order).
    cheap: Vec<Vec<u32>>,
    /// Variables worth freeing (more than one value at the root), and the same as a mask.
    movable: Vec<u32>,
    is_movable: Vec<bool>,
    /// Per variable: its value of least adjusted cost, when a relaxation guides.
    best: Vec<Option<u32>>,
    /// Rounds since the last improving one.
    stale: u64,
}

impl Neighbourhoods {
    /// `sizes`: each variable's root domain size.
    pub(crate) fn new(p: &Problem, obj: &Compiled, sizes: &[u32], seed: u64) -> Neighbourhoods {
        let n = p.var_count();
        let mut related: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut link = |scope: &[u32]| {
            if scope.len() > SMALL_SCOPE {
                return;
            }
            for &a in scope {
                for &b in scope {
                    if a != b && (a as usize) < n && (b as usize) < n {
                        related[a as usize].push(b);
                    }
                }
            }
        };
        for i in 0..p.constraint_count() as u32 {
            if let Some(k) = p.constraint(ConstraintId(i)) {
                let scope: Vec<u32> = k.scope().iter().map(|x| x.0).collect();
                link(&scope);
            }
        }
        if let Some(root) = obj.root_terms() {
            for &(_, node) in root {
                link(&obj.node_vars(node));
            }
        }
        for r in &mut related {
            r.sort_unstable();
            r.dedup();
        }
        let mut holders: Vec<Vec<(usize, Keys)>> = vec![Vec::new(); n];
        for (c, (_, data)) in p.capacities().iter().enumerate() {
            for (x, keys, _) in &data.vars {
                if let Some(h) = holders.get_mut(x.index()) {
                    h.push((c, keys.clone()));
                }
            }
        }
        let cheap = (0..n)
            .map(|x| match obj.keys.get(x).and_then(|k| k.order.clone()) {
                Some((o, rev)) => {
                    let it: Box<dyn Iterator<Item = &u32>> = if rev {
                        Box::new(o.iter().rev())
                    } else {
                        Box::new(o.iter())
                    };
                    it.take(CHEAP_VALUES).copied().collect()
                }
                None => Vec::new(),
            })
            .collect();
        let movable: Vec<u32> = (0..n as u32)
            .filter(|&x| sizes.get(x as usize).is_some_and(|&s| s > 1))
            .collect();
        let mut is_movable = vec![false; n];
        for &x in &movable {
            is_movable[x as usize] = true;
        }
        Neighbourhoods {
            is_movable,
            rng: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            size: FIRST_SIZE,
            related,
            holders,
            cheap,
            movable,
            best: vec![None; n],
            stale: 0,
        }
    }

    /// Guided by a relaxation (`order`: a variable's values by increasing adjusted cost):
    /// the cheapest values are those of least adjusted cost, and half the grown
    /// neighbourhoods start from a variable whose incumbent value is not its least
    /// (100×1000 at 20 s, three seeds: 91 031, 135 757 and 64 837 with, 91 222, 136 007 and
    /// 64 611 without).
    pub(crate) fn guide<'a>(&mut self, order: impl Fn(u32) -> Option<&'a [u32]>) {
        for (x, (cheap, best)) in self.cheap.iter_mut().zip(&mut self.best).enumerate() {
            if let Some(o) = order(x as u32) {
                *cheap = o.iter().take(CHEAP_VALUES).copied().collect();
                *best = o.first().copied();
            }
        }
    }

    fn next(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// Whether there is anything to free.
    pub(crate) fn is_empty(&self) -> bool {
        self.movable.is_empty()
    }

    /// The variables to free around `incumbent` (a mask over all variables).
    pub(crate) fn pick(&mut self, incumbent: &[Value]) -> Vec<bool> {
        let n = incumbent.len();
        let mut free = vec![false; n];
        if self.movable.is_empty() {
            return free;
        }
        let want = self.size.min(self.movable.len());
        // Who holds each (capacity, holder) in the incumbent.
        let mut on: std::collections::BTreeMap<(usize, u32), Vec<u32>> = Default::default();
        for (x, hs) in self.holders.iter().enumerate() {
            for (c, keys) in hs {
                let h = incumbent
                    .get(x)
                    .and_then(|v| keys.get(v.index()).copied())
                    .unwrap_or(NO_KEY);
                if h != NO_KEY {
                    on.entry((*c, h)).or_default().push(x as u32);
                }
            }
        }
        let mut count = 0;
        let mut frontier: Vec<u32> = Vec::new();
        // One round in four frees variables drawn at random, not grown through what binds
        // them: the grown ones alone end in local optima (see the module doc).
        let r = self.next();
        let scatter = r.is_multiple_of(4);
        let off: Vec<u32> = if !scatter && (r >> 2).is_multiple_of(2) {
            self.movable
                .iter()
                .copied()
                .filter(|&x| {
                    self.best[x as usize]
                        .is_some_and(|b| incumbent.get(x as usize) != Some(&Value(b)))
                })
                .collect()
        } else {
            Vec::new()
        };
        while count < want {
            let x = match frontier.len() {
                0 if count == 0 && !off.is_empty() => off[self.below(off.len())],
                0 => {
                    let i = self.below(self.movable.len());
                    self.movable[i]
                }
                len => frontier.swap_remove(self.below(len)),
            };
            if free[x as usize] || !self.is_movable[x as usize] {
                continue;
            }
            free[x as usize] = true;
            count += 1;
            let xi = x as usize;
            if scatter {
                continue;
            }
            frontier.extend(self.related[xi].iter().filter(|&&y| !free[y as usize]));
            let mut values: Vec<u32> = self.cheap[xi].clone();
            if let Some(v) = incumbent.get(xi) {
                values.push(v.0);
            }
            for (c, keys) in &self.holders[xi] {
                for &v in &values {
                    let h = keys.get(v as usize).copied().unwrap_or(NO_KEY);
                    if let Some(ys) = on.get(&(*c, h)) {
                        frontier.extend(ys.iter().filter(|&&y| !free[y as usize]));
                    }
                }
            }
        }
        free
    }

    /// Node budget of the next round: `base`, doubled for every [`STALE_ROUNDS`] rounds in
    /// vain (at most [`MOST_DOUBLINGS`] times). Stuck rounds go deeper instead of giving up
    /// at the same depth (100×1000 at 20 s, three seeds by three instances: better on four
    /// of nine, worse on one).
    pub(crate) fn budget(&self, base: u64) -> u64 {
        base << (self.stale / STALE_ROUNDS).min(MOST_DOUBLINGS)
    }

    /// What the last round did: improved, or searched its whole neighbourhood in vain
    /// (grow), or ran out of nodes in vain (shrink).
    pub(crate) fn feedback(&mut self, improved: bool, completed: bool) {
        if improved {
            self.stale = 0;
            return;
        }
        self.stale += 1;
        if completed {
            self.size = (self.size + 1).min(self.movable.len().max(MIN_SIZE));
        } else {
            self.size = (self.size - 1).max(MIN_SIZE);
        }
    }
}
