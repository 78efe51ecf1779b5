//! Local search for machine reassignment: shift and swap moves evaluated incrementally
//! (`State`), late-acceptance hill climbing, and ruin-and-recreate kicks from the best
//! assignment when the search stalls. Seeded, deterministic for a seed and an iteration
//! budget; anytime under an injected deadline.

use std::sync::Arc;

use berth_solver::Deadline;

use super::check::check;
use super::model::Model;
use super::state::State;
use crate::error::PlacementError;

/// How long and how to search.
#[derive(Clone)]
pub struct LnsOptions {
    /// Random seed.
    pub seed: u64,
    /// Stop after this many tried moves, feasible or not (deterministic budget).
    pub iterations: Option<u64>,
    /// Stop when it expires (checked every 256 moves).
    pub deadline: Option<Arc<dyn Deadline>>,
    /// Late-acceptance history length.
    pub history: usize,
}

impl Default for LnsOptions {
    fn default() -> Self {
        LnsOptions {
            seed: 1,
            iterations: None,
            deadline: None,
            history: 2_000,
        }
    }
}

/// What the search returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LnsOutcome {
    /// Machine per process: the best assignment found (feasible).
    pub assignment: Vec<usize>,
    /// Its objective.
    pub cost: i64,
    /// The initial assignment's objective.
    pub initial_cost: i64,
    /// Feasible moves evaluated.
    pub iterations: u64,
    /// Ruin-and-recreate kicks.
    pub kicks: u64,
}

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            usize::try_from(self.next() % n as u64).unwrap_or(0)
        }
    }
}

/// A candidate move: the processes it moves and where each was.
enum Move {
    /// Process, from, to.
    Shift(usize, usize, usize),
    /// Two processes exchanging machines: `p` was on `pf`, `q` on `qf`.
    Swap(usize, usize, usize, usize),
}

/// Tries a random feasible move; applies it and returns it, or `None` (nothing changed).
fn random_move(
    st: &mut State<'_>,
    model: &Model,
    by_nb: &[Vec<usize>],
    rng: &mut Rng,
) -> Option<Move> {
    let np = model.processes.len();
    let nm = model.machines.len();
    let p = rng.below(np);
    let from = st.machine_of(p);
    if rng.below(2) == 0 {
        // Shift, half the time within the process's neighborhood (dependencies stay met).
        let to = if by_nb.len() > 1 && rng.below(2) == 0 {
            let same = &by_nb[model.machines[from].neighborhood];
            same[rng.below(same.len())]
        } else {
            rng.below(nm)
        };
        if to == from || !st.fits(to, &[], &[p]) {
            return None;
        }
        st.shift(p, to);
        if st.holds_after(p, from) {
            return Some(Move::Shift(p, from, to));
        }
        st.shift(p, from);
        None
    } else {
        let q = rng.below(np);
        let to = st.machine_of(q);
        if to == from || model.processes[p].service == model.processes[q].service {
            return None;
        }
        if !st.fits(from, &[p], &[q]) || !st.fits(to, &[q], &[p]) {
            return None;
        }
        st.shift(p, to);
        st.shift(q, from);
        if st.holds_after(p, from) && st.holds_after(q, to) {
            return Some(Move::Swap(p, from, q, to));
        }
        st.shift(q, to);
        st.shift(p, from);
        None
    }
}

fn undo(st: &mut State<'_>, mv: &Move) {
    match *mv {
        Move::Shift(p, from, _) => st.shift(p, from),
        Move::Swap(p, pf, q, qf) => {
            st.shift(q, qf);
            st.shift(p, pf);
        }
    }
}

/// Improves `initial` (machine per process, which must be feasible) for `model`.
///
/// # Errors
/// [`PlacementError::RoadefInfeasible`] when the checker rejects `initial`.
pub fn improve(
    model: &Model,
    initial: &[usize],
    options: &LnsOptions,
) -> Result<LnsOutcome, PlacementError> {
    let verdict = check(model, initial, initial);
    if !verdict.feasible() {
        return Err(PlacementError::RoadefInfeasible {
            count: verdict.violations.len(),
            first: verdict
                .violations
                .first()
                .map_or_else(String::new, ToString::to_string),
        });
    }
    let mut by_nb = vec![Vec::new(); model.neighborhoods];
    for (m, mach) in model.machines.iter().enumerate() {
        by_nb[mach.neighborhood].push(m);
    }
    let mut st = State::new(model, initial);
    let mut rng = Rng(options.seed ^ 0x5EED_0FB3_A7A7);
    let initial_cost = st.total();
    let mut current = initial_cost;
    let mut best = initial_cost;
    let mut best_assignment: Vec<u32> = st.current.clone();
    // The current state is the best one and not yet saved in `best_assignment`.
    let mut unsaved = false;
    let history = options.history.max(1);
    let mut late = vec![current; history];
    let mut iterations = 0u64;
    let mut tries = 0u64;
    let mut since_best = 0u64;
    let mut kicks = 0u64;
    let stall = (model.processes.len() as u64).max(1000) * 200;
    loop {
        tries += 1;
        if tries.is_multiple_of(256) && options.deadline.as_ref().is_some_and(|d| d.expired()) {
            break;
        }
        if options.iterations.is_some_and(|n| tries > n) {
            break;
        }
        let Some(mv) = random_move(&mut st, model, &by_nb, &mut rng) else {
            continue;
        };
        iterations += 1;
        let cost = st.total();
        let slot = (iterations % history as u64) as usize;
        if cost <= current || cost <= late[slot] {
            if cost > current && unsaved {
                undo(&mut st, &mv);
                best_assignment.clone_from(&st.current);
                unsaved = false;
                redo(&mut st, &mv);
            }
            current = cost;
            if current < best {
                best = current;
                unsaved = true;
                since_best = 0;
            }
        } else {
            undo(&mut st, &mv);
        }
        late[slot] = current;
        since_best += 1;
        if since_best > stall {
            // Ruin and recreate: back to the best, then a burst of random feasible moves.
            if unsaved {
                best_assignment.clone_from(&st.current);
                unsaved = false;
            }
            restore(&mut st, &best_assignment);
            let burst = 2 + rng.below(model.processes.len().clamp(1, 50));
            for _ in 0..burst * 20 {
                let _ = random_move(&mut st, model, &by_nb, &mut rng);
            }
            current = st.total();
            late.fill(current);
            since_best = 0;
            kicks += 1;
        }
    }
    if unsaved {
        best_assignment.clone_from(&st.current);
    }
    Ok(LnsOutcome {
        assignment: best_assignment.iter().map(|&m| m as usize).collect(),
        cost: best,
        initial_cost,
        iterations,
        kicks,
    })
}

fn redo(st: &mut State<'_>, mv: &Move) {
    match *mv {
        Move::Shift(p, _, to) => st.shift(p, to),
        Move::Swap(p, pf, q, qf) => {
            st.shift(p, qf);
            st.shift(q, pf);
        }
    }
}

/// Puts every process on its machine in `target` (a feasible assignment). Intermediate states
/// may break constraints: the state's counts and terms do not depend on the path.
fn restore(st: &mut State<'_>, target: &[u32]) {
    for (p, &m) in target.iter().enumerate() {
        st.shift(p, m as usize);
    }
}
