//! Propagation: at the root, after each decision (the constraints' hooks and the soft
//! penalties), and the value order of interchangeable variables.

use super::{Engine, SEARCH};
use crate::state::{Event, State};
use crate::{Assignment, Conflict, ConstraintId, Ctx, Value, VarId};

impl<'p> Engine<'p> {
    /// Root propagation, after removing `excluded` values (not attributed to constraints).
    pub(crate) fn root(
        &mut self,
        excluded: &[(VarId, Value)],
        record: bool,
    ) -> Result<(), Conflict> {
        self.root = true;
        if record {
            self.st.record = Some(Vec::new());
        }
        let r = self.root_inner(excluded);
        self.root = false;
        self.stats.removals = self.st.removals;
        r
    }

    /// Starts from a state after root propagation made by an engine of the same layout
    /// (same problem, active constraints and soft setting), instead of [`Engine::root`].
    pub(crate) fn resume(&mut self, st: State) {
        self.st = st;
        self.root = false;
        self.stats.removals = self.st.removals;
    }

    fn root_inner(&mut self, excluded: &[(VarId, Value)]) -> Result<(), Conflict> {
        for x in 0..self.st.vars() as u32 {
            if self.st.size(x) == 0 {
                return Err(Conflict {
                    var: Some(VarId(x)),
                });
            }
        }
        let rec = self.st.record.take();
        for &(x, v) in excluded {
            self.st.remove(x.0, v.0, SEARCH)?;
        }
        self.st.record = rec;
        for i in 0..self.active.len() {
            let c = self.active[i] as usize;
            self.stats.propagations += 1;
            let mut ctx = Ctx {
                st: &mut self.st,
                cid: ConstraintId(c as u32),
                cells: self.ranges[c].clone(),
                root: true,
            };
            if let Err(e) = self.cons[c].propagate(&mut ctx) {
                self.st.clear_events();
                return Err(e);
            }
        }
        self.run_queue()
    }

    pub(super) fn run_queue(&mut self) -> Result<(), Conflict> {
        let r = self.run_queue_inner();
        if r.is_err() {
            self.st.clear_events();
        }
        r
    }

    fn run_queue_inner(&mut self) -> Result<(), Conflict> {
        while let Some(ev) = self.st.events.pop_front() {
            match ev {
                Event::Assigned(x) => {
                    let Some(val) = self.st.value(x) else {
                        continue;
                    };
                    for j in 0..self.watch[x as usize].len() {
                        let c = self.watch[x as usize][j] as usize;
                        self.stats.propagations += 1;
                        let mut ctx = Ctx {
                            st: &mut self.st,
                            cid: ConstraintId(c as u32),
                            cells: self.ranges[c].clone(),
                            root: self.root,
                        };
                        self.cons[c].on_assign(&mut ctx, VarId(x), val)?;
                    }
                    if !self.root && !self.sym.is_empty() {
                        self.order_class(x, val.0)?;
                    }
                    for j in 0..self.swatch[x as usize].len() {
                        let c = self.swatch[x as usize][j] as usize;
                        let w = self.weights[c].unwrap_or(0.0);
                        let v = w * self.cons[c].violation(&Assignment::new(&self.st.assigned));
                        let cell = self.soft_cell[c];
                        let old = f64::from_bits(self.st.cell(cell) as u64);
                        if v != old {
                            let total =
                                f64::from_bits(self.st.cell(self.penalty_cell) as u64) + v - old;
                            self.st.set_cell(cell, v.to_bits() as i64);
                            self.st.set_cell(self.penalty_cell, total.to_bits() as i64);
                        }
                    }
                }
                Event::Changed(x) => {
                    self.st.dequeued(x);
                    if self.st.value(x).is_some() {
                        continue;
                    }
                    for j in 0..self.dwatch[x as usize].len() {
                        let c = self.dwatch[x as usize][j] as usize;
                        self.stats.propagations += 1;
                        let mut ctx = Ctx {
                            st: &mut self.st,
                            cid: ConstraintId(c as u32),
                            cells: self.ranges[c].clone(),
                            root: self.root,
                        };
                        self.cons[c].on_domain_change(&mut ctx, VarId(x))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// After root propagation: orders the values of interchangeable variables (only sound
    /// when one optimum is wanted, not k distinct plans). Returns the number of classes.
    pub(crate) fn break_symmetry(&mut self) -> usize {
        let classes = self.find_classes();
        self.order_classes(&classes)
    }

    /// Classes of interchangeable variables at the current (root) node.
    pub(crate) fn find_classes(&self) -> Vec<Vec<u32>> {
        let hard: Vec<bool> = self.weights.iter().map(Option::is_none).collect();
        crate::symmetry::classes(&self.cons, &hard, self.obj, &self.st)
    }

    /// Orders the values of each class, restricted to the searched variables. Returns the
    /// number of classes kept.
    pub(crate) fn order_classes(&mut self, classes: &[Vec<u32>]) -> usize {
        self.sym_classes = classes
            .iter()
            .map(|c| {
                c.iter()
                    .copied()
                    .filter(|&x| self.vars.is_none_or(|m| m.get(x as usize) == Some(&true)))
                    .collect::<Vec<u32>>()
            })
            .filter(|c| c.len() > 1)
            .collect();
        self.sym = vec![(u32::MAX, 0); self.st.vars()];
        self.sym_rank = Vec::with_capacity(self.sym_classes.len());
        for (c, class) in self.sym_classes.iter().enumerate() {
            for (i, &x) in class.iter().enumerate() {
                self.sym[x as usize] = (c as u32, i as u32);
            }
            // Ranks follow the order values are tried in (members share it), so the first
            // dive is already canonical.
            let x = class[0];
            let n = self.st.universe(x) as usize;
            let order = if self.with_objective {
                self.obj.keys.get(x as usize).and_then(|k| k.order.clone())
            } else {
                None
            };
            let mut rank: Vec<u32> = (0..n as u32).collect();
            if let Some((o, rev)) = order {
                for (i, &v) in o.iter().enumerate() {
                    let r = if rev { n - 1 - i } else { i };
                    if let Some(slot) = rank.get_mut(v as usize) {
                        *slot = r as u32;
                    }
                }
            }
            self.sym_rank.push(rank);
        }
        self.sym_classes.len()
    }

    /// `x = v` in an ordered class: earlier members take values of rank at most `v`'s,
    /// later ones at least.
    fn order_class(&mut self, x: u32, v: u32) -> Result<(), Conflict> {
        let Some(&(c, pos)) = self.sym.get(x as usize) else {
            return Ok(());
        };
        let (Some(class), Some(rank)) = (
            self.sym_classes.get(c as usize),
            self.sym_rank.get(c as usize),
        ) else {
            return Ok(());
        };
        let r = |u: u32| rank.get(u as usize).copied().unwrap_or(u32::MAX);
        let rv = r(v);
        let pos = pos as usize;
        let later = class.get(pos + 1..).unwrap_or(&[]).iter();
        let earlier = class.get(..pos).unwrap_or(&[]).iter().rev();
        for (&y, after) in later.map(|y| (y, true)).chain(earlier.map(|y| (y, false))) {
            let bad = |u: u32| if after { r(u) < rv } else { r(u) > rv };
            if let Some(w) = self.st.value(y) {
                if bad(w.0) {
                    return Err(Conflict {
                        var: Some(VarId(y)),
                    });
                }
                continue;
            }
            let drop: Vec<u32> = self.st.values(y).map(|u| u.0).filter(|&u| bad(u)).collect();
            for u in drop {
                self.st.remove(y, u, SEARCH)?;
            }
        }
        Ok(())
    }
}
