//! The search's incremental state: usage, transient load, per-service location and
//! neighborhood counts, moved-process counts and the objective's terms, kept in step with
//! every shift so a move costs O(resources + balances), not O(processes); a shift's or swap's
//! cost change and feasibility are also computed without touching it (`shift_delta`,
//! `swap_delta`).

use super::model::Model;

pub(super) struct State<'a> {
    model: &'a Model,
    nr: usize,
    /// Whether each resource is transient.
    transient: Vec<bool>,
    nl: usize,
    nn: usize,
    pub(super) initial: Vec<u32>,
    pub(super) current: Vec<u32>,
    /// `machine * nr + resource`.
    usage: Vec<i64>,
    /// Transient resources: requirement of the processes moved away from the machine.
    gone: Vec<i64>,
    /// `service * locations + location`.
    loc_count: Vec<u32>,
    distinct: Vec<u32>,
    /// `service * neighborhoods + neighborhood`.
    nb_count: Vec<u32>,
    moved: Vec<u32>,
    /// `histogram[k]`: services with `k` moved processes (the service move cost is the largest
    /// `k` with a service).
    histogram: Vec<u32>,
    service_max: usize,
    load: Vec<i64>,
    /// Per resource, the room summed over machines ([`State::excess_and_room`]): kept here
    /// because the levelling pairs read every resource's total at each draw.
    room: Vec<i64>,
    balance: Vec<i64>,
    process_move: i64,
    machine_move: i64,
    pub(super) members: Vec<Vec<u32>>,
    dependents: Vec<Vec<u32>>,
    /// Processes on each machine (unordered) and each process's index in its machine's list.
    on: Vec<Vec<u32>>,
    slot: Vec<u32>,
    /// Load and balance cost of each machine, and a Fenwick tree over them (drawing a
    /// machine in proportion to its cost in O(log machines)).
    machine_cost: Vec<i64>,
    fenwick: Vec<i64>,
}

/// A process or machine index as the state stores it.
pub(super) fn idx(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl<'a> State<'a> {
    pub(super) fn new(model: &'a Model, initial: &[usize]) -> Self {
        let nr = model.resources.len();
        let (nm, ns) = (model.machines.len(), model.services.len());
        let mut members = vec![Vec::new(); ns];
        for (p, proc) in model.processes.iter().enumerate() {
            members[proc.service].push(idx(p));
        }
        let mut dependents = vec![Vec::new(); ns];
        for (s, svc) in model.services.iter().enumerate() {
            for &d in &svc.dependencies {
                dependents[d].push(idx(s));
            }
        }
        let largest = members.iter().map(Vec::len).max().unwrap_or(0);
        let mut histogram = vec![0; largest + 1];
        histogram[0] = idx(ns);
        let init: Vec<u32> = initial.iter().map(|&m| idx(m)).collect();
        let mut st = State {
            model,
            nr,
            transient: model.resources.iter().map(|r| r.transient).collect(),
            nl: model.locations,
            nn: model.neighborhoods,
            initial: init.clone(),
            current: init,
            usage: vec![0; nm * nr],
            gone: vec![0; nm * nr],
            loc_count: vec![0; ns * model.locations],
            distinct: vec![0; ns],
            nb_count: vec![0; ns * model.neighborhoods],
            moved: vec![0; ns],
            histogram,
            service_max: 0,
            load: vec![0; nr],
            room: vec![0; nr],
            balance: vec![0; model.balances.len()],
            process_move: 0,
            machine_move: 0,
            members,
            dependents,
            on: vec![Vec::new(); nm],
            slot: vec![0; model.processes.len()],
            machine_cost: vec![0; nm],
            fenwick: vec![0; nm + 1],
        };
        for (p, proc) in model.processes.iter().enumerate() {
            let m = initial[p];
            st.slot[p] = idx(st.on[m].len());
            st.on[m].push(idx(p));
            for r in 0..nr {
                st.usage[m * nr + r] += proc.requirement[r];
            }
            let (l, n) = (model.machines[m].location, model.machines[m].neighborhood);
            let s = proc.service;
            if st.loc_count[s * st.nl + l] == 0 {
                st.distinct[s] += 1;
            }
            st.loc_count[s * st.nl + l] += 1;
            st.nb_count[s * st.nn + n] += 1;
        }
        for m in 0..nm {
            for r in 0..nr {
                let (excess, room) = st.excess_and_room(m, r);
                st.load[r] += excess;
                st.room[r] += room;
            }
            for b in 0..model.balances.len() {
                st.balance[b] += st.balance_of(m, b);
            }
            st.recost(m);
        }
        st
    }

    /// Recomputes machine `m`'s load and balance cost and its Fenwick entry.
    fn recost(&mut self, m: usize) {
        let model = self.model;
        let load: i64 = model
            .resources
            .iter()
            .enumerate()
            .map(|(r, res)| res.weight_load_cost * self.over(m, r))
            .sum();
        let balance: i64 = model
            .balances
            .iter()
            .enumerate()
            .map(|(b, bal)| bal.weight * self.balance_of(m, b))
            .sum();
        let delta = load + balance - self.machine_cost[m];
        self.machine_cost[m] += delta;
        let mut i = m + 1;
        while i < self.fenwick.len() {
            self.fenwick[i] += delta;
            i += i & i.wrapping_neg();
        }
    }

    /// The machine whose cumulative cost range holds `x` (`0 <= x <` the sum of every
    /// machine's load and balance cost): a machine drawn in proportion to its cost.
    pub(super) fn machine_at(&self, mut x: i64) -> usize {
        let n = self.fenwick.len() - 1;
        let mut pos = 0;
        let mut step = n.next_power_of_two();
        while step > 0 {
            if pos + step <= n && self.fenwick[pos + step] <= x {
                pos += step;
                x -= self.fenwick[pos];
            }
            step >>= 1;
        }
        pos.min(n.saturating_sub(1))
    }

    /// Machine `m`'s load and balance cost as kept for drawing.
    pub(super) fn machine_cost(&self, m: usize) -> i64 {
        self.machine_cost[m]
    }

    /// The sum of every machine's load and balance cost.
    pub(super) fn machines_cost(&self) -> i64 {
        let m = self.model;
        m.resources
            .iter()
            .zip(&self.load)
            .map(|(r, l)| r.weight_load_cost * l)
            .sum::<i64>()
            + m.balances
                .iter()
                .zip(&self.balance)
                .map(|(b, c)| b.weight * c)
                .sum::<i64>()
    }

    fn over(&self, m: usize, r: usize) -> i64 {
        self.over_at(m, r, self.usage[m * self.nr + r])
    }

    fn balance_of(&self, m: usize, b: usize) -> i64 {
        self.balance_at(m, b, |r| self.usage[m * self.nr + r])
    }

    /// Machine `m`'s load over its safety capacity of resource `r` at usage `u`.
    fn over_at(&self, m: usize, r: usize, u: i64) -> i64 {
        (u - self.model.machines[m].safety_capacity[r]).max(0)
    }

    /// Machine `m`'s balance cost term `b` (unweighted) at the usage `usage` gives per resource.
    fn balance_at(&self, m: usize, b: usize, usage: impl Fn(usize) -> i64) -> i64 {
        let bal = &self.model.balances[b];
        let mach = &self.model.machines[m];
        let a1 = mach.capacity[bal.resource1] - usage(bal.resource1);
        let a2 = mach.capacity[bal.resource2] - usage(bal.resource2);
        (bal.target * a1 - a2).max(0)
    }

    pub(super) fn total(&self) -> i64 {
        self.machines_cost() + self.move_costs()
    }

    /// The process, service and machine move costs, weighted.
    pub(super) fn move_costs(&self) -> i64 {
        let m = self.model;
        m.weight_process_move * self.process_move
            + m.weight_service_move * i64::try_from(self.service_max).unwrap_or(i64::MAX)
            + m.weight_machine_move * self.machine_move
    }

    /// Room under the safety capacities of machine `m`, per mille of each summed.
    pub(super) fn slack(&self, m: usize) -> i64 {
        let sc = &self.model.machines[m].safety_capacity;
        (0..self.nr)
            .map(|r| (sc[r] - self.usage[m * self.nr + r]).max(0) * 1_000 / sc[r].max(1))
            .sum()
    }

    /// Machine `m`'s usage of resource `r` above its safety capacity, and the room it has
    /// below: what it can take before reaching either its safety capacity or, counting the
    /// transient usage it keeps for processes moved away, its capacity.
    pub(super) fn excess_and_room(&self, m: usize, r: usize) -> (i64, i64) {
        let mach = &self.model.machines[m];
        let u = self.usage[m * self.nr + r];
        let room =
            (mach.safety_capacity[r] - u).min(mach.capacity[r] - u - self.gone[m * self.nr + r]);
        (self.over_at(m, r, u), room.max(0))
    }

    /// Resource `r`'s usage above the safety capacities and room below them, each summed over
    /// the machines ([`State::excess_and_room`]).
    pub(super) fn excess_and_room_total(&self, r: usize) -> (i64, i64) {
        (self.load[r], self.room[r])
    }

    /// Usage of resource `r` on machine `m`.
    pub(super) fn usage(&self, m: usize, r: usize) -> i64 {
        self.usage[m * self.nr + r]
    }

    /// Transient usage machine `m` keeps for the processes moved away from it.
    pub(super) fn gone(&self, m: usize, r: usize) -> i64 {
        self.gone[m * self.nr + r]
    }

    /// The processes on machine `m`.
    pub(super) fn on(&self, m: usize) -> &[u32] {
        &self.on[m]
    }

    pub(super) fn machine_of(&self, p: usize) -> usize {
        self.current[p] as usize
    }

    /// Whether machine `m` keeps every capacity (transient ones included) once the processes
    /// `out` leave it and `inn` arrive.
    pub(super) fn fits(&self, m: usize, out: &[usize], inn: &[usize]) -> bool {
        let procs = &self.model.processes;
        let mach = &self.model.machines[m];
        for (r, res) in self.model.resources.iter().enumerate() {
            let mut u = self.usage[m * self.nr + r];
            let mut g = self.gone[m * self.nr + r];
            for &p in out {
                u -= procs[p].requirement[r];
                if self.initial[p] as usize == m {
                    g += procs[p].requirement[r];
                }
            }
            for &p in inn {
                u += procs[p].requirement[r];
                if self.initial[p] as usize == m {
                    g -= procs[p].requirement[r];
                }
            }
            if u > mach.capacity[r] || (res.transient && u + g > mach.capacity[r]) {
                return false;
            }
        }
        true
    }

    /// [`State::fits`] for one process, `inn`, arriving and at most one, `out`, leaving: the
    /// test every move evaluation starts with, on slices (a profile of shift evaluations had
    /// 60% of their time in the general one).
    fn fits_move(&self, m: usize, out: Option<usize>, inn: usize) -> bool {
        let nr = self.nr;
        let procs = &self.model.processes;
        let cap = &self.model.machines[m].capacity[..nr];
        let usage = &self.usage[m * nr..(m + 1) * nr];
        let gone = &self.gone[m * nr..(m + 1) * nr];
        let transient = &self.transient[..nr];
        let rin = &procs[inn].requirement[..nr];
        let in_home = self.initial[inn] as usize == m;
        let fits = |r: usize, u: i64, g: i64| u <= cap[r] && !(transient[r] && u + g > cap[r]);
        match out {
            None => (0..nr).all(|r| {
                let g = gone[r] - if in_home { rin[r] } else { 0 };
                fits(r, usage[r] + rin[r], g)
            }),
            Some(q) => {
                let rout = &procs[q].requirement[..nr];
                let out_home = self.initial[q] as usize == m;
                (0..nr).all(|r| {
                    let g = gone[r] - if in_home { rin[r] } else { 0 }
                        + if out_home { rout[r] } else { 0 };
                    fits(r, usage[r] + rin[r] - rout[r], g)
                })
            }
        }
    }

    /// After `p` moved from `from`: conflict, spread and dependency hold for what the move
    /// touched (capacity is `fits`'s job, before the move).
    pub(super) fn holds_after(&self, p: usize, from: usize) -> bool {
        let model = self.model;
        let to = self.machine_of(p);
        let s = model.processes[p].service;
        if self.conflict(s, p, to) {
            return false;
        }
        if (self.distinct[s] as usize) < model.services[s].spread_min {
            return false;
        }
        let nt = model.machines[to].neighborhood;
        if model.services[s]
            .dependencies
            .iter()
            .any(|&d| self.nb_count[d * self.nn + nt] == 0)
        {
            return false;
        }
        let nf = model.machines[from].neighborhood;
        if self.nb_count[s * self.nn + nf] == 0
            && self.dependents[s]
                .iter()
                .any(|&d| self.nb_count[d as usize * self.nn + nf] > 0)
        {
            return false;
        }
        true
    }

    /// Machine `m`'s load and balance cost once `out` leaves it and `inn` arrives, or `None`
    /// when `inn` arrives and that breaks a capacity (transient ones included); the state is
    /// not touched. A machine only losing a process is not checked: the ejection leaves a
    /// machine above its capacity while it moves processes away from it.
    fn cost_after(&self, m: usize, out: Option<usize>, inn: Option<usize>) -> Option<i64> {
        if let Some(p) = inn
            && !self.fits_move(m, out, p)
        {
            return None;
        }
        let model = self.model;
        let none: &[i64] = &[];
        let req = |p: Option<usize>| p.map_or(none, |p| &model.processes[p].requirement[..]);
        let (ro, ri) = (req(out), req(inn));
        let usage = &self.usage[m * self.nr..(m + 1) * self.nr];
        let after =
            |r: usize| usage[r] - ro.get(r).copied().unwrap_or(0) + ri.get(r).copied().unwrap_or(0);
        let mut cost = 0;
        for (r, res) in model.resources.iter().enumerate() {
            cost += res.weight_load_cost * self.over_at(m, r, after(r));
        }
        for (b, bal) in model.balances.iter().enumerate() {
            cost += bal.weight * self.balance_at(m, b, after);
        }
        Some(cost)
    }

    /// Whether a process of service `s` other than `p` runs on machine `m`.
    fn conflict(&self, s: usize, p: usize, m: usize) -> bool {
        self.members[s]
            .iter()
            .any(|&q| q as usize != p && self.current[q as usize] as usize == m)
    }

    /// Whether service `s` keeps its spread once one of its processes goes from location
    /// `lf` to `lt` (from a feasible state).
    fn spread_after(&self, s: usize, lf: usize, lt: usize) -> bool {
        if lf == lt {
            return true;
        }
        let mut d = self.distinct[s];
        if self.loc_count[s * self.nl + lf] == 1 {
            d -= 1;
        }
        if self.loc_count[s * self.nl + lt] == 0 {
            d += 1;
        }
        d as usize >= self.model.services[s].spread_min
    }

    /// Whether the dependencies hold once, for each `(service, from, to)` of `moves`, one
    /// process of the service goes from neighborhood `from` to `to` (from a feasible state:
    /// only a service arriving somewhere or one leaving it can break them).
    fn dependencies_after(&self, moves: &[(usize, usize, usize)]) -> bool {
        let after = |x: usize, n: usize| {
            let mut c = i64::from(self.nb_count[x * self.nn + n]);
            for &(y, nf, nt) in moves {
                if y == x {
                    c += i64::from(nt == n) - i64::from(nf == n);
                }
            }
            c
        };
        moves.iter().all(|&(s, nf, nt)| {
            nf == nt
                || (self.model.services[s]
                    .dependencies
                    .iter()
                    .all(|&d| after(d, nt) > 0)
                    && (after(s, nf) > 0
                        || self.dependents[s]
                            .iter()
                            .all(|&d| after(d as usize, nf) == 0)))
        })
    }

    /// The largest number of moved processes in one service once, for each `(old, new)` of
    /// `changes`, one service (each a different one) goes from `old` moved processes to `new`.
    fn service_max_after(&self, changes: &[(usize, usize)]) -> usize {
        let sm = self.service_max;
        let mut left = i64::from(self.histogram[sm]);
        for &(old, new) in changes {
            left += i64::from(new == sm) - i64::from(old == sm);
        }
        // Counts move by one: when the top bucket empties, the one below holds its services.
        let base = if left > 0 { sm } else { sm.saturating_sub(1) };
        changes.iter().map(|&(_, new)| new).fold(base, usize::max)
    }

    /// The change of the weighted process and machine move costs if `p` went from `from` to
    /// `to`, and its service's moved-process count before and after.
    fn move_terms(&self, p: usize, from: usize, to: usize) -> (i64, (usize, usize)) {
        let model = self.model;
        let proc = &model.processes[p];
        let o = self.initial[p] as usize;
        let (was, now) = (from != o, to != o);
        let k = self.moved[proc.service] as usize;
        let nk = k + usize::from(now) - usize::from(was);
        let cost = model.weight_process_move * proc.move_cost * (i64::from(now) - i64::from(was))
            + model.weight_machine_move
                * (model.machine_move_cost(o, to) - model.machine_move_cost(o, from));
        (cost, (k, nk))
    }

    /// `sm - service_max`, as a cost factor.
    fn service_step(&self, sm: usize) -> i64 {
        let wide = |k: usize| i64::try_from(k).unwrap_or(i64::MAX);
        wide(sm) - wide(self.service_max)
    }

    /// The change of `total()` if `p` moved to `to`, or `None` if that breaks a hard
    /// constraint; the state is not touched. O(resources + balances + the service's size).
    /// The machine `p` leaves is not checked for capacity (it only loses usage).
    pub(super) fn shift_delta(&self, p: usize, to: usize) -> Option<i64> {
        let model = self.model;
        let from = self.machine_of(p);
        if from == to {
            return None;
        }
        let cost_to = self.cost_after(to, None, Some(p))?;
        let s = model.processes[p].service;
        let (mf, mt) = (&model.machines[from], &model.machines[to]);
        if self.conflict(s, p, to)
            || !self.spread_after(s, mf.location, mt.location)
            || !self.dependencies_after(&[(s, mf.neighborhood, mt.neighborhood)])
        {
            return None;
        }
        let cost_from = self.cost_after(from, Some(p), None)?;
        let (moves, change) = self.move_terms(p, from, to);
        let sm = self.service_max_after(&[change]);
        Some(
            cost_to - self.machine_cost[to] + cost_from - self.machine_cost[from]
                + moves
                + model.weight_service_move * self.service_step(sm),
        )
    }

    /// The change of `total()` if `p` and `q` exchanged machines, or `None` if that breaks a
    /// hard constraint (or they share a machine or a service); the state is not touched.
    pub(super) fn swap_delta(&self, p: usize, q: usize) -> Option<i64> {
        let model = self.model;
        let (a, b) = (self.machine_of(p), self.machine_of(q));
        let (s, t) = (model.processes[p].service, model.processes[q].service);
        if a == b || s == t {
            return None;
        }
        let cost_a = self.cost_after(a, Some(p), Some(q))?;
        let cost_b = self.cost_after(b, Some(q), Some(p))?;
        let (ma, mb) = (&model.machines[a], &model.machines[b]);
        if self.conflict(s, p, b)
            || self.conflict(t, q, a)
            || !self.spread_after(s, ma.location, mb.location)
            || !self.spread_after(t, mb.location, ma.location)
            || !self.dependencies_after(&[
                (s, ma.neighborhood, mb.neighborhood),
                (t, mb.neighborhood, ma.neighborhood),
            ])
        {
            return None;
        }
        let (mp, cp) = self.move_terms(p, a, b);
        let (mq, cq) = self.move_terms(q, b, a);
        let sm = self.service_max_after(&[cp, cq]);
        Some(
            cost_a - self.machine_cost[a] + cost_b - self.machine_cost[b]
                + mp
                + mq
                + model.weight_service_move * self.service_step(sm),
        )
    }

    /// Moves `p` to `to`, unconditionally, keeping every count and term in step.
    pub(super) fn shift(&mut self, p: usize, to: usize) {
        let from = self.machine_of(p);
        if from == to {
            return;
        }
        let model = self.model;
        let nr = self.nr;
        let proc = &model.processes[p];
        let o = self.initial[p] as usize;
        for r in 0..nr {
            let ((ef, rf), (et, rt)) = (self.excess_and_room(from, r), self.excess_and_room(to, r));
            self.load[r] -= ef + et;
            self.room[r] -= rf + rt;
        }
        for b in 0..model.balances.len() {
            self.balance[b] -= self.balance_of(from, b) + self.balance_of(to, b);
        }
        for (r, res) in model.resources.iter().enumerate() {
            let q = proc.requirement[r];
            self.usage[from * nr + r] -= q;
            self.usage[to * nr + r] += q;
            if res.transient {
                if from == o {
                    self.gone[from * nr + r] += q;
                }
                if to == o {
                    self.gone[to * nr + r] -= q;
                }
            }
        }
        for r in 0..nr {
            let ((ef, rf), (et, rt)) = (self.excess_and_room(from, r), self.excess_and_room(to, r));
            self.load[r] += ef + et;
            self.room[r] += rf + rt;
        }
        for b in 0..model.balances.len() {
            self.balance[b] += self.balance_of(from, b) + self.balance_of(to, b);
        }
        self.recost(from);
        self.recost(to);
        let s = proc.service;
        let (was, now) = (from != o, to != o);
        if was != now {
            let k = self.moved[s] as usize;
            self.histogram[k] -= 1;
            if now {
                self.process_move += proc.move_cost;
                self.moved[s] += 1;
                self.service_max = self.service_max.max(k + 1);
            } else {
                self.process_move -= proc.move_cost;
                self.moved[s] -= 1;
                if k == self.service_max && self.histogram[k] == 0 {
                    self.service_max = k - 1;
                }
            }
            self.histogram[self.moved[s] as usize] += 1;
        }
        self.machine_move += model.machine_move_cost(o, to) - model.machine_move_cost(o, from);
        let (lf, lt) = (model.machines[from].location, model.machines[to].location);
        if lf != lt {
            let c = &mut self.loc_count[s * self.nl + lf];
            *c -= 1;
            if *c == 0 {
                self.distinct[s] -= 1;
            }
            let c = &mut self.loc_count[s * self.nl + lt];
            if *c == 0 {
                self.distinct[s] += 1;
            }
            *c += 1;
        }
        let (nf, nt) = (
            model.machines[from].neighborhood,
            model.machines[to].neighborhood,
        );
        if nf != nt {
            self.nb_count[s * self.nn + nf] -= 1;
            self.nb_count[s * self.nn + nt] += 1;
        }
        let k = self.slot[p] as usize;
        self.on[from].swap_remove(k);
        if let Some(&moved) = self.on[from].get(k) {
            self.slot[moved as usize] = idx(k);
        }
        self.slot[p] = idx(self.on[to].len());
        self.on[to].push(idx(p));
        self.current[p] = idx(to);
    }
}
