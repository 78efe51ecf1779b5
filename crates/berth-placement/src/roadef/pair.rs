//! Exact repacking of two machines: every split of the processes on machines `a` and `b`
//! between them is searched depth first, bounded by the part of the cost that only grows
//! as processes are placed (load above safety capacity, process and machine move costs).
//! This finds compound moves (several shifts and swaps at once) that single moves reach only
//! through worse states, which tight multi-resource instances rarely allow.
//!
//! Capacity (transient resources included) and conflict are checked while placing; spread,
//! dependency and the service move cost are global, so a split that beats the incumbent is
//! applied to the state and verified there before it is kept.

use super::model::Model;
use super::state::State;

/// Verifies a split (the processes, their slots) on the state; true when it is kept.
type Accept<'f> = dyn FnMut(&mut State<'_>, &[usize], &[usize]) -> bool + 'f;

/// The pair's machines, in the search's terms: slot 0 is `a`, slot 1 is `b`.
struct Pair<'m> {
    model: &'m Model,
    machines: [usize; 2],
    /// The processes to place, biggest first (earlier failures, tighter bounds).
    procs: Vec<usize>,
    /// `(origin slot, for processes that started on `a` or `b`)`.
    origin: Vec<Option<usize>>,
    /// Usage and transient usage left by everything but `procs`, `slot * nr + r`.
    usage: Vec<i64>,
    gone: Vec<i64>,
    /// Placement of `procs[k]` so far (slot) and the best complete one.
    place: Vec<usize>,
    best: Vec<usize>,
    best_local: i64,
    /// `rest[k * nr + r]`: requirement of `procs[k..]` for resource `r`.
    rest: Vec<i64>,
    /// Services placed on each slot, to keep one process of a service per machine.
    services: [Vec<usize>; 2],
    nodes: u64,
    budget: u64,
}

impl Pair<'_> {
    fn nr(&self) -> usize {
        self.model.resources.len()
    }

    /// Load and balance cost of slot `s` at its current usage.
    fn machine_cost(&self, s: usize) -> i64 {
        let model = self.model;
        let nr = self.nr();
        let mach = &model.machines[self.machines[s]];
        let u = &self.usage[s * nr..(s + 1) * nr];
        let mut c: i64 = model
            .resources
            .iter()
            .enumerate()
            .map(|(r, res)| res.weight_load_cost * (u[r] - mach.safety_capacity[r]).max(0))
            .sum();
        for b in &model.balances {
            let a1 = mach.capacity[b.resource1] - u[b.resource1];
            let a2 = mach.capacity[b.resource2] - u[b.resource2];
            c += b.weight * (b.target * a1 - a2).max(0);
        }
        c
    }

    /// A lower bound on both machines' load cost once `procs[k..]` are placed too: each
    /// resource's overload is at least what is already over and at least what the pair
    /// together must exceed.
    fn load_bound(&self, k: usize) -> i64 {
        let model = self.model;
        let nr = self.nr();
        let (ma, mb) = (
            &model.machines[self.machines[0]],
            &model.machines[self.machines[1]],
        );
        model
            .resources
            .iter()
            .enumerate()
            .map(|(r, res)| {
                let (ua, ub) = (self.usage[r], self.usage[nr + r]);
                let (sa, sb) = (ma.safety_capacity[r], mb.safety_capacity[r]);
                let now = (ua - sa).max(0) + (ub - sb).max(0);
                let together = (ua + ub + self.rest[k * nr + r] - sa - sb).max(0);
                res.weight_load_cost * now.max(together)
            })
            .sum()
    }

    /// Process and machine move cost of placing process `p` on slot `s`.
    fn move_cost(&self, st: &State<'_>, p: usize, s: usize) -> i64 {
        let model = self.model;
        let o = st.initial[p] as usize;
        let to = self.machines[s];
        let moved = if o == to {
            0
        } else {
            model.weight_process_move * model.processes[p].move_cost
        };
        moved + model.weight_machine_move * model.machine_move_cost(o, to)
    }

    /// Adds (`sign` 1) or removes (-1) process `k`'s usage on slot `s`, and its transient
    /// usage left on its origin slot.
    fn account(&mut self, k: usize, s: usize, sign: i64) {
        let nr = self.nr();
        let p = self.procs[k];
        let req = &self.model.processes[p].requirement;
        for (u, q) in self.usage[s * nr..(s + 1) * nr].iter_mut().zip(req) {
            *u += sign * q;
        }
        if let Some(o) = self.origin[k]
            && o != s
        {
            for (r, res) in self.model.resources.iter().enumerate() {
                if res.transient {
                    self.gone[o * nr + r] += sign * req[r];
                }
            }
        }
    }

    /// Capacities of slot `s` hold (transient resources with what moved away).
    fn fits(&self, s: usize) -> bool {
        let nr = self.nr();
        let mach = &self.model.machines[self.machines[s]];
        self.model.resources.iter().enumerate().all(|(r, res)| {
            let u = self.usage[s * nr + r];
            u <= mach.capacity[r]
                && (!res.transient || u + self.gone[s * nr + r] <= mach.capacity[r])
        })
    }

    /// Depth-first over `procs[k..]`; `moves` is the move cost of `procs[..k]`.
    fn search(&mut self, st: &mut State<'_>, k: usize, moves: i64, accept: &mut Accept<'_>) {
        self.nodes += 1;
        if self.nodes > self.budget {
            return;
        }
        if k == self.procs.len() {
            let local = moves + self.machine_cost(0) + self.machine_cost(1);
            if local < self.best_local && accept(st, &self.procs, &self.place) {
                self.best_local = local;
                self.best.clone_from(&self.place);
            }
            return;
        }
        let p = self.procs[k];
        let service = self.model.processes[p].service;
        // The process's current slot first: the incumbent is found at once.
        let here = usize::from(st.machine_of(p) == self.machines[1]);
        for s in [here, 1 - here] {
            if self.services[s].contains(&service) {
                continue;
            }
            self.account(k, s, 1);
            let origin_ok = self.origin[k].is_none_or(|o| o == s || self.fits(o));
            if self.fits(s) && origin_ok {
                let m = moves + self.move_cost(st, p, s);
                let bound = m + self.load_bound(k + 1);
                if bound < self.best_local {
                    self.place[k] = s;
                    self.services[s].push(service);
                    self.search(st, k + 1, m, accept);
                    self.services[s].pop();
                }
            }
            self.account(k, s, -1);
        }
    }
}

/// Repacks `free` (processes on machines `a` and `b`; the others there stay) between `a` and
/// `b` at the least total cost the state accepts, within `budget` search nodes. Applies it and
/// returns the shifts made (process, from, to); returns nothing and leaves the state as it was
/// when no split beats the current one.
pub(super) fn repack(
    st: &mut State<'_>,
    model: &Model,
    [a, b]: [usize; 2],
    free: &[usize],
    budget: u64,
) -> Vec<(usize, usize, usize)> {
    if a == b {
        return Vec::new();
    }
    let machines = [a, b];
    let nr = model.resources.len();
    let mut procs = free.to_vec();
    // Biggest first, by the share of the pair's capacity each needs.
    let size = |p: usize| -> u64 {
        let req = &model.processes[p].requirement;
        (0..nr)
            .map(|r| {
                let cap = model.machines[a].capacity[r] + model.machines[b].capacity[r];
                u64::try_from(req[r].max(0) * 1_000 / cap.max(1)).unwrap_or(0)
            })
            .sum()
    };
    procs.sort_by_cached_key(|&p| (std::cmp::Reverse(size(p)), p));
    let origin: Vec<Option<usize>> = procs
        .iter()
        .map(|&p| machines.iter().position(|&m| m == st.initial[p] as usize))
        .collect();
    let mut usage = vec![0; 2 * nr];
    let mut gone = vec![0; 2 * nr];
    for s in 0..2 {
        for r in 0..nr {
            usage[s * nr + r] = st.usage(machines[s], r);
            gone[s * nr + r] = st.gone(machines[s], r);
        }
    }
    let mut rest = vec![0; (procs.len() + 1) * nr];
    for k in (0..procs.len()).rev() {
        for r in 0..nr {
            rest[k * nr + r] = rest[(k + 1) * nr + r] + model.processes[procs[k]].requirement[r];
        }
    }
    // Processes that stay where they are still forbid their service on their machine.
    let mut services = [Vec::new(), Vec::new()];
    for (s, &m) in machines.iter().enumerate() {
        for &q in st.on(m) {
            if !procs.contains(&(q as usize)) {
                services[s].push(model.processes[q as usize].service);
            }
        }
    }
    let mut pair = Pair {
        model,
        machines,
        procs,
        origin,
        usage,
        gone,
        place: Vec::new(),
        best: Vec::new(),
        best_local: 0,
        rest,
        services,
        nodes: 0,
        budget,
    };
    // Take the pair's processes out, then price the current split as the incumbent.
    let current: Vec<usize> = pair
        .procs
        .iter()
        .map(|&p| usize::from(st.machine_of(p) == b))
        .collect();
    for (k, &s) in current.iter().enumerate() {
        pair.account(k, s, -1);
    }
    let mut moves = 0;
    for (k, &s) in current.iter().enumerate() {
        pair.account(k, s, 1);
        moves += pair.move_cost(st, pair.procs[k], s);
    }
    pair.best_local = moves + pair.machine_cost(0) + pair.machine_cost(1);
    for (k, &s) in current.iter().enumerate() {
        pair.account(k, s, -1);
    }
    pair.place = current.clone();
    pair.best = current.clone();
    let before = st.total();
    let mut accept = |st: &mut State<'_>, procs: &[usize], place: &[usize]| -> bool {
        let shifts = apply(st, machines, procs, place);
        let ok = shifts.iter().all(|&(p, from, _)| st.holds_after(p, from)) && st.total() < before;
        for &(p, from, _) in shifts.iter().rev() {
            st.shift(p, from);
        }
        ok
    };
    pair.search(st, 0, 0, &mut accept);
    if pair.best == current {
        return Vec::new();
    }
    apply(st, machines, &pair.procs, &pair.best)
}

/// Shifts each process to its slot's machine; returns the shifts made.
fn apply(
    st: &mut State<'_>,
    machines: [usize; 2],
    procs: &[usize],
    place: &[usize],
) -> Vec<(usize, usize, usize)> {
    let mut shifts = Vec::new();
    for (&p, &s) in procs.iter().zip(place) {
        let from = st.machine_of(p);
        let to = machines[s];
        if from != to {
            st.shift(p, to);
            shifts.push((p, from, to));
        }
    }
    shifts
}
