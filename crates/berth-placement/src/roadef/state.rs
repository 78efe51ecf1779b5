//! The search's incremental state: usage, transient load, per-service location and
//! neighborhood counts, moved-process counts and the objective's terms, kept in step with
//! every shift so a move costs O(resources + balances), not O(processes).

use super::model::Model;

pub(super) struct State<'a> {
    model: &'a Model,
    nr: usize,
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

fn idx(v: usize) -> u32 {
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
                st.load[r] += st.over(m, r);
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
    #[cfg(test)]
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
        (self.usage[m * self.nr + r] - self.model.machines[m].safety_capacity[r]).max(0)
    }

    fn balance_of(&self, m: usize, b: usize) -> i64 {
        let bal = &self.model.balances[b];
        let mach = &self.model.machines[m];
        let a1 = mach.capacity[bal.resource1] - self.usage[m * self.nr + bal.resource1];
        let a2 = mach.capacity[bal.resource2] - self.usage[m * self.nr + bal.resource2];
        (bal.target * a1 - a2).max(0)
    }

    pub(super) fn total(&self) -> i64 {
        let m = self.model;
        self.machines_cost()
            + m.weight_process_move * self.process_move
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

    /// After `p` moved from `from`: conflict, spread and dependency hold for what the move
    /// touched (capacity is `fits`'s job, before the move).
    pub(super) fn holds_after(&self, p: usize, from: usize) -> bool {
        let model = self.model;
        let to = self.machine_of(p);
        let s = model.processes[p].service;
        if self.members[s]
            .iter()
            .any(|&q| q as usize != p && self.current[q as usize] as usize == to)
        {
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
            self.load[r] -= self.over(from, r) + self.over(to, r);
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
            self.load[r] += self.over(from, r) + self.over(to, r);
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
