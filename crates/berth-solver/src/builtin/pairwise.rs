//! `Pairwise`: a binary relation between two variables, with forward checking and AC-3.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use crate::{Assignment, Conflict, Constraint, Ctx, Domains, Linear, Value, VarId};

type Relation = Arc<dyn Fn(Value, Value) -> bool + Send + Sync>;

/// Most relation calls spent on LP rows (`|D(a)| * |D(b)|`); larger pairs give none.
const LINEAR_LIMIT: u64 = 1 << 22;

/// Binary constraint: `(a, b)` must satisfy `allowed(value_of_a, value_of_b)`.
///
/// Propagation: forward checking when either side is assigned; arc consistency (AC-3 revise)
/// at the root and whenever a domain shrinks, as long as `|D(a)| * |D(b)|` is at most the
/// AC limit (default 65,536 relation calls) so huge domains do not cost `O(d^2)` per node.
/// The relation is a closure, so it need not be materialized (e.g. a distance threshold).
#[derive(Clone)]
pub struct Pairwise {
    vars: [VarId; 2],
    allowed: Relation,
    ac_limit: u64,
    /// One residual support per value of either side (see `revise`).
    residues: Residues,
}

/// Residual supports (AC-3rm): per value of `a`, then per value of `b`, the last support
/// found, plus one (0: none). Only hints, checked again before use, so they are not undone
/// on backtracking and the threads share them. Kept in the search state, they were copied
/// with it for every component and helper (1000×5000: 40 MB per copy).
type Residues = Arc<OnceLock<Box<[AtomicU32]>>>;

impl fmt::Debug for Pairwise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pairwise")
            .field("vars", &self.vars)
            .field("ac_limit", &self.ac_limit)
            .finish_non_exhaustive()
    }
}

impl Pairwise {
    /// The relation given by a closure over (value of `a`, value of `b`).
    pub fn new(
        a: VarId,
        b: VarId,
        allowed: impl Fn(Value, Value) -> bool + Send + Sync + 'static,
    ) -> Pairwise {
        Pairwise {
            vars: [a, b],
            allowed: Arc::new(allowed),
            ac_limit: 1 << 16,
            residues: Arc::default(),
        }
    }

    /// The relation given by a row-major table: `allowed[va * cols + vb]`; outside = forbidden.
    pub fn from_table(a: VarId, b: VarId, cols: u32, allowed: Vec<bool>) -> Pairwise {
        Pairwise::new(a, b, move |x, y| {
            y.0 < cols
                && allowed
                    .get(x.index() * cols as usize + y.index())
                    .copied()
                    .unwrap_or(false)
        })
    }

    /// Sets the largest `|D(a)| * |D(b)|` for which arc consistency runs (0 = forward checking only).
    pub fn with_ac_limit(mut self, limit: u64) -> Pairwise {
        self.ac_limit = limit;
        self
    }

    /// Whether the pair of values is allowed.
    pub fn allows(&self, va: Value, vb: Value) -> bool {
        (self.allowed)(va, vb)
    }

    fn test(&self, x_is_a: bool, vx: Value, vy: Value) -> bool {
        if x_is_a {
            self.allows(vx, vy)
        } else {
            self.allows(vy, vx)
        }
    }

    /// Removes values of the other side that have no support in `D(x)`.
    fn revise(&self, ctx: &mut Ctx<'_>, x_is_a: bool) -> Result<(), Conflict> {
        let (x, y) = if x_is_a {
            (self.vars[0], self.vars[1])
        } else {
            (self.vars[1], self.vars[0])
        };
        if ctx.value(y).is_some() {
            return Ok(());
        }
        if let Some(vx) = ctx.value(x) {
            return ctx.retain(y, |vy| self.test(x_is_a, vx, vy));
        }
        if u64::from(ctx.size(x)) * u64::from(ctx.size(y)) > self.ac_limit {
            return Ok(());
        }
        // Residual supports (AC-3rm): the support each value of y last had is tried first,
        // so a revise after a few removals from D(x) costs about |D(y)| relation calls
        // instead of |D(x)| * |D(y)|.
        let (ua, ub) = (ctx.universe(self.vars[0]), ctx.universe(self.vars[1]));
        let off = if x_is_a { ua as usize } else { 0 };
        let residues = self.residues.get_or_init(|| {
            (0..ua as usize + ub as usize)
                .map(|_| AtomicU32::new(0))
                .collect()
        });
        let dy: Vec<Value> = ctx.values(y).collect();
        let mut dx: Option<Vec<Value>> = None;
        for vy in dy {
            let res = residues.get(off + vy.index());
            let hint = res.map_or(0, |r| r.load(Ordering::Relaxed));
            if hint > 0 && ctx.contains(x, Value(hint - 1)) {
                continue;
            }
            let dx = dx.get_or_insert_with(|| ctx.values(x).collect());
            match dx.iter().find(|&&vx| self.test(x_is_a, vx, vy)) {
                Some(&vx) => {
                    if let Some(r) = res {
                        r.store(vx.0 + 1, Ordering::Relaxed);
                    }
                }
                None => {
                    ctx.remove(y, vy)?;
                }
            }
        }
        Ok(())
    }
}

impl Constraint for Pairwise {
    fn scope(&self) -> &[VarId] {
        &self.vars
    }

    fn validate(&self, sizes: &[u32]) -> Result<(), String> {
        super::check_scope(&self.vars, sizes)
    }

    fn propagate(&self, ctx: &mut Ctx<'_>) -> Result<(), Conflict> {
        self.revise(ctx, true)?;
        self.revise(ctx, false)
    }

    fn on_assign(&self, ctx: &mut Ctx<'_>, var: VarId, value: Value) -> Result<(), Conflict> {
        let x_is_a = var == self.vars[0];
        let y = if x_is_a { self.vars[1] } else { self.vars[0] };
        if let Some(vy) = ctx.value(y) {
            return if self.test(x_is_a, value, vy) {
                Ok(())
            } else {
                Err(ctx.fail())
            };
        }
        ctx.retain(y, |vy| self.test(x_is_a, value, vy))
    }

    fn wants_domain_events(&self) -> bool {
        self.ac_limit > 0
    }

    fn on_domain_change(&self, ctx: &mut Ctx<'_>, var: VarId) -> Result<(), Conflict> {
        self.revise(ctx, var == self.vars[0])
    }

    /// Checked forward on assignment: nothing beyond the domains.
    fn residual(&self, _: &Ctx<'_>, _: &mut Vec<i64>) -> bool {
        true
    }

    fn violation(&self, a: &Assignment<'_>) -> f64 {
        match (a.get(self.vars[0]), a.get(self.vars[1])) {
            (Some(x), Some(y)) if !self.allows(x, y) => 1.0,
            _ => 0.0,
        }
    }

    /// For each side `x` against the other `y`, a value `v` of `x` with supports `S(v)` in
    /// `D(y)` gives `[x = v] − Σ_{w ∈ S(v)} [y = w] ≤ 0`, or the equivalent (one value per
    /// variable) `[x = v] + Σ_{w ∉ S(v)} [y = w] ≤ 1` when its conflicts are fewer. Values with
    /// the same conflicts share that row (a clique of the conflict graph: one per zone for
    /// "different zones"), which is valid as every one of them conflicts with every `w`.
    /// Only wanted values get rows ([`Domains::wanted`]): an unwanted value's support row
    /// and a clique of unwanted values never bind where the LP is over wanted values.
    fn linear(&self, domains: &Domains<'_>) -> Vec<Linear> {
        let [a, b] = self.vars;
        let (da, db): (Vec<Value>, Vec<Value>) =
            (domains.values(a).collect(), domains.values(b).collect());
        if a == b || (da.len() as u64) * (db.len() as u64) > LINEAR_LIMIT {
            return Vec::new();
        }
        // The relation over both domains, each pair asked at most once (both sides' rows
        // read it), and only where a wanted value's row needs it: 0 unknown, 1 no, 2 yes.
        let mut known = vec![0u8; da.len() * db.len()];
        let mut rows = Vec::new();
        for (x_is_a, (x, dx), (y, dy)) in [(true, (a, &da), (b, &db)), (false, (b, &db), (a, &da))]
        {
            let mut cliques: BTreeMap<Vec<Value>, Vec<Value>> = BTreeMap::new();
            let mut row_ok = vec![false; dy.len()];
            for (i, &v) in dx.iter().enumerate() {
                if !domains.wanted(x, v) {
                    continue;
                }
                for (j, ok) in row_ok.iter_mut().enumerate() {
                    let (ia, ib) = if x_is_a { (i, j) } else { (j, i) };
                    let k = &mut known[ia * db.len() + ib];
                    if *k == 0 {
                        *k = 1 + u8::from(self.allows(da[ia], db[ib]));
                    }
                    *ok = *k == 2;
                }
                let ok = |j: usize| row_ok[j];
                // Counted first: only the shorter side of the row is collected.
                let supported = (0..dy.len()).filter(|&j| ok(j)).count();
                let conflicts = dy.len() - supported;
                if conflicts == 0 {
                    continue;
                }
                let side = |keep: bool| dy.iter().enumerate().filter(move |&(j, _)| ok(j) == keep);
                if conflicts <= supported {
                    let key: Vec<Value> = side(false).map(|(_, &w)| w).collect();
                    cliques.entry(key).or_default().push(v);
                } else {
                    let mut terms = Vec::with_capacity(supported + 1);
                    terms.push((x, v, 1.0));
                    terms.extend(side(true).map(|(_, &w)| (y, w, -1.0)));
                    rows.push(Linear {
                        terms,
                        rhs: 0.0,
                        equal: false,
                    });
                }
            }
            for (conflicts, vs) in cliques {
                let terms = vs
                    .iter()
                    .map(|&v| (x, v, 1.0))
                    .chain(conflicts.iter().map(|&w| (y, w, 1.0)))
                    .collect();
                rows.push(Linear {
                    terms,
                    rhs: 1.0,
                    equal: false,
                });
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ConstraintId;
    use crate::state::State;

    /// The constraint's view of `st` (it has no cells).
    fn ctx(st: &mut State) -> Ctx<'_> {
        Ctx {
            st,
            cid: ConstraintId(0),
            cells: 0..0,
            root: true,
        }
    }

    /// Values of `var` left in `st`.
    fn left(st: &State, var: u32) -> Vec<u32> {
        st.values(var).map(|v| v.0).collect()
    }

    /// The residual supports recorded so far (empty before the first revise).
    fn residues(c: &Pairwise) -> Vec<u32> {
        c.residues.get().map_or(Vec::new(), |r| {
            r.iter().map(|a| a.load(Ordering::Relaxed)).collect()
        })
    }

    #[test]
    fn residual_supports_still_prune_values_that_lost_their_last_support() {
        // b = a: each value of b has exactly one support, the same value of a.
        let c = Pairwise::new(VarId(0), VarId(1), |x, y| x == y);
        assert!(c.initial_state(&[4, 4]).is_empty());
        let mut st = State::new(&[4, 4], Vec::new());
        assert!(c.propagate(&mut ctx(&mut st)).is_ok());
        // Every value of b now remembers a support (its own value + 1).
        assert_eq!(&residues(&c)[4..8], &[1, 2, 3, 4]);
        assert!(st.remove(0, 2, ConstraintId(0)).is_ok());
        assert!(c.on_domain_change(&mut ctx(&mut st), VarId(0)).is_ok());
        assert_eq!(left(&st, 1), vec![0, 1, 3]);
        // AC off: nothing is recorded and forward checking still works.
        let fc = Pairwise::new(VarId(0), VarId(1), |x, y| x == y).with_ac_limit(0);
        let mut st = State::new(&[4, 4], Vec::new());
        assert!(fc.propagate(&mut ctx(&mut st)).is_ok());
        assert!(residues(&fc).is_empty());
        assert!(st.assign(0, 1).is_ok());
        assert!(fc.on_assign(&mut ctx(&mut st), VarId(0), Value(1)).is_ok());
        assert_eq!(left(&st, 1), vec![1]);
    }

    #[test]
    fn a_stale_residue_is_searched_again_not_trusted() {
        // a <= b: b = 3 is supported by every a; its first support is a = 0.
        let c = Pairwise::new(VarId(0), VarId(1), |x, y| x <= y);
        let mut st = State::new(&[4, 4], Vec::new());
        let mut ctx = ctx(&mut st);
        assert!(c.propagate(&mut ctx).is_ok());
        for v in [0, 1] {
            assert!(ctx.remove(VarId(0), Value(v)).is_ok());
        }
        assert!(c.on_domain_change(&mut ctx, VarId(0)).is_ok());
        // b = 0 and b = 1 lost every support; b = 3 found a new one (a = 2).
        assert_eq!(left(&st, 1), vec![2, 3]);
        assert_eq!(residues(&c)[4 + 3], 3);
    }

    #[test]
    fn residues_outlive_backtracking_and_stay_hints() {
        // a = b again; a backtrack restores the domains but not the residues.
        let c = Pairwise::new(VarId(0), VarId(1), |x, y| x == y);
        let mut st = State::new(&[4, 4], Vec::new());
        assert!(c.propagate(&mut ctx(&mut st)).is_ok());
        let mark = st.mark();
        for v in [0, 1, 2] {
            assert!(st.remove(0, v, ConstraintId(0)).is_ok());
        }
        assert!(c.on_domain_change(&mut ctx(&mut st), VarId(0)).is_ok());
        assert_eq!(left(&st, 1), vec![3]);
        st.undo_to(mark);
        assert_eq!(left(&st, 1), vec![0, 1, 2, 3]);
        // Removing a = 3 now: b = 3 loses its support, the others keep theirs.
        assert!(st.remove(0, 3, ConstraintId(0)).is_ok());
        assert!(c.on_domain_change(&mut ctx(&mut st), VarId(0)).is_ok());
        assert_eq!(left(&st, 1), vec![0, 1, 2]);
    }
}
