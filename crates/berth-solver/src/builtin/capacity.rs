//! `Capacity`: resource vectors on capacity holders (hosts, sites): per-dimension sums fit.

use super::alldiff::key_sizes;
use crate::keys::{KeyIndex, Keys, NO_KEY, both, index_all, same_keys};
use crate::{Assignment, Conflict, Constraint, Ctx, Value, VarId};

/// Each value of a variable sits on a capacity holder (`holders[i][value]`, or [`NO_KEY`] for
/// none); each variable has a demand vector. On every holder and dimension the demands of the
/// variables placed on it sum to at most the capacity. Quantities are integers (base units).
///
/// State: one reversible load cell per holder and dimension. On assignment the load grows and
/// the holder's values are removed from every unassigned variable whose demand no longer fits:
/// `O(scope + values on the holder)` per assignment, never `O(values^2)`.
pub struct Capacity {
    vars: Vec<VarId>,
    of_var: Vec<u32>,
    tables: Vec<KeyIndex>,
    dims: usize,
    demand: Vec<i64>,
    capacity: Vec<i64>,
}

impl std::fmt::Debug for Capacity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capacity")
            .field("vars", &self.vars)
            .field("dims", &self.dims)
            .field("holders", &(self.capacity.len() / self.dims.max(1)))
            .finish_non_exhaustive()
    }
}

/// A capacity's data, read by the Lagrangian bound (`lagrange.rs`): per scope variable its
/// variable, the holder of each value and its demand vector; per holder its capacity vector.
pub(crate) struct CapacityData {
    pub(crate) dims: usize,
    pub(crate) vars: Vec<(VarId, Keys, Vec<i64>)>,
    pub(crate) capacity: Vec<i64>,
}

impl Capacity {
    /// Its data for the Lagrangian bound (holders outside `0..holders` become [`NO_KEY`]).
    pub(crate) fn data(&self) -> CapacityData {
        let holders = self.holders() as u32;
        let vars = self
            .vars
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let keys: Keys = self
                    .of_var
                    .get(i)
                    .and_then(|t| self.tables.get(*t as usize))
                    .map_or_else(
                        || Keys::from(Vec::new()),
                        |t| {
                            t.keys()
                                .iter()
                                .map(|&h| if h < holders { h } else { NO_KEY })
                                .collect()
                        },
                    );
                (x, keys, self.demand(i).to_vec())
            })
            .collect();
        CapacityData {
            dims: self.dims,
            vars,
            capacity: self.capacity.clone(),
        }
    }

    /// `capacity[h]` is holder `h`'s capacity vector (all of length `dims`); each entry of
    /// `demands` is `(var, holder of each of its values, demand vector)`.
    pub fn new(
        dims: usize,
        capacity: Vec<Vec<i64>>,
        demands: Vec<(VarId, Keys, Vec<i64>)>,
    ) -> Capacity {
        let mut vars = Vec::with_capacity(demands.len());
        let mut keys = Vec::with_capacity(demands.len());
        let mut demand = Vec::with_capacity(demands.len() * dims);
        for (x, k, d) in demands {
            vars.push(x);
            keys.push(k);
            // A vector of the wrong length becomes -1s, which `validate` reports.
            if d.len() == dims {
                demand.extend(d);
            } else {
                demand.extend(std::iter::repeat_n(-1, dims));
            }
        }
        let mut cap = Vec::with_capacity(capacity.len() * dims);
        for c in capacity {
            if c.len() == dims {
                cap.extend(c);
            } else {
                cap.extend(std::iter::repeat_n(-1, dims));
            }
        }
        let (of_var, tables) = index_all(keys);
        Capacity {
            vars,
            of_var,
            tables,
            dims,
            demand,
            capacity: cap,
        }
    }

    fn holders(&self) -> usize {
        self.capacity.len() / self.dims.max(1)
    }

    fn holder(&self, i: usize, v: Value) -> Option<usize> {
        let h = self.tables.get(*self.of_var.get(i)? as usize)?.key(v);
        (h != NO_KEY && (h as usize) < self.holders()).then_some(h as usize)
    }

    fn demand(&self, i: usize) -> &[i64] {
        self.demand
            .get(i * self.dims..(i + 1) * self.dims)
            .unwrap_or(&[])
    }

    fn cap(&self, h: usize) -> &[i64] {
        self.capacity
            .get(h * self.dims..(h + 1) * self.dims)
            .unwrap_or(&[])
    }

    fn fits(&self, i: usize, h: usize, load: &[i64]) -> bool {
        let d = self.demand(i);
        let c = self.cap(h);
        (0..self.dims).all(|k| {
            load.get(h * self.dims + k)
                .copied()
                .unwrap_or(0)
                .saturating_add(d[k])
                <= c[k]
        })
    }
}

impl Constraint for Capacity {
    fn scope(&self) -> &[VarId] {
        &self.vars
    }

    fn validate(&self, sizes: &[u32]) -> Result<(), String> {
        super::check_scope(&self.vars, sizes)?;
        key_sizes(&self.vars, &self.of_var, &self.tables, sizes)?;
        if self.dims == 0 {
            return Err("0 dimensions; expected at least 1".into());
        }
        if self.demand.iter().any(|&d| d < 0) {
            return Err(format!(
                "a demand vector is negative or not of length {}; expected {} non-negative integers",
                self.dims, self.dims
            ));
        }
        if self.capacity.iter().any(|&c| c < 0) {
            return Err(format!(
                "a capacity vector is negative or not of length {}; expected {} non-negative integers",
                self.dims, self.dims
            ));
        }
        if let Some(t) = self
            .tables
            .iter()
            .find(|t| t.max_key().is_some_and(|k| k as usize >= self.holders()))
        {
            return Err(format!(
                "holder {} does not exist; expected holders 0..{}",
                t.max_key().unwrap_or(0),
                self.holders()
            ));
        }
        Ok(())
    }

    fn initial_state(&self, _universe: &[u32]) -> Vec<i64> {
        vec![0; self.capacity.len()]
    }

    fn propagate(&self, ctx: &mut Ctx<'_>) -> Result<(), Conflict> {
        // Loads only change through `on_assign`; here: values too small on their own.
        let empty = vec![0; self.capacity.len()];
        for (i, &x) in self.vars.iter().enumerate() {
            ctx.retain(x, |v| {
                self.holder(i, v).is_none_or(|h| self.fits(i, h, &empty))
            })?;
        }
        Ok(())
    }

    fn on_assign(&self, ctx: &mut Ctx<'_>, var: VarId, value: Value) -> Result<(), Conflict> {
        let Some(i) = self.vars.iter().position(|&x| x == var) else {
            return Ok(());
        };
        let Some(h) = self.holder(i, value) else {
            return Ok(());
        };
        let base = h * self.dims;
        for k in 0..self.dims {
            let load = ctx
                .state()
                .get(base + k)
                .copied()
                .unwrap_or(0)
                .saturating_add(self.demand(i)[k]);
            if load > self.cap(h)[k] {
                return Err(ctx.fail());
            }
            ctx.set_state(base + k, load);
        }
        for (j, &y) in self.vars.iter().enumerate() {
            if j == i || ctx.value(y).is_some() || self.fits(j, h, ctx.state()) {
                continue;
            }
            let Some(t) = self
                .of_var
                .get(j)
                .and_then(|t| self.tables.get(*t as usize))
            else {
                continue;
            };
            for &v in t.values_with(h as u32) {
                ctx.remove(y, Value(v))?;
            }
        }
        Ok(())
    }

    /// The loads of the holders in use that the unassigned variables could still overflow
    /// (on the others any completion fits, whatever their load).
    fn residual(&self, ctx: &Ctx<'_>, out: &mut Vec<i64>) -> bool {
        let mut used: Vec<usize> = self
            .vars
            .iter()
            .enumerate()
            .filter_map(|(i, &x)| ctx.value(x).and_then(|v| self.holder(i, v)))
            .collect();
        used.sort_unstable();
        used.dedup();
        if used.is_empty() {
            return true;
        }
        // One pass over the open domains: what could still land on each holder in use.
        const NONE: u32 = u32::MAX;
        let mut slot = vec![NONE; self.holders()];
        for (k, &h) in used.iter().enumerate() {
            slot[h] = k as u32;
        }
        let mut want = vec![0i64; used.len() * self.dims];
        let mut last = vec![usize::MAX; used.len()];
        for (j, &y) in self.vars.iter().enumerate() {
            if ctx.value(y).is_some() {
                continue;
            }
            for v in ctx.values(y) {
                let Some(h) = self.holder(j, v) else { continue };
                let k = slot[h];
                if k == NONE || last[k as usize] == j {
                    continue;
                }
                last[k as usize] = j;
                let base = k as usize * self.dims;
                for (w, d) in want[base..base + self.dims].iter_mut().zip(self.demand(j)) {
                    *w = w.saturating_add(*d);
                }
            }
        }
        let load = ctx.state();
        for (k, &h) in used.iter().enumerate() {
            let base = h * self.dims;
            let tight = (0..self.dims).any(|d| {
                let l = load.get(base + d).copied().unwrap_or(0);
                l.saturating_add(want[k * self.dims + d]) > self.cap(h)[d]
            });
            if tight {
                out.push(h as i64);
                out.extend(load.get(base..base + self.dims).unwrap_or(&[]));
            }
        }
        true
    }

    fn violation(&self, a: &Assignment<'_>) -> f64 {
        let mut load = vec![0i64; self.capacity.len()];
        for (i, &x) in self.vars.iter().enumerate() {
            if let Some(h) = a.get(x).and_then(|v| self.holder(i, v)) {
                for k in 0..self.dims {
                    load[h * self.dims + k] =
                        load[h * self.dims + k].saturating_add(self.demand(i)[k]);
                }
            }
        }
        let over: i64 = load
            .iter()
            .zip(&self.capacity)
            .map(|(l, c)| l.saturating_sub(*c).max(0))
            .sum();
        over as f64
    }

    fn symmetric(&self, a: VarId, b: VarId) -> bool {
        both(&self.vars, a, b).is_some_and(|(i, j)| {
            same_keys(&self.of_var, &self.tables, i, j) && self.demand(i) == self.demand(j)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ConstraintId;
    use crate::state::State;

    /// `residual`'s words once `x0` (demand 2) sits on holder 0 of capacity 4, the open `x1`
    /// (demand 1) and `x2` (demand `d2`) with the values `open2` left to `x2`.
    fn words(d2: i64, open2: &[u32]) -> Vec<i64> {
        let holder: Keys = Keys::from(vec![0, 1, 1]);
        let c = Capacity::new(
            1,
            vec![vec![4], vec![4]],
            vec![
                (VarId(0), holder.clone(), vec![2]),
                (VarId(1), holder.clone(), vec![1]),
                (VarId(2), holder, vec![d2]),
            ],
        );
        let mut st = State::new(&[3, 3, 3], c.initial_state(&[3, 3, 3]));
        let cells = 0..st.cells.len();
        for v in (0..3).filter(|v| !open2.contains(v)) {
            assert!(st.remove(2, v, ConstraintId(0)).is_ok());
        }
        assert!(st.assign(0, 0).is_ok());
        let mut ctx = Ctx {
            st: &mut st,
            cid: ConstraintId(0),
            cells,
            root: false,
        };
        assert!(c.on_assign(&mut ctx, VarId(0), Value(0)).is_ok());
        assert_eq!(ctx.value(VarId(2)), None);
        let mut out = Vec::new();
        assert!(c.residual(&ctx, &mut out));
        out
    }

    #[test]
    fn residual_names_the_loads_open_demands_could_still_overflow() {
        // 2 + 1 + 2 > 4 if both open demands take holder 0: its load decides.
        assert_eq!(words(2, &[0, 1, 2]), vec![0, 2]);
        // 2 + 1 + 1 fits: the load decides nothing.
        assert_eq!(words(1, &[0, 1, 2]), Vec::<i64>::new());
        // x2 can no longer take holder 0: neither.
        assert_eq!(words(2, &[1, 2]), Vec::<i64>::new());
    }
}
