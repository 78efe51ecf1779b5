//! Large-neighbourhood rounds around the incumbent: between the search's own nodes on one
//! thread, on the second thread of a shared search.

use super::options::StopReason;
use super::threads::{Pool, Shared};
use super::{Engine, RunConfig};
use crate::Value;
use crate::lns::Neighbourhoods;
use crate::state::State;

/// Neighbourhood rounds run by the main search between its own nodes: an engine of their
/// own (from a copy of the root state), the neighbourhood choice and the schedule.
pub(super) struct Improver<'p> {
    pub(super) engine: Option<Engine<'p>>,
    root: State,
    nb: Neighbourhoods,
    /// The main search's node count at which the next phase starts, and the phase length.
    pub(super) next_at: u64,
    pub(super) gap: u64,
    /// The lower bound at the root (the main search's bound before any branching).
    root_lb: f64,
    /// Rounds run.
    rounds: u64,
    /// Rounds run beside a shared search (see [`Engine::run_beside`]): their nodes, those
    /// nodes when the last one improved the plan, and whether they went stale (they then
    /// run between the second thread's nodes).
    beside_nodes: u64,
    beside_gain: u64,
    pub(super) beside_stale: bool,
}

/// Round nodes per main-search node in a phase, from the gap between the incumbent and the
/// root bound (in percent, squared, from 1 to 64). At 1 the rounds get about a fifth of the
/// time (a round node costs a quarter of a main-search node): right while the gap is small
/// and the main search may prove (40×500: 0.25%). Past a few percent it will not prove in
/// reasonable time (60×800: 7%), and only the rounds improve the plan. The LP bound is so
/// much tighter that its gaps count four times: 0.07% on 60×800 and 0.15% on 40×500, which
/// it proves, but 2.3% on 100×1000, which it does not.
fn round_share(cost: f64, root_lb: f64, lp: bool) -> u64 {
    if !cost.is_finite() || !root_lb.is_finite() {
        return 1;
    }
    let scale = if lp { 4.0 } else { 1.0 };
    let pct = scale * 100.0 * (cost - root_lb).max(0.0) / cost.abs().max(1.0);
    (pct * pct).clamp(1.0, 64.0) as u64
}

/// Values left at the root from which `early_rounds` runs: 60×800 has 21 000, 100×1000
/// 44 000; 40×500 (8 400) proves in under a second and is better off without.
const EARLY_MIN_VALUES: u64 = 15_000;

/// Node budget of one neighbourhood round: many short rounds beat fewer long ones on
/// 60×800 and 100×1000 (150 against 500: plans 0.07% and 0.3% cheaper on average at 10 s,
/// four seeds).
const ROUND_NODES: u64 = 150;

/// Round nodes in vain after which the rounds beside a shared search go back to running
/// between search nodes (see [`Engine::run_beside`]).
const STALE_BESIDE: u64 = 5_000;

impl<'p> Engine<'p> {
    /// From now on (after root propagation and seeding), interleaves large-neighbourhood
    /// rounds around the incumbent with this search (one thread), the first phase after
    /// `first_gap` nodes. Only for the main search of one optimum.
    pub(crate) fn improve(&mut self, seed: u64, first_gap: u64) {
        let nb = self.neighbourhoods(seed);
        if nb.is_empty() || self.k != 1 || !self.with_objective {
            return;
        }
        let root_lb = self.lower_bound();
        self.improver = Some(Box::new(Improver {
            engine: None,
            root: self.st.clone(),
            nb,
            next_at: self.stats.nodes + first_gap,
            gap: first_gap.max(1),
            root_lb,
            rounds: 0,
            beside_nodes: 0,
            beside_gain: 0,
            beside_stale: false,
        }));
    }

    /// An engine for neighbourhood rounds: same configuration, this engine's root state and
    /// relaxation, no symmetry ordering (rounds only look for cheaper plans).
    pub(crate) fn round_engine(&self, root: State) -> Engine<'p> {
        let cfg = RunConfig {
            first_only: false,
            k: 1,
            node_limit: None,
            ..self.cfg
        };
        let mut e = Engine::new(self.p, self.obj, &cfg);
        e.resume(root);
        e.lag = self.lag.clone();
        e
    }

    /// One large-neighbourhood round on this root-propagated engine: every variable outside
    /// `free` fixed to its `incumbent` value, the others searched for a plan cheaper than
    /// `cost` within `budget` nodes. The best plan found, and whether the neighbourhood was
    /// searched to the end.
    fn round(
        &mut self,
        incumbent: &[Value],
        cost: f64,
        free: &[bool],
        budget: u64,
    ) -> (Option<(f64, Vec<Value>)>, bool) {
        let mark = self.st.mark();
        self.found.clear();
        self.cap = cost;
        self.stats.stopped = None;
        self.node_limit = Some(self.stats.nodes + budget);
        let mut ok = true;
        for (x, v) in incumbent.iter().enumerate() {
            if free.get(x) == Some(&true) {
                continue;
            }
            if self.st.assign(x as u32, v.0).is_err() || self.run_queue().is_err() {
                ok = false;
                break;
            }
        }
        if ok {
            self.dfs(0);
        }
        self.st.undo_to(mark);
        self.st.clear_events();
        let best = self
            .found
            .first()
            .map(|f| (f.cost, f.solution.values.clone()));
        (best, ok && self.stats.stopped.is_none())
    }

    /// A round on this round engine around `incumbent` (costing `cost`), in the next
    /// neighbourhood of `nb`, which hears how it went: the cheaper plan found, if any, and
    /// the nodes it ran.
    fn round_around(
        &mut self,
        nb: &mut Neighbourhoods,
        incumbent: &[Value],
        cost: f64,
    ) -> (Option<(f64, Vec<Value>)>, u64) {
        let free = nb.pick(incumbent);
        let before = self.stats.nodes;
        let (plan, completed) = self.round(incumbent, cost, &free, nb.budget(ROUND_NODES));
        nb.feedback(plan.is_some(), completed);
        (plan, self.stats.nodes - before)
    }

    /// A phase of neighbourhood rounds, when the schedule says so.
    pub(super) fn improve_phase(&mut self) {
        let Some(mut imp) = self.improver.take() else {
            return;
        };
        if self.stats.nodes < imp.next_at {
            self.improver = Some(imp);
            return;
        }
        let mut engine = self.engine_of(&mut imp);
        let share = self
            .found
            .first()
            .map_or(1, |f| round_share(f.cost, imp.root_lb, self.node_lp_on));
        imp.rounds += self.run_rounds(&mut engine, &mut imp.nb, imp.gap.saturating_mul(share));
        imp.gap = imp.gap.saturating_mul(2);
        imp.next_at = self.stats.nodes + imp.gap;
        imp.engine = Some(engine);
        self.improver = Some(imp);
    }

    /// Rounds around this search's incumbent on `engine` for about `nodes` nodes (counted
    /// against this search's node limit), each better plan seeded here. Returns the rounds run.
    fn run_rounds(&mut self, engine: &mut Engine<'p>, nb: &mut Neighbourhoods, nodes: u64) -> u64 {
        let end = engine.stats.nodes + nodes;
        let mut rounds = 0;
        while engine.stats.nodes < end {
            let Some((cost, inc)) = self
                .found
                .first()
                .map(|f| (f.cost, f.solution.values.clone()))
            else {
                break;
            };
            let (plan, ran) = engine.round_around(nb, &inc, cost);
            // Round nodes count against the node limit like the search's own.
            self.stats.nodes += ran;
            rounds += 1;
            if let Some((_, values)) = plan {
                self.seed(values);
            }
            if engine.stats.stopped == Some(StopReason::Deadline)
                || self.node_limit.is_some_and(|l| self.stats.nodes >= l)
            {
                break;
            }
        }
        rounds
    }

    /// At the root of a large problem (at least `EARLY_MIN_VALUES` values left), before the
    /// component searches on the Lagrangian costs (2-3 s on 100×1000): `nodes` nodes of
    /// rounds when the incumbent is far above the bound (`round_share` at least 4), so a
    /// short deadline still gets a good plan. True if it ran.
    pub(crate) fn early_rounds(&mut self, seed: u64, nodes: u64) -> bool {
        let Some(cost) = self.found.first().map(|f| f.cost) else {
            return false;
        };
        let values = self.st.values_left();
        if self.k != 1
            || !self.with_objective
            || values < EARLY_MIN_VALUES
            || round_share(cost, self.lower_bound(), self.node_lp_on) < 4
        {
            return false;
        }
        let mut nb = self.neighbourhoods(seed);
        if nb.is_empty() {
            return false;
        }
        let mut engine = self.round_engine(self.st.clone());
        self.run_rounds(&mut engine, &mut nb, nodes);
        true
    }

    /// Neighbourhoods around this engine's root, guided by the relaxation's adjusted costs
    /// when there is one (see [`Neighbourhoods::guide`]).
    fn neighbourhoods(&self, seed: u64) -> Neighbourhoods {
        let sizes: Vec<u32> = (0..self.st.vars() as u32)
            .map(|x| self.st.size(x))
            .collect();
        let mut nb = Neighbourhoods::new(self.p, self.obj, &sizes, seed);
        if let Some(lag) = &self.lag {
            nb.guide(|x| lag.order(x));
        }
        nb
    }

    /// The neighbourhood rounds, taken from this search for its second thread (see
    /// [`Engine::run_beside`]).
    pub(super) fn rounds_beside(&mut self) -> Option<(Box<Improver<'p>>, Engine<'p>)> {
        let mut imp = self.improver.take()?;
        let engine = self.engine_of(&mut imp);
        Some((imp, engine))
    }

    /// The improver's round engine, or a new one on its root.
    fn engine_of(&self, imp: &mut Improver<'p>) -> Engine<'p> {
        imp.engine
            .take()
            .unwrap_or_else(|| self.round_engine(imp.root.clone()))
    }

    /// Neighbourhood rounds around the shared plan on the second thread of a shared search
    /// (at least one), each cheaper plan offered to the others; then this thread joins the
    /// search. They end when every other thread waits for work, at the deadline, or once
    /// they have run more nodes in vain than [`STALE_BESIDE`] and than they needed for their
    /// last gain; from then on they run between this thread's nodes, on the schedule one
    /// thread keeps (see [`Engine::improve`]). So the rounds find plans while the other
    /// thread proves: on h60x800-s6 the rounds find the optimum in 60 ms, and proving it
    /// takes seconds (h60x800-s5 on two threads, median of five: 4.7 s to 3.2 s).
    pub(super) fn run_beside(
        &mut self,
        (imp, engine): &mut (Box<Improver<'p>>, Engine<'p>),
        shared: &Shared,
        pool: &Pool,
    ) {
        loop {
            if self.deadline.is_some_and(|d| d.expired()) {
                return;
            }
            let Some((cost, inc)) = shared.get() else {
                return;
            };
            let (plan, ran) = engine.round_around(&mut imp.nb, &inc, cost);
            self.stats.nodes += ran;
            imp.beside_nodes += ran;
            imp.rounds += 1;
            if let Some((c, values)) = plan {
                shared.offer(c, &values);
                imp.beside_gain = imp.beside_nodes;
            }
            imp.beside_stale =
                imp.beside_nodes - imp.beside_gain > STALE_BESIDE.max(imp.beside_gain);
            if imp.beside_stale || pool.all_wait_but_one() {
                return;
            }
        }
    }

    /// Neighbourhood rounds run by this search so far.
    #[cfg(test)]
    pub(crate) fn improve_rounds(&self) -> u64 {
        self.improver.as_ref().map_or(0, |i| i.rounds)
    }
}
