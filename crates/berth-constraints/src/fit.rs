//! `ControllerFit`: demands placed on one candidate must fit together, as judged by a
//! registered service controller (the built-in rule uses the solver's `Capacity`).

use std::collections::BTreeMap;
use std::sync::Arc;

use berth_inventory::{Candidate, ServiceController};
use berth_solver::{Assignment, Conflict, Constraint, Ctx, Keys, NO_KEY, Value, VarId};

/// The sum of the requests of the demands placed on one holder (candidate id) must be
/// accepted by the controller's `fits`. Loads live in reversible cells, one per holder and
/// dimension; after each assignment the other demands' values on that holder are checked
/// against the new load. Assumes `fits` is monotone (a larger request never fits better).
pub struct ControllerFit {
    controller: Arc<dyn ServiceController>,
    vars: Vec<VarId>,
    holders: Vec<Keys>,
    sites: Vec<Arc<Candidate>>,
    dims: Vec<String>,
    requests: Vec<Vec<i64>>,
    /// Per holder: (scope index, value) that sit on it.
    on_holder: Vec<Vec<(u32, u32)>>,
}

impl std::fmt::Debug for ControllerFit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerFit")
            .field("controller", &self.controller.name())
            .field("vars", &self.vars)
            .field("dims", &self.dims)
            .finish_non_exhaustive()
    }
}

impl ControllerFit {
    /// `holders[i][value]` is the index into `sites` of `vars[i]`'s value; `requests[i]` is
    /// its amount per dimension of `dims`.
    pub fn new(
        controller: Arc<dyn ServiceController>,
        vars: Vec<VarId>,
        holders: Vec<Keys>,
        sites: Vec<Arc<Candidate>>,
        dims: Vec<String>,
        requests: Vec<Vec<i64>>,
    ) -> ControllerFit {
        let mut on_holder = vec![Vec::new(); sites.len()];
        for (i, keys) in holders.iter().enumerate() {
            for (v, &h) in keys.iter().enumerate() {
                if let Some(list) = on_holder.get_mut(h as usize) {
                    list.push((i as u32, v as u32));
                }
            }
        }
        ControllerFit {
            controller,
            vars,
            holders,
            sites,
            dims,
            requests,
            on_holder,
        }
    }

    fn holder(&self, i: usize, v: Value) -> Option<usize> {
        let h = *self.holders.get(i)?.get(v.index())?;
        (h != NO_KEY && (h as usize) < self.sites.len()).then_some(h as usize)
    }

    fn fits(&self, h: usize, load: &[i64], extra: &[i64]) -> bool {
        let Some(site) = self.sites.get(h) else {
            return true;
        };
        let request: BTreeMap<String, i64> = self
            .dims
            .iter()
            .enumerate()
            .map(|(k, d)| {
                (
                    d.clone(),
                    load.get(k)
                        .copied()
                        .unwrap_or(0)
                        .saturating_add(extra.get(k).copied().unwrap_or(0)),
                )
            })
            .collect();
        self.controller.fits(site, &request).fits()
    }

    fn load(&self, ctx: &Ctx<'_>, h: usize) -> Vec<i64> {
        let n = self.dims.len();
        ctx.state()
            .get(h * n..(h + 1) * n)
            .map(<[i64]>::to_vec)
            .unwrap_or_else(|| vec![0; n])
    }
}

impl Constraint for ControllerFit {
    fn scope(&self) -> &[VarId] {
        &self.vars
    }

    fn validate(&self, sizes: &[u32]) -> Result<(), String> {
        for (x, keys) in self.vars.iter().zip(&self.holders) {
            let want = sizes.get(x.index()).copied().unwrap_or(0) as usize;
            if keys.len() != want {
                return Err(format!(
                    "holder list of {x} has {} entries; expected {want}",
                    keys.len()
                ));
            }
        }
        if self.requests.len() != self.vars.len()
            || self.requests.iter().any(|r| r.len() != self.dims.len())
        {
            return Err("one request of every dimension per variable expected".to_owned());
        }
        Ok(())
    }

    fn initial_state(&self, _universe: &[u32]) -> Vec<i64> {
        vec![0; self.sites.len() * self.dims.len()]
    }

    fn propagate(&self, _: &mut Ctx<'_>) -> Result<(), Conflict> {
        // Values too large on their own are removed by the per-constraint filters.
        Ok(())
    }

    fn on_assign(&self, ctx: &mut Ctx<'_>, var: VarId, value: Value) -> Result<(), Conflict> {
        let Some(i) = self.vars.iter().position(|&x| x == var) else {
            return Ok(());
        };
        let Some(h) = self.holder(i, value) else {
            return Ok(());
        };
        let load = self.load(ctx, h);
        let req = &self.requests[i];
        if !self.fits(h, &load, req) {
            return Err(ctx.fail());
        }
        let n = self.dims.len();
        let new: Vec<i64> = load
            .iter()
            .zip(req)
            .map(|(a, b)| a.saturating_add(*b))
            .collect();
        for (k, l) in new.iter().enumerate() {
            ctx.set_state(h * n + k, *l);
        }
        let mut checked: BTreeMap<u32, bool> = BTreeMap::new();
        for &(j, v) in self.on_holder.get(h).map_or(&[][..], Vec::as_slice) {
            let y = self.vars[j as usize];
            if ctx.value(y).is_some() || !ctx.contains(y, Value(v)) {
                continue;
            }
            let ok = *checked
                .entry(j)
                .or_insert_with(|| self.fits(h, &new, &self.requests[j as usize]));
            if !ok {
                ctx.remove(y, Value(v))?;
            }
        }
        Ok(())
    }

    /// The loads of the holders in use where the open demands that could still land there
    /// would not all fit together (elsewhere any completion fits, `fits` being monotone).
    fn residual(&self, ctx: &Ctx<'_>, out: &mut Vec<i64>) -> bool {
        let mut used: Vec<usize> = self
            .vars
            .iter()
            .enumerate()
            .filter_map(|(i, &x)| ctx.value(x).and_then(|v| self.holder(i, v)))
            .collect();
        used.sort_unstable();
        used.dedup();
        for h in used {
            let mut rest = vec![0i64; self.dims.len()];
            let mut last = None;
            for &(j, v) in self.on_holder.get(h).map_or(&[][..], Vec::as_slice) {
                let y = self.vars[j as usize];
                if last == Some(j) || ctx.value(y).is_some() || !ctx.contains(y, Value(v)) {
                    continue;
                }
                last = Some(j);
                for (r, q) in rest.iter_mut().zip(&self.requests[j as usize]) {
                    *r = r.saturating_add(*q);
                }
            }
            let load = self.load(ctx, h);
            if last.is_some() && !self.fits(h, &load, &rest) {
                out.push(h as i64);
                out.extend(load);
            }
        }
        true
    }

    fn violation(&self, a: &Assignment<'_>) -> f64 {
        let n = self.dims.len();
        let mut load: BTreeMap<usize, Vec<i64>> = BTreeMap::new();
        for (i, &x) in self.vars.iter().enumerate() {
            if let Some(h) = a.get(x).and_then(|v| self.holder(i, v)) {
                let l = load.entry(h).or_insert_with(|| vec![0; n]);
                for (k, r) in self.requests[i].iter().enumerate() {
                    l[k] = l[k].saturating_add(*r);
                }
            }
        }
        load.iter().filter(|(h, l)| !self.fits(**h, l, &[])).count() as f64
    }
}
