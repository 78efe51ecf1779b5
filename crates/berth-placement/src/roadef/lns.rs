//! Local search for machine reassignment: random shift and swap moves evaluated
//! incrementally (`State`), with a share of best-of moves (the cheapest machine for a process,
//! the cheapest of 64 swaps), exact repacking of two machines (`pair`) and ejections (move a
//! process onto a roomy machine, then move others away); late-acceptance hill climbing;
//! ruin-and-recreate kicks from the best assignment when the search stalls. Half the moves
//! (and every ejection) start from a process on a machine drawn in proportion to its cost.
//! Seeded, deterministic for a seed and an iteration budget; anytime under an injected
//! deadline.

use std::sync::Arc;

use berth_solver::Deadline;

use super::check::check;
use super::model::Model;
use super::pair;
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
    /// Ruin and recreate from the best assignment after this many feasible moves without a
    /// new best.
    pub stall: u64,
}

impl Default for LnsOptions {
    fn default() -> Self {
        LnsOptions {
            seed: 1,
            iterations: None,
            deadline: None,
            history: 2_000,
            stall: 200_000,
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
    /// Moves tried, feasible or not.
    pub tried: u64,
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

/// Out of 256 moves, how many repack two machines exactly; the node budget of each and how
/// many of their processes each may move.
const PAIR_SHARE: usize = 16;
const PAIR_NODES: u64 = 5_000;
const PAIR_FREE: usize = 14;
/// Roomy partners are the roomiest of this many random machines.
const PAIR_PICK: usize = 2;

/// The shifts of the move being tried: (process, from, to), in order.
type Journal = Vec<(usize, usize, usize)>;

fn undo(st: &mut State<'_>, journal: &Journal) {
    for &(p, from, _) in journal.iter().rev() {
        st.shift(p, from);
    }
}

fn redo(st: &mut State<'_>, journal: &Journal) {
    for &(p, _, to) in journal {
        st.shift(p, to);
    }
}

/// What `random_move` did: nothing feasible, a compound move applied (recorded in the
/// journal), or a shift or swap proposed with its cost change, not applied: most moves are
/// refused, and a refused proposal costs no state update.
enum Move {
    None,
    Applied,
    Shift(usize, usize, i64),
    Swap(usize, usize, i64),
}

/// Applies a proposed move, recording it in `journal`.
fn apply(st: &mut State<'_>, journal: &mut Journal, mv: &Move) {
    match *mv {
        Move::Shift(p, to, _) => {
            journal.push((p, st.machine_of(p), to));
            st.shift(p, to);
        }
        Move::Swap(p, q, _) => {
            let (a, b) = (st.machine_of(p), st.machine_of(q));
            journal.push((p, a, b));
            journal.push((q, b, a));
            st.shift(p, b);
            st.shift(q, a);
        }
        Move::None | Move::Applied => {}
    }
}

/// `p` to `to` proposed, if feasible.
fn shift_move(st: &State<'_>, p: usize, to: usize) -> Move {
    st.shift_delta(p, to)
        .map_or(Move::None, |d| Move::Shift(p, to, d))
}

/// `p` and `q` exchanged, proposed, if feasible.
fn swap_move(st: &State<'_>, p: usize, q: usize) -> Move {
    st.swap_delta(p, q)
        .map_or(Move::None, |d| Move::Swap(p, q, d))
}

/// A process on a machine drawn in proportion to its load and balance cost (none when every
/// machine is free of cost or the drawn one is empty).
fn costly_process(st: &State<'_>, rng: &mut Rng) -> Option<usize> {
    let total = st.machines_cost();
    if total <= 0 {
        return None;
    }
    let x = i64::try_from(rng.next() % total.unsigned_abs()).unwrap_or(0);
    let here = st.on(st.machine_at(x));
    (!here.is_empty()).then(|| here[rng.below(here.len())] as usize)
}

/// Draws a random move: a shift or swap is proposed (state unchanged), a compound move is
/// applied and recorded in `journal` (left empty, the state unchanged, when infeasible).
fn random_move(
    st: &mut State<'_>,
    model: &Model,
    by_nb: &[Vec<usize>],
    rng: &mut Rng,
    journal: &mut Journal,
) -> Move {
    journal.clear();
    let np = model.processes.len();
    let nm = model.machines.len();
    // Half the time, a process on a machine drawn in proportion to its load and balance
    // cost: the costly machines (on a2_2 four machines without safety capacity hold half the
    // load cost, while every machine is overloaded somewhere) are worked on most.
    let mut p = rng.below(np);
    if rng.below(2) == 0 {
        p = costly_process(st, rng).unwrap_or(p);
    }
    let from = st.machine_of(p);
    let kind = rng.below(256);
    if kind < 8 {
        best_shift(st, model, p)
    } else if kind < 16 {
        best_swap(st, model, rng, p)
    } else if kind < 16 + PAIR_SHARE {
        // Both machines' processes split again, exactly: compound moves. Half the time with
        // the roomiest of a few machines, where load can go.
        let t = match rng.below(4) {
            0 => {
                let same = &by_nb[model.machines[from].neighborhood];
                same[rng.below(same.len())]
            }
            1 => rng.below(nm),
            _ => (0..PAIR_PICK)
                .map(|_| rng.below(nm))
                .max_by_key(|&m| st.slack(m))
                .unwrap_or(from),
        };
        if t != from {
            let mut free: Vec<usize> = st
                .on(from)
                .iter()
                .chain(st.on(t))
                .map(|&q| q as usize)
                .collect();
            // A random part of both machines when they hold too many for an exact split.
            while free.len() > PAIR_FREE {
                free.swap_remove(rng.below(free.len()));
            }
            if !free.contains(&p) {
                free[0] = p;
            }
            journal.extend(pair::repack(st, model, [from, t], &free, PAIR_NODES));
        }
        Move::Applied
    } else if kind < 128 {
        // Shift, half the time within the process's neighborhood (dependencies stay met).
        let to = if by_nb.len() > 1 && rng.below(2) == 0 {
            let same = &by_nb[model.machines[from].neighborhood];
            same[rng.below(same.len())]
        } else {
            rng.below(nm)
        };
        shift_move(st, p, to)
    } else if kind < 255 {
        let q = rng.below(np);
        swap_move(st, p, q)
    } else {
        // A process on a machine drawn by its cost: a lone oversized process (a2_1) is
        // then found too.
        p = costly_process(st, rng).unwrap_or(p);
        eject(st, model, rng, journal, p);
        Move::Applied
    }
}

/// The cheapest feasible swap of `p` with one of 64 random processes.
fn best_swap(st: &State<'_>, model: &Model, rng: &mut Rng, p: usize) -> Move {
    let mut best = Move::None;
    for _ in 0..64 {
        let q = rng.below(model.processes.len());
        if let Some(d) = st.swap_delta(p, q)
            && !matches!(best, Move::Swap(_, _, b) if b <= d)
        {
            best = Move::Swap(p, q, d);
        }
    }
    best
}

/// The cheapest feasible machine for `p` (all machines tried).
fn best_shift(st: &State<'_>, model: &Model, p: usize) -> Move {
    let mut best = Move::None;
    for t in 0..model.machines.len() {
        if let Some(d) = st.shift_delta(p, t)
            && !matches!(best, Move::Shift(_, _, b) if b <= d)
        {
            best = Move::Shift(p, t, d);
        }
    }
    best
}

/// Ruin and recreate around one process: move `p` onto a machine whose safety capacities hold
/// it, then move up to 32 of that machine's other processes away (each chosen for its share of
/// the most exceeded resource, each to the cheapest feasible machine, the one `p` left
/// included) until the machine keeps its capacities and, if it can, its safety capacities.
/// Only the target's capacity may be broken in between; all or nothing.
fn eject(st: &mut State<'_>, model: &Model, rng: &mut Rng, journal: &mut Journal, p: usize) {
    let nm = model.machines.len();
    let from = st.machine_of(p);
    let req = &model.processes[p].requirement;
    let roomy = |m: usize| {
        m != from
            && model.machines[m]
                .safety_capacity
                .iter()
                .zip(req)
                .all(|(s, q)| s >= q)
    };
    let Some(target) = (0..10).map(|_| rng.below(nm)).find(|&m| roomy(m)) else {
        return;
    };
    st.shift(p, target);
    journal.push((p, from, target));
    if !st.holds_after(p, from) {
        undo(st, journal);
        journal.clear();
        return;
    }
    let safety = &model.machines[target].safety_capacity;
    for _ in 0..32 {
        // The resource most above the safety capacity.
        let (excess, r) = (0..req.len())
            .map(|r| (st.usage(target, r) - safety[r], r))
            .max()
            .unwrap_or((0, 0));
        if excess <= 0 && st.fits(target, &[], &[]) {
            break;
        }
        let here: Vec<usize> = st
            .on(target)
            .iter()
            .map(|&q| q as usize)
            .filter(|&q| q != p)
            .collect();
        if here.is_empty() {
            break;
        }
        let q = (0..3)
            .map(|_| here[rng.below(here.len())])
            .max_by_key(|&q| model.processes[q].requirement[r])
            .unwrap_or(p);
        let mut best: Option<(i64, usize)> = None;
        for t in 0..nm {
            if let Some(c) = st.shift_delta(q, t)
                && best.is_none_or(|(b, _)| c < b)
            {
                best = Some((c, t));
            }
        }
        let Some((_, t)) = best else {
            break;
        };
        st.shift(q, t);
        journal.push((q, target, t));
    }
    if !st.fits(target, &[], &[]) {
        undo(st, journal);
        journal.clear();
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
    let mut journal = Journal::new();
    let stall = options.stall.max(1);
    loop {
        tries += 1;
        if tries.is_multiple_of(256) && options.deadline.as_ref().is_some_and(|d| d.expired()) {
            break;
        }
        if options.iterations.is_some_and(|n| tries > n) {
            break;
        }
        let mv = random_move(&mut st, model, &by_nb, &mut rng, &mut journal);
        let cost = match mv {
            Move::None => continue,
            Move::Applied if journal.is_empty() => continue,
            Move::Applied => st.total(),
            Move::Shift(_, _, d) | Move::Swap(_, _, d) => current + d,
        };
        iterations += 1;
        let slot = (iterations % history as u64) as usize;
        if cost <= current || cost <= late[slot] {
            if cost > current && unsaved {
                if matches!(mv, Move::Applied) {
                    undo(&mut st, &journal);
                }
                best_assignment.clone_from(&st.current);
                unsaved = false;
                if matches!(mv, Move::Applied) {
                    redo(&mut st, &journal);
                }
            }
            apply(&mut st, &mut journal, &mv);
            current = cost;
            if current < best {
                best = current;
                unsaved = true;
                since_best = 0;
            }
        } else if matches!(mv, Move::Applied) {
            undo(&mut st, &journal);
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
                let mv = random_move(&mut st, model, &by_nb, &mut rng, &mut journal);
                apply(&mut st, &mut journal, &mv);
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
        tried: tries,
        kicks,
    })
}

/// Puts every process on its machine in `target` (a feasible assignment). Intermediate states
/// may break constraints: the state's counts and terms do not depend on the path.
fn restore(st: &mut State<'_>, target: &[u32]) {
    for (p, &m) in target.iter().enumerate() {
        st.shift(p, m as usize);
    }
}
