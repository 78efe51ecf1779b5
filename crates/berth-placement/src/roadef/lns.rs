//! Local search for machine reassignment: random shift and swap moves evaluated
//! incrementally (`State`), with a share of best-of moves (the cheapest machine for a process,
//! the cheapest of 64 swaps), exact repacking of two machines (`pair`; some of the pairs a
//! machine above a safety capacity and one with room below it) and ejections (move a
//! process onto a roomy machine, then move others away), home moves (a moved process back to
//! its original machine, by a shift, a swap or an ejection there; more of them as the move
//! costs' share of the objective grows); late-acceptance hill climbing, its history sized
//! to the run's budget (a longer run settles later and lower); ruin-and-recreate kicks from
//! the best assignment when the search stalls; a closing descent over every shift and swap
//! from the best (the polish) in the run's last fiftieth. Half the moves (and every
//! ejection) start from a process on a machine drawn in proportion to its cost. Where a
//! resource is transient, big processes move first: the moves start from (and swap with)
//! the biggest twentieth of the processes at first, all of them by half the run (`Pool`).
//! Where no resource is transient and some have room in total while others have none, the
//! first three tenths of a run from the initial assignment weight the load of those with
//! room three times (`room_first`). Seeded,
//! deterministic for a seed and an iteration budget; anytime under an injected deadline.
//! Several such searches may run at once, one per thread, sharing nothing; the cheapest
//! result wins.

use std::sync::Arc;

use berth_solver::Deadline;

use super::check::check;
use super::model::Model;
use super::pair;
use super::state::{State, idx};
use crate::error::PlacementError;

/// How long and how to search.
#[derive(Clone)]
pub struct LnsOptions {
    /// Random seed.
    pub seed: u64,
    /// Stop after this many tried moves, feasible or not (deterministic budget), per search;
    /// the last fiftieth of them are the closing descent's evaluations.
    pub iterations: Option<u64>,
    /// Stop when it expires (checked every 256 moves); when it tells the time left, the last
    /// fiftieth of the run is the closing descent's.
    pub deadline: Option<Arc<dyn Deadline>>,
    /// Late-acceptance history length; `None` sizes it to the run's budget (see
    /// [`history_for`]): the move budget when there is one, else the moves the deadline leaves
    /// room for, estimated from the first million tries.
    pub history: Option<usize>,
    /// Ruin and recreate from the best assignment after this many feasible moves without a
    /// new best; `None` is 100 times the history.
    pub stall: Option<u64>,
    /// Where the search starts: a feasible assignment (machine per process), an earlier run's
    /// answer say, so a run can go on from where another stopped; `None` starts from the
    /// initial assignment. The move costs count from the initial assignment either way.
    pub start: Option<Vec<usize>>,
    /// Independent searches run at once, one per thread, each with its own seed (the first
    /// with `seed` itself, so it retraces the one-thread search); the cheapest result wins.
    pub threads: usize,
}

impl Default for LnsOptions {
    fn default() -> Self {
        LnsOptions {
            seed: 1,
            iterations: None,
            deadline: None,
            history: None,
            stall: None,
            start: None,
            threads: 1,
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
    /// The objective of the assignment the search started from ([`LnsOptions::start`]; the
    /// initial one's without it).
    pub start_cost: i64,
    /// Feasible moves evaluated (over every search).
    pub iterations: u64,
    /// Moves tried, feasible or not (over every search).
    pub tried: u64,
    /// Ruin-and-recreate kicks (over every search).
    pub kicks: u64,
    /// Which search found `assignment` (0 to `threads - 1`).
    pub thread: usize,
    /// The late-acceptance history that search ended with.
    pub history: usize,
    /// How much that search's closing descent ([`polish`]) lowered its best cost.
    pub polished: i64,
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

/// Out of 256 moves, how many repack a machine above its safety capacity of a resource with
/// one that has room below it ([`levelling_pair`]).
const LEVEL_SHARE: usize = 8;

/// Out of 256 moves, how many send a moved process back to its original machine: at least
/// the first, and up to their sum as the move costs' share of the objective grows (they are
/// all that is left on a2_1 once its load cost is gone; there random shifts only add moves).
const HOME_SHARE: [usize; 2] = [8, 88];
/// The least share when some resource is transient: a process that moved keeps its transient
/// usage on its original machine, and on tight instances (a2_2: 40 of 100 machines at 99% of
/// a transient capacity, two fifths of the safety capacity left free there unusable) the
/// search traps itself in its own moves unless they are undone often. 64 beat 40 at 80 M
/// tries (a2_2, seeds 1–3) but not at 24 M or at 140 M (a 300 s search's tries), so 40 stays;
/// 8, 16, 96 and 128 lost on a2_2.
const HOME_SHARE_TRANSIENT: usize = 40;

fn home_share(st: &State<'_>, model: &Model) -> usize {
    let least = if model.resources.iter().any(|r| r.transient) {
        HOME_SHARE_TRANSIENT
    } else {
        HOME_SHARE[0]
    };
    let moves = st.move_costs();
    let total = st.machines_cost() + moves;
    if total <= 0 || moves <= 0 {
        return least;
    }
    let more = i128::from(moves) * HOME_SHARE[1] as i128 / i128::from(total);
    least + usize::try_from(more).unwrap_or(0)
}

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

impl Move {
    /// A proposal's cost change.
    fn delta(&self) -> Option<i64> {
        match *self {
            Move::Shift(_, _, d) | Move::Swap(_, _, d) => Some(d),
            Move::None | Move::Applied => None,
        }
    }
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

/// The processes the moves start from: the biggest first, more as the run goes on.
struct Pool {
    /// Processes by size (each requirement as a share of the resource's total capacity,
    /// summed), biggest first.
    order: Vec<usize>,
    /// Each process's place in `order`.
    rank: Vec<usize>,
    /// How many of `order` the moves draw from now.
    len: usize,
    /// Whether it grows at all: only when some resource is transient; otherwise it holds
    /// every process from the start.
    grows: bool,
}

/// The share of the processes the pool starts with, and the share of the run (its move
/// budget, or the time a deadline gives) after which it holds them all, growing evenly in
/// between. Big processes placed first while the machines still have room for them: on
/// a2_2 small moves made first use up the transient room and the search cannot move the
/// big ones later (300 s, seed 1, one thread: 752.2 M against 778.9 M). Without transient
/// resources there is no such room to lose, and on a2_5 the pool cost up to 7.7%.
const POOL_FIRST: f64 = 0.05;
const POOL_GROWN: f64 = 0.5;

impl Pool {
    fn new(model: &Model) -> Self {
        let np = model.processes.len();
        let totals: Vec<f64> = (0..model.resources.len())
            .map(|r| {
                let total: i64 = model.machines.iter().map(|m| m.capacity[r]).sum();
                total.max(1) as f64
            })
            .collect();
        let size = |p: usize| -> f64 {
            let req = &model.processes[p].requirement;
            totals.iter().zip(req).map(|(t, &q)| q as f64 / t).sum()
        };
        let sizes: Vec<f64> = (0..np).map(size).collect();
        let mut order: Vec<usize> = (0..np).collect();
        order.sort_by(|&a, &b| sizes[b].total_cmp(&sizes[a]).then(a.cmp(&b)));
        let mut rank = vec![0; np];
        for (k, &p) in order.iter().enumerate() {
            rank[p] = k;
        }
        Pool {
            order,
            rank,
            len: np,
            grows: model.resources.iter().any(|r| r.transient),
        }
    }

    /// Sizes the pool for a run of which `spent` (0 to 1) is gone.
    fn grow(&mut self, spent: f64) {
        if self.grows {
            self.len = pool_len(self.order.len(), spent);
        }
    }

    fn draw(&self, rng: &mut Rng) -> usize {
        self.order[rng.below(self.len)]
    }

    fn holds(&self, p: usize) -> bool {
        self.rank[p] < self.len
    }
}

/// How many of `np` processes (the biggest) the moves draw from once `spent` of the run is
/// gone.
fn pool_len(np: usize, spent: f64) -> usize {
    let share = POOL_FIRST + (1.0 - POOL_FIRST) * (spent / POOL_GROWN).clamp(0.0, 1.0);
    ((np as f64 * share).ceil() as usize).clamp(np.min(1), np)
}

/// Draws a random move: a shift or swap is proposed (state unchanged), a compound move is
/// applied and recorded in `journal` (left empty, the state unchanged, when infeasible).
/// The processes it starts from, and a swap's partner, are the pool's.
fn random_move(
    st: &mut State<'_>,
    model: &Model,
    by_nb: &[Vec<usize>],
    pool: &Pool,
    rng: &mut Rng,
    journal: &mut Journal,
) -> Move {
    journal.clear();
    let nm = model.machines.len();
    // Half the time, a process on a machine drawn in proportion to its load and balance
    // cost: the costly machines (on a2_2 four machines without safety capacity hold half the
    // load cost, while every machine is overloaded somewhere) are worked on most.
    let mut p = pool.draw(rng);
    if rng.below(2) == 0 {
        p = costly_process(st, rng)
            .filter(|&c| pool.holds(c))
            .unwrap_or(p);
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
            repack(st, model, rng, journal, [from, t], Some(p));
        }
        Move::Applied
    } else if kind < 16 + PAIR_SHARE + LEVEL_SHARE {
        // Only the excess that some machine has room for is load cost a move can remove (on
        // a2_5 ten of twelve resources are over their total safety capacity): such pairs are
        // where repacking pays.
        if let Some(pair) = levelling_pair(st, model, rng) {
            repack(st, model, rng, journal, pair, None);
        }
        Move::Applied
    } else if kind < 16 + PAIR_SHARE + LEVEL_SHARE + home_share(st, model) {
        home_move(st, model, rng, journal)
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
        let q = pool.draw(rng);
        swap_move(st, p, q)
    } else {
        // A process on a machine drawn by its cost: a lone oversized process (a2_1) is
        // then found too.
        p = costly_process(st, rng)
            .filter(|&c| pool.holds(c))
            .unwrap_or(p);
        eject(st, model, rng, journal, p);
        Move::Applied
    }
}

/// Both machines' processes split again exactly ([`pair::repack`]), a random part of them
/// when they hold too many (`p`, if given, always among them).
fn repack(
    st: &mut State<'_>,
    model: &Model,
    rng: &mut Rng,
    journal: &mut Journal,
    machines: [usize; 2],
    p: Option<usize>,
) {
    let mut free: Vec<usize> = st
        .on(machines[0])
        .iter()
        .chain(st.on(machines[1]))
        .map(|&q| q as usize)
        .collect();
    while free.len() > PAIR_FREE {
        free.swap_remove(rng.below(free.len()));
    }
    if let Some(p) = p
        && !free.contains(&p)
    {
        free[0] = p;
    }
    journal.extend(pair::repack(st, model, machines, &free, PAIR_NODES));
}

/// A machine above its safety capacity of some resource and one with room below it (see
/// [`State::excess_and_room`]), or `None` when no resource has both. The resource is drawn in
/// proportion to the load cost such pairs could remove (its weight times the smaller of the
/// total excess and the total room), each machine in proportion to its excess or its room.
fn levelling_pair(st: &State<'_>, model: &Model, rng: &mut Rng) -> Option<[usize; 2]> {
    let nm = model.machines.len();
    let removable: Vec<i64> = model
        .resources
        .iter()
        .enumerate()
        .map(|(r, res)| {
            let (excess, room) = st.excess_and_room_total(r);
            res.weight_load_cost.saturating_mul(excess.min(room))
        })
        .collect();
    let r = draw(rng, &removable)?;
    let side = |rng: &mut Rng, room: bool| {
        let weights: Vec<i64> = (0..nm)
            .map(|m| {
                let (excess, space) = st.excess_and_room(m, r);
                if room { space } else { excess }
            })
            .collect();
        draw(rng, &weights)
    };
    let from = side(rng, false)?;
    let to = side(rng, true)?;
    (from != to).then_some([from, to])
}

/// An index drawn in proportion to its (non-negative) weight; `None` when they sum to 0.
fn draw(rng: &mut Rng, weights: &[i64]) -> Option<usize> {
    let total = weights.iter().map(|&w| i128::from(w.max(0))).sum::<i128>();
    if total <= 0 {
        return None;
    }
    let mut x = i128::from(rng.next()) % total;
    for (k, &w) in weights.iter().enumerate() {
        let w = i128::from(w.max(0));
        if x < w {
            return Some(k);
        }
        x -= w;
    }
    None
}

/// The cheapest feasible swap of `p` with one of 64 random processes.
fn best_swap(st: &State<'_>, model: &Model, rng: &mut Rng, p: usize) -> Move {
    let mut best = Move::None;
    for _ in 0..64 {
        let q = rng.below(model.processes.len());
        if let Some(d) = st.swap_delta(p, q)
            && best.delta().is_none_or(|b| d < b)
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
            && best.delta().is_none_or(|b| d < b)
        {
            best = Move::Shift(p, t, d);
        }
    }
    best
}

/// A moved process (one of a few drawn) back on its original machine: the cheaper of the
/// shift and the best swap with a process there, or, when neither is feasible, an ejection
/// onto it. Once the load cost is gone (a2_1), the move costs are what is left, and a
/// process goes home through a full machine only by a swap or a chain.
fn home_move(st: &mut State<'_>, model: &Model, rng: &mut Rng, journal: &mut Journal) -> Move {
    let np = model.processes.len();
    let Some(p) = (0..8)
        .map(|_| rng.below(np))
        .find(|&p| st.current[p] != st.initial[p])
    else {
        return Move::None;
    };
    let home = st.initial[p] as usize;
    let mut best = shift_move(st, p, home);
    for &q in st.on(home) {
        if let Some(d) = st.swap_delta(p, q as usize)
            && best.delta().is_none_or(|b| d < b)
        {
            best = Move::Swap(p, q as usize, d);
        }
    }
    if matches!(best, Move::None) {
        eject_onto(st, model, rng, journal, p, home);
        return Move::Applied;
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
    if let Some(target) = (0..10).map(|_| rng.below(nm)).find(|&m| roomy(m)) {
        eject_onto(st, model, rng, journal, p, target);
    }
}

/// `p` onto `target`, then up to 32 of its other processes away, as [`eject`] describes.
fn eject_onto(
    st: &mut State<'_>,
    model: &Model,
    rng: &mut Rng,
    journal: &mut Journal,
    p: usize,
    target: usize,
) {
    let from = st.machine_of(p);
    let req = &model.processes[p].requirement;
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
        let Move::Shift(_, t, _) = best_shift(st, model, q) else {
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

/// Improves `initial` (machine per process, which must be feasible) for `model`, from
/// `options.start` when given.
///
/// # Errors
/// [`PlacementError::RoadefInfeasible`] when the checker rejects `initial`,
/// [`PlacementError::RoadefStartInfeasible`] when it rejects the start.
pub fn improve(
    model: &Model,
    initial: &[usize],
    options: &LnsOptions,
) -> Result<LnsOutcome, PlacementError> {
    let first = |v: &super::check::Verdict| {
        (
            v.violations.len(),
            v.violations
                .first()
                .map_or_else(String::new, ToString::to_string),
        )
    };
    let verdict = check(model, initial, initial);
    if !verdict.feasible() {
        let (count, first) = first(&verdict);
        return Err(PlacementError::RoadefInfeasible { count, first });
    }
    if let Some(start) = &options.start {
        let verdict = check(model, initial, start);
        if !verdict.feasible() {
            let (count, first) = first(&verdict);
            return Err(PlacementError::RoadefStartInfeasible { count, first });
        }
    }
    let mut by_nb = vec![Vec::new(); model.neighborhoods];
    for (m, mach) in model.machines.iter().enumerate() {
        by_nb[mach.neighborhood].push(m);
    }
    let threads = options.threads.max(1);
    if threads == 1 {
        return Ok(search(model, initial, options, options.seed, &by_nb));
    }
    let runs: Vec<LnsOutcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                let by_nb = &by_nb;
                let seed = thread_seed(options.seed, k);
                scope.spawn(move || search(model, initial, options, seed, by_nb))
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let finished = runs.len();
    let (iterations, tried, kicks) = runs.iter().fold((0, 0, 0), |(i, t, k), r| {
        (i + r.iterations, t + r.tried, k + r.kicks)
    });
    match runs
        .into_iter()
        .enumerate()
        .min_by_key(|(k, r)| (r.cost, *k))
    {
        Some((thread, best)) if finished == threads => Ok(LnsOutcome {
            iterations,
            tried,
            kicks,
            thread,
            ..best
        }),
        // A search that panicked is a bug: report it rather than the others' answer.
        _ => Err(PlacementError::RoadefSearchFailed { threads, finished }),
    }
}

/// The shortest late-acceptance history, and the one a search starts with under a deadline.
const HISTORY_MIN: usize = 2_000;
/// Tries per history slot when the history is sized to the budget: a longer history settles
/// later but lower, and the search settles in about this many tries per slot.
const TRIES_PER_SLOT: u64 = 6_000;
/// Tries after which a search under a deadline (and no move budget) sizes its history; a
/// multiple of 256, the deadline's check interval.
const SIZE_AFTER: u64 = 1 << 20;
/// Where no resource is transient, some have room in total (their processes need less than
/// the machines' safety capacities add up to) and others have none, the first `ROOM_PART`
/// of a run from the initial assignment searches with the load weights of those with room
/// `ROOM_WEIGHT` times their own ([`room_first`]).
const ROOM_WEIGHT: i64 = 3;
const ROOM_PART: f64 = 0.3;
/// The last `1 / POLISH_PART` of a run (its move budget, or the time a deadline gives) is
/// left to the closing descent from the best assignment ([`polish`]).
const POLISH_PART: u64 = 50;

/// The late-acceptance history for a run of `tries` tried moves.
#[must_use]
pub fn history_for(tries: u64) -> usize {
    usize::try_from(tries / TRIES_PER_SLOT).map_or(usize::MAX, |h| h.max(HISTORY_MIN))
}

/// The history a search starts with: the one given, or the one for the move budget, or,
/// under a deadline alone, the shortest until the pace is known.
fn starting_history(options: &LnsOptions) -> usize {
    match (options.history, options.iterations) {
        (Some(h), _) => h.max(1),
        (None, Some(n)) => history_for(n),
        (None, None) => HISTORY_MIN,
    }
}

/// The tries a run makes in all if it keeps the pace of its first `tries` in `spent`.
fn expected_tries(tries: u64, spent: std::time::Duration, left: std::time::Duration) -> u64 {
    let spent = spent.as_secs_f64().max(1e-9);
    (tries as f64 * (spent + left.as_secs_f64()) / spent) as u64
}

/// The model with the load weight of every resource that has room in total multiplied by
/// `ROOM_WEIGHT`, or `None` unless some resource has room and some has none, or when a
/// resource is transient: a moved process's transient usage counts on both machines, so a
/// total says little about room (a2_3, one 300 s run: 4.5% higher with it). Why: on a2_5
/// ten of twelve resources need more than the machines' total safety capacity, so each
/// costs its aggregate excess however it is spread once every machine is above its safety
/// capacity there, while the two with room cost on every machine they exceed. The search
/// fills the ten first and the two's excess is then locked on a few machines: CP-SAT found
/// no better split of the pairs and the triple of them tried, and any larger change leaves
/// some machine below a safety capacity. Weighting the two places them while the rest is
/// still loose.
fn room_first(model: &Model) -> Option<Model> {
    if model.resources.iter().any(|r| r.transient) {
        return None;
    }
    let room: Vec<bool> = (0..model.resources.len())
        .map(|r| {
            let need: i64 = model.processes.iter().map(|p| p.requirement[r]).sum();
            let safe: i64 = model.machines.iter().map(|m| m.safety_capacity[r]).sum();
            need < safe
        })
        .collect();
    if !room.contains(&true) || !room.contains(&false) {
        return None;
    }
    let mut weighted = model.clone();
    for (res, &has) in weighted.resources.iter_mut().zip(&room) {
        if has {
            res.weight_load_cost = res.weight_load_cost.saturating_mul(ROOM_WEIGHT);
        }
    }
    Some(weighted)
}

/// `st`'s assignment under the model's own weights, and the cheaper there of it and the
/// start (`start_cost` is under those weights): the best a search has when it leaves the
/// reweighted first part.
fn own_weights<'m>(
    model: &'m Model,
    initial: &[usize],
    st: &State<'_>,
    start_cost: i64,
    start: &[u32],
) -> (State<'m>, i64, Vec<u32>) {
    let mut own = State::new(model, initial);
    restore(&mut own, &st.current);
    let cost = own.total();
    let best = if cost <= start_cost {
        (cost, st.current.clone())
    } else {
        (start_cost, start.to_vec())
    };
    (own, best.0, best.1)
}

/// The seed of search `k` of a portfolio: `seed` itself for the first.
pub(super) fn thread_seed(seed: u64, k: usize) -> u64 {
    seed.wrapping_add((k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// One late-acceptance search from `initial` (feasible) with `seed`.
fn search(
    model: &Model,
    initial: &[usize],
    options: &LnsOptions,
    seed: u64,
    by_nb: &[Vec<usize>],
) -> LnsOutcome {
    let mut st = State::new(model, initial);
    let mut rng = Rng(seed ^ 0x5EED_0FB3_A7A7);
    let initial_cost = st.total();
    if let Some(start) = &options.start {
        let start: Vec<u32> = start.iter().map(|&m| idx(m)).collect();
        restore(&mut st, &start);
    }
    let start_cost = st.total();
    let start_assignment = st.current.clone();
    // A run from an earlier answer keeps its arrangement: no reweighted first part.
    let roomy = if options.start.is_none() {
        room_first(model)
    } else {
        None
    };
    // The reweighted model while the run's first part lasts.
    let mut weighted = roomy.as_ref();
    if let Some(w) = weighted {
        st = State::new(w, initial);
    }
    let mut current = st.total();
    let mut best = current;
    let mut best_assignment: Vec<u32> = st.current.clone();
    // The current state is the best one and not yet saved in `best_assignment`.
    let mut unsaved = false;
    let started = std::time::Instant::now();
    // Sized now when the budget is known; under a deadline alone once the pace is.
    let size_by_pace = options.history.is_none() && options.iterations.is_none();
    let mut late = vec![current; starting_history(options)];
    let mut iterations = 0u64;
    let mut tries = 0u64;
    let mut since_best = 0u64;
    let mut kicks = 0u64;
    let mut journal = Journal::new();
    let stall_for = |history: usize| options.stall.unwrap_or(100 * history as u64).max(1);
    let mut stall = stall_for(late.len());
    // The late acceptance's share of a move budget; the polish has the rest.
    let budget = options.iterations.map(|n| n - n / POLISH_PART);
    // The share of the run gone: by the move budget, by the deadline's clock, whichever is
    // further; all of it when neither tells.
    let spent = |tries: u64| {
        let by_tries = budget.map(|n| tries as f64 / n.max(1) as f64);
        let by_time = options
            .deadline
            .as_ref()
            .and_then(|d| d.remaining())
            .map(|left| {
                let gone = started.elapsed().as_secs_f64();
                gone / (gone + left.as_secs_f64()).max(1e-9)
            });
        match (by_tries, by_time) {
            (None, None) => 1.0,
            (a, b) => a.unwrap_or(0.0).max(b.unwrap_or(0.0)),
        }
    };
    let mut pool = Pool::new(model);
    pool.grow(spent(0));
    loop {
        tries += 1;
        if tries.is_multiple_of(256) && pool.len < model.processes.len() {
            pool.grow(spent(tries));
        }
        if tries.is_multiple_of(256) && weighted.is_some() && spent(tries) >= ROOM_PART {
            // The model's own weights from here on: the late acceptance goes on from where it
            // is, its history and best in their terms.
            weighted = None;
            (st, best, best_assignment) =
                own_weights(model, initial, &st, start_cost, &start_assignment);
            current = st.total();
            late.fill(current);
            since_best = 0;
            unsaved = false;
        }
        if tries.is_multiple_of(256)
            && let Some(deadline) = &options.deadline
        {
            match deadline.remaining() {
                // The polish's share of the time: a fiftieth of the whole, about.
                Some(left)
                    if left.as_secs_f64() * (POLISH_PART - 1) as f64
                        <= started.elapsed().as_secs_f64() =>
                {
                    break;
                }
                None if deadline.expired() => break,
                _ => {}
            }
            if size_by_pace
                && tries == SIZE_AFTER
                && let Some(left) = deadline.remaining()
            {
                let to = history_for(expected_tries(tries, started.elapsed(), left));
                // The new slots copy the old ones in turn: the threshold stays where it was.
                let old = late.len();
                let more: Vec<i64> = (old..to).map(|k| late[k % old]).collect();
                late.extend(more);
                stall = stall_for(late.len());
            }
        }
        if budget.is_some_and(|n| tries > n) {
            break;
        }
        let weights = weighted.unwrap_or(model);
        let mv = random_move(&mut st, weights, by_nb, &pool, &mut rng, &mut journal);
        let cost = match mv {
            Move::None => continue,
            Move::Applied if journal.is_empty() => continue,
            Move::Applied => st.total(),
            Move::Shift(_, _, d) | Move::Swap(_, _, d) => current + d,
        };
        iterations += 1;
        let slot = (iterations % late.len() as u64) as usize;
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
                let mv = random_move(&mut st, weights, by_nb, &pool, &mut rng, &mut journal);
                apply(&mut st, &mut journal, &mv);
            }
            current = st.total();
            late.fill(current);
            since_best = 0;
            kicks += 1;
        }
    }
    let tries = tries - 1;
    if !unsaved {
        restore(&mut st, &best_assignment);
    }
    if weighted.is_some() {
        // Ended within the first part: its best, or the start if that costs less.
        (st, best, best_assignment) =
            own_weights(model, initial, &st, start_cost, &start_assignment);
        restore(&mut st, &best_assignment);
    }
    let polish_budget = options.iterations.map(|n| n / POLISH_PART);
    let evaluations = polish(&mut st, model, polish_budget, options.deadline.as_deref());
    let polished = best - st.total();
    LnsOutcome {
        assignment: st.current.iter().map(|&m| m as usize).collect(),
        cost: st.total(),
        initial_cost,
        start_cost,
        iterations,
        tried: tries + evaluations,
        kicks,
        thread: 0,
        history: late.len(),
        polished,
    }
}

/// First-improvement descent over every shift and every swap, from the state: processes on
/// the costliest machines first, each shifted to the first machine that lowers the cost,
/// then swapped with the first process after it that does; sweeps until one finds nothing,
/// `budget` evaluations are spent or the deadline expires (checked every 256). The late
/// acceptance samples such moves at random, and the improving ones among hundreds of
/// thousands are rarely drawn: its best is left with some (on a2_2, 0.4% of the cost after
/// 300 s). Returns the evaluations made.
pub(super) fn polish(
    st: &mut State<'_>,
    model: &Model,
    budget: Option<u64>,
    deadline: Option<&dyn Deadline>,
) -> u64 {
    let (np, nm) = (model.processes.len(), model.machines.len());
    let mut evaluations = 0u64;
    let spent = |done: u64| {
        budget.is_some_and(|n| done >= n)
            || (done.is_multiple_of(256) && deadline.is_some_and(|d| d.expired()))
    };
    loop {
        let mut order: Vec<usize> = (0..np).collect();
        order.sort_by_cached_key(|&p| (std::cmp::Reverse(st.machine_cost(st.machine_of(p))), p));
        let mut improved = false;
        for (k, &p) in order.iter().enumerate() {
            for t in 0..nm {
                if spent(evaluations) {
                    return evaluations;
                }
                evaluations += 1;
                if st.shift_delta(p, t).is_some_and(|d| d < 0) {
                    st.shift(p, t);
                    improved = true;
                }
            }
            for &q in &order[k + 1..] {
                if spent(evaluations) {
                    return evaluations;
                }
                evaluations += 1;
                if st.swap_delta(p, q).is_some_and(|d| d < 0) {
                    let (a, b) = (st.machine_of(p), st.machine_of(q));
                    st.shift(p, b);
                    st.shift(q, a);
                    improved = true;
                }
            }
        }
        if !improved {
            return evaluations;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roadef::check::check;
    use crate::roadef::model::{Machine, Process, Resource, Service};

    /// One resource of load weight 1; machines as `(capacity, safety capacity)`, one
    /// neighborhood and location; a process per size, each its own service; every move
    /// costs 1, every service move 1.
    fn one_resource(transient: bool, machines: &[(i64, i64)], sizes: &[i64]) -> Model {
        let machine = |&(capacity, safety): &(i64, i64)| Machine {
            neighborhood: 0,
            location: 0,
            capacity: vec![capacity],
            safety_capacity: vec![safety],
        };
        let process = |(service, &size): (usize, &i64)| Process {
            service,
            requirement: vec![size],
            move_cost: 1,
        };
        let service = |_| Service {
            spread_min: 0,
            dependencies: vec![],
        };
        Model::from_parts(
            vec![Resource {
                transient,
                weight_load_cost: 1,
            }],
            machines.iter().map(machine).collect(),
            sizes.iter().map(service).collect(),
            sizes.iter().enumerate().map(process).collect(),
            vec![],
            [1, 1, 1],
            vec![0; machines.len() * machines.len()],
        )
        .unwrap()
    }

    /// Three machines of capacity 11 and processes 0 (6), 1 (7) and 2 (5), each at home on the
    /// machine of its index at first.
    fn full_home() -> Model {
        one_resource(false, &[(11, 11); 3], &[6, 7, 5])
    }

    /// Three machines of capacity 20 (8 for machine 1) and safety capacities 5, 8 and 10;
    /// processes of sizes 10, 2, 10 and 6 (on machines 0, 1, 2 and 1 in the test).
    fn uneven(transient: bool) -> Model {
        one_resource(transient, &[(20, 5), (8, 8), (20, 10)], &[10, 2, 10, 6])
    }

    /// Two machines of safety capacity 10 (capacity 30) in two resources of weights 2 and 5;
    /// processes of the requirements given, each its own service.
    fn two_resources(requirements: &[[i64; 2]]) -> Model {
        let machine = |_| Machine {
            neighborhood: 0,
            location: 0,
            capacity: vec![30, 30],
            safety_capacity: vec![10, 10],
        };
        Model::from_parts(
            [2, 5]
                .map(|w| Resource {
                    transient: false,
                    weight_load_cost: w,
                })
                .to_vec(),
            (0..2).map(machine).collect(),
            requirements
                .iter()
                .map(|_| Service {
                    spread_min: 0,
                    dependencies: vec![],
                })
                .collect(),
            requirements
                .iter()
                .enumerate()
                .map(|(service, r)| Process {
                    service,
                    requirement: r.to_vec(),
                    move_cost: 1,
                })
                .collect(),
            vec![],
            [1, 1, 1],
            vec![0; 4],
        )
        .unwrap()
    }

    #[test]
    fn the_first_part_weights_only_the_resources_with_room() {
        // Resource 0 needs 25 of the 20 the safety capacities add up to, resource 1 needs 8.
        let model = two_resources(&[[12, 4], [13, 4]]);
        let weighted = room_first(&model).unwrap();
        let weights: Vec<i64> = weighted
            .resources
            .iter()
            .map(|r| r.weight_load_cost)
            .collect();
        assert_eq!(weights, [2, 5 * ROOM_WEIGHT]);
        let mut back = weighted.clone();
        back.resources[1].weight_load_cost = 5;
        assert_eq!(back, model);
        // Room in neither (exactly the total safety capacity is none), or in both: no change.
        assert!(room_first(&two_resources(&[[12, 10], [13, 10]])).is_none());
        assert!(room_first(&two_resources(&[[5, 4], [5, 4]])).is_none());
        // Nor where a resource is transient.
        let mut transient = model.clone();
        transient.resources[0].transient = true;
        assert!(room_first(&transient).is_none());
    }

    #[test]
    fn the_pool_grows_from_the_biggest_processes() {
        // Machine capacity 100: sizes are shares of 300.
        let sizes = [30, 90, 10, 70, 50, 90];
        // Without a transient resource the pool holds every process throughout.
        let mut pool = Pool::new(&one_resource(false, &[(100, 100); 3], &sizes));
        pool.grow(0.0);
        assert_eq!(pool.len, 6);
        let model = one_resource(true, &[(100, 100); 3], &sizes);
        let mut pool = Pool::new(&model);
        // Biggest first, ties by index.
        assert_eq!(pool.order, vec![1, 5, 3, 4, 0, 2]);
        assert_eq!(pool.rank, vec![4, 0, 5, 2, 3, 1]);
        assert_eq!(pool.len, 6);
        pool.grow(0.0);
        assert_eq!(pool.len, 1);
        assert!(pool.holds(1) && !pool.holds(5));
        pool.grow(0.25);
        // 5% + 95% / 2 of 6, rounded up.
        assert_eq!(pool.len, 4);
        assert!(pool.holds(4) && !pool.holds(0));
        pool.grow(0.5);
        assert_eq!(pool.len, 6);
        assert_eq!(pool_len(100, 0.0), 5);
        assert_eq!(pool_len(100, 0.25), 53);
        assert_eq!(pool_len(100, 3.0), 100);
        assert_eq!(pool_len(0, 0.0), 0);
    }

    #[test]
    fn moves_start_from_the_pool() {
        let sizes = [30, 90, 10, 70, 50, 80, 20, 60];
        let model = one_resource(false, &[(400, 400); 4], &sizes);
        let initial = [0, 0, 1, 1, 2, 2, 3, 3];
        let by_nb = vec![(0..4).collect::<Vec<usize>>()];
        let mut pool = Pool::new(&model);
        let starts = |pool: &Pool| {
            let mut seen = [0; 8];
            for seed in 0..400 {
                let mut st = State::new(&model, &initial);
                let mut journal = Journal::new();
                let mut rng = Rng(seed);
                match random_move(&mut st, &model, &by_nb, pool, &mut rng, &mut journal) {
                    Move::Shift(p, ..) | Move::Swap(p, ..) => seen[p] += 1,
                    Move::Applied | Move::None => {}
                }
            }
            seen
        };
        // Every process starts moves from a full pool; from the three biggest (1, 5, 3)
        // only they do.
        let all = starts(&pool);
        assert!(all.iter().all(|&n| n > 0), "{all:?}");
        pool.len = 3;
        let big = starts(&pool);
        for (p, &n) in big.iter().enumerate() {
            assert_eq!(n > 0, [1, 5, 3].contains(&p), "process {p}: {big:?}");
        }
    }

    #[test]
    fn levelling_pairs_join_an_excess_to_room_that_can_take_it() {
        let initial = [0, 1, 2, 1];
        // Process 3 moved to machine 2: machine 1 keeps 2 of 8 (room 6 below its safety
        // capacity), machines 0 and 2 are 5 and 6 above theirs.
        let model = uneven(false);
        let mut st = State::new(&model, &initial);
        st.shift(3, 2);
        assert_eq!(st.excess_and_room(1, 0), (0, 6));
        let mut from = [0; 3];
        for seed in 0..200 {
            let [a, b] = levelling_pair(&st, &model, &mut Rng(seed)).unwrap();
            assert_eq!(b, 1, "seed {seed}");
            from[a] += 1;
        }
        // Drawn in proportion to their excess, 5 to 6.
        assert!(from[0] > 60 && from[2] > 60 && from[1] == 0, "{from:?}");
        // Transient: machine 1 still holds process 3's 6 of its capacity 8, so it has no room.
        let model = uneven(true);
        let mut st = State::new(&model, &initial);
        st.shift(3, 2);
        assert_eq!(st.excess_and_room(1, 0), (0, 0));
        assert_eq!(levelling_pair(&st, &model, &mut Rng(1)), None);
    }

    #[test]
    fn transient_resources_raise_the_home_share() {
        let mut model = full_home();
        let initial = [0, 1, 2];
        let st = State::new(&model, &initial);
        // Nothing moved: the least share.
        assert_eq!(home_share(&st, &model), HOME_SHARE[0]);
        let mut st = State::new(&model, &initial);
        st.shift(2, 1);
        // Process 2 (5) on machine 1 (7): load cost 1, move costs 1 + 1 (service): two thirds
        // of the objective.
        assert_eq!(
            home_share(&st, &model),
            HOME_SHARE[0] + HOME_SHARE[1] * 2 / 3
        );
        model.resources[0].transient = true;
        let st = State::new(&model, &initial);
        assert_eq!(home_share(&st, &model), HOME_SHARE_TRANSIENT);
    }

    #[test]
    fn a_moved_process_goes_home_by_shift_swap_or_ejection() {
        let model = full_home();
        let initial = [0, 1, 2];
        let mut ejected = 0;
        for seed in 0..64 {
            // Process 0 shares machine 2 with process 2, process 1 sits on machine 0. Process 0
            // goes home neither by a shift (13 on machine 0) nor by a swap (12 on machine 2):
            // only the ejection, which sends process 1 home too, takes it there. Process 1
            // goes home by a shift.
            let mut st = State::new(&model, &initial);
            st.shift(0, 2);
            st.shift(1, 0);
            let before = st.total();
            let mut journal = Journal::new();
            let mv = home_move(&mut st, &model, &mut Rng(seed), &mut journal);
            let expected = match mv {
                Move::Shift(p, to, d) => {
                    assert_eq!((p, to, d), (1, 1, -1), "seed {seed}");
                    before + d
                }
                Move::Applied => {
                    ejected += 1;
                    // Process 0 home, process 1 moved off machine 0 to its own home.
                    assert_eq!(journal, vec![(0, 2, 0), (1, 0, 1)], "seed {seed}");
                    // Two moved processes and the service move cost (1 per service) gone.
                    before - 3
                }
                Move::Swap(..) | Move::None => panic!("seed {seed}: no swap fits"),
            };
            apply(&mut st, &mut journal, &mv);
            assert_eq!(st.total(), expected, "seed {seed}");
            let assignment: Vec<usize> = st.current.iter().map(|&m| m as usize).collect();
            let verdict = check(&model, &initial, &assignment);
            assert!(verdict.feasible(), "seed {seed}: {:?}", verdict.violations);
            assert_eq!(verdict.cost.map(|c| c.total), Some(expected));
        }
        assert!(ejected > 0, "no seed drew process 0");
    }

    #[test]
    fn a_moved_process_swaps_home_when_its_machine_is_full() {
        let model = full_home();
        // Process 2 stays home; process 1 (7) on machine 0 and process 0 (6) on machine 1:
        // each can only swap home, and the swap sends both home.
        let mut st = State::new(&model, &[0, 1, 2]);
        st.shift(1, 0);
        st.shift(0, 1);
        let before = st.total();
        let mut journal = Journal::new();
        let mv = home_move(&mut st, &model, &mut Rng(3), &mut journal);
        // Both process moves and the service move cost gone.
        assert!(
            matches!(mv, Move::Swap(_, _, -3)),
            "a swap home: {before} to 0"
        );
        apply(&mut st, &mut journal, &mv);
        assert_eq!((before, st.total()), (3, 0));
        assert_eq!(st.current, vec![0, 1, 2]);
    }

    #[test]
    fn the_history_grows_with_the_budget_from_its_floor() {
        use std::time::Duration;
        assert_eq!(history_for(0), HISTORY_MIN);
        assert_eq!(history_for(6_000 * HISTORY_MIN as u64), HISTORY_MIN);
        assert_eq!(history_for(120_000_000), 20_000);
        // 2^20 tries in the first 2.5 s of 300 s: 126 million in all.
        let (spent, left) = (Duration::from_millis(2_500), Duration::from_millis(297_500));
        assert_eq!(expected_tries(1 << 20, spent, left), 125_829_120);
        assert_eq!(history_for(expected_tries(1 << 20, spent, left)), 20_971);
        // A deadline already reached: the tries made are all there will be.
        assert_eq!(expected_tries(1 << 20, spent, Duration::ZERO), 1 << 20);
    }

    #[test]
    fn a_move_budget_sizes_the_history_and_a_given_one_is_kept() {
        let start = |history, iterations| {
            starting_history(&LnsOptions {
                history,
                iterations,
                ..LnsOptions::default()
            })
        };
        assert_eq!(start(None, None), HISTORY_MIN);
        assert_eq!(start(None, Some(1_000)), HISTORY_MIN);
        assert_eq!(start(None, Some(30_000_000)), 5_000);
        assert_eq!(start(Some(50), Some(30_000_000)), 50);
        assert_eq!(start(Some(0), None), 1);
        // The search reports the history it ran with.
        let options = LnsOptions {
            history: Some(50),
            iterations: Some(1_000),
            ..LnsOptions::default()
        };
        assert_eq!(
            improve(&full_home(), &[0, 1, 2], &options).unwrap().history,
            50
        );
    }
}
