//! The threads of one search sharing its tree: the pool of subtrees, the shared incumbent,
//! and the lock-step meetings under a node limit.

use std::sync::Arc;

use super::options::{Stats, StopReason};
use super::{Engine, SEARCH};
use crate::Value;
use crate::lockstep::{Lockstep, Post};
use crate::state::State;

/// The lock-step meeting point of a search's threads (see `lockstep.rs`); a subtree
/// promised but not found (never, as the giver counted its own) is handed over as `None`.
pub(super) type Meetings = Lockstep<Option<Vec<Step>>, StopReason>;

/// Nodes each thread searches between two meetings of a lock-step search: a meeting costs
/// a few microseconds, a node tens.
const MEET_EVERY: u64 = 256;

/// What a meeting tells a thread (see [`Engine::meet`]).
pub(super) enum Met {
    /// Go on as before.
    On,
    /// Search this subtree.
    Job(Vec<Step>),
    /// The search is over.
    Over,
}

/// A branch on the current path: `x = v`, tried at `path[at]` (see [`Engine::give`]).
pub(super) struct Level {
    pub(super) at: usize,
    pub(super) x: u32,
    pub(super) v: u32,
    /// `x` had other values left when `v` was tried.
    pub(super) open: bool,
    /// Another thread took the untried values.
    pub(super) given: bool,
}

/// The subtrees threads share, as paths from the root, and how many threads wait for one.
pub(crate) struct Pool {
    jobs: std::sync::Mutex<Jobs>,
    /// [`Jobs::want`] as of the last change, read without the lock.
    want: std::sync::atomic::AtomicIsize,
    threads: usize,
}

struct Jobs {
    queue: std::collections::VecDeque<Vec<Step>>,
    /// Threads waiting for a subtree.
    idle: usize,
}

impl Jobs {
    /// Threads waiting that no queued subtree will serve.
    fn want(&self) -> isize {
        self.idle as isize - self.queue.len() as isize
    }
}

impl Pool {
    /// The whole tree as one subtree, every thread but `busy` of them waiting.
    fn new(threads: usize, busy: usize) -> Pool {
        let jobs = Jobs {
            queue: std::iter::once(Vec::new()).collect(),
            idle: threads.saturating_sub(busy),
        };
        Pool {
            want: std::sync::atomic::AtomicIsize::new(jobs.want()),
            jobs: std::sync::Mutex::new(jobs),
            threads,
        }
    }

    /// Every thread but one waits and nothing is queued: the search ends once that one
    /// asks for work too.
    pub(super) fn all_wait_but_one(&self) -> bool {
        self.want.load(std::sync::atomic::Ordering::Relaxed) + 1 >= self.threads as isize
    }

    fn hungry(&self) -> bool {
        self.want.load(std::sync::atomic::Ordering::Relaxed) > 0
    }

    fn give(&self, job: Vec<Step>) {
        if let Ok(mut j) = self.jobs.lock() {
            j.queue.push_back(job);
            self.publish(&j);
        }
    }

    /// A subtree, none yet, or the end (every thread waits and none is queued). `idle` is
    /// the caller's state, kept in step with the count.
    fn take(&self, idle: &mut bool) -> Take {
        let Ok(mut j) = self.jobs.lock() else {
            return Take::End;
        };
        let job = j.queue.pop_front();
        // The caller counts as waiting exactly while it has no subtree.
        match (*idle, job.is_some()) {
            (true, true) => j.idle -= 1,
            (false, false) => j.idle += 1,
            _ => {}
        }
        *idle = job.is_none();
        self.publish(&j);
        match job {
            Some(job) => Take::Job(job),
            None if j.idle < self.threads => Take::Wait,
            None => Take::End,
        }
    }

    fn publish(&self, j: &Jobs) {
        self.want
            .store(j.want(), std::sync::atomic::Ordering::Relaxed);
    }
}

/// What [`Pool::take`] hands a thread.
enum Take {
    Job(Vec<Step>),
    Wait,
    End,
}

/// A decision on the path from the root to a subtree: `x = v`, or `x ≠ v` (an earlier
/// sibling refuted).
#[derive(Clone, Copy, Debug)]
pub(super) enum Step {
    Assign(u32, u32),
    Remove(u32, u32),
}

/// The best plan known to every thread of one search.
pub(crate) struct Shared {
    best: std::sync::Mutex<Option<(f64, Vec<Value>)>>,
    /// The best cost's bits (`f64`), read without the lock.
    cost: std::sync::atomic::AtomicU64,
}

impl Shared {
    pub(crate) fn new() -> Shared {
        Shared {
            best: std::sync::Mutex::new(None),
            cost: std::sync::atomic::AtomicU64::new(f64::INFINITY.to_bits()),
        }
    }

    fn cost(&self) -> f64 {
        f64::from_bits(self.cost.load(std::sync::atomic::Ordering::Acquire))
    }

    /// Offers a plan; kept when it is cheaper than the shared one.
    pub(super) fn offer(&self, cost: f64, values: &[Value]) {
        let Ok(mut best) = self.best.lock() else {
            return;
        };
        if best.as_ref().is_none_or(|b| cost < b.0) {
            *best = Some((cost, values.to_vec()));
            self.cost
                .store(cost.to_bits(), std::sync::atomic::Ordering::Release);
        }
    }

    pub(super) fn get(&self) -> Option<(f64, Vec<Value>)> {
        self.best.lock().ok().and_then(|b| b.clone())
    }
}

impl<'p> Engine<'p> {
    /// Shares the incumbent with the other threads (see [`Engine::dfs_top`]).
    pub(crate) fn share(&mut self, shared: &'p Shared) {
        self.shared = Some(shared);
        if let Some(f) = self.found.first() {
            shared.offer(f.cost, &f.solution.values);
        }
    }

    /// Takes the shared incumbent when another thread improved it.
    pub(super) fn pull_shared(&mut self) {
        let Some(sh) = self.shared else { return };
        if sh.cost() < self.incumbent_cost()
            && let Some((_, values)) = sh.get()
        {
            self.seed(values);
        }
    }

    /// From now on the searches from the root run on `threads` threads (this one and
    /// helpers sharing the incumbent through `shared`) once they pass `alone` nodes here
    /// (see [`Engine::dfs_top`]).
    pub(crate) fn parallel(&mut self, threads: usize, alone: u64, shared: &'p Shared) {
        self.workers = threads.max(1);
        self.alone = alone;
        self.share(shared);
    }

    /// The search from the root: on several threads, each takes a subtree from a shared
    /// pool, searches it pruning at the best plan any of them knows, and gives the untried
    /// branches of its shallowest open node to a thread that waits (see [`Engine::give`]).
    /// Sound and complete as the one-thread search is: every branch it would try is
    /// searched by exactly one thread. The neighbourhood rounds run on the second thread
    /// first (see [`Engine::run_beside`]), not between the first thread's nodes.
    pub(super) fn dfs_top(&mut self) {
        let Some(shared) = self.shared.filter(|_| self.workers >= 2) else {
            self.dfs(0);
            return;
        };
        // A tree searched within its first nodes does not pay the threads' start.
        if self.probe(self.alone) {
            return;
        }
        if self.node_limit.is_some() {
            self.lockstep_top();
            return;
        }
        let beside = self.rounds_beside();
        let busy = beside.as_ref().is_some_and(|b| !b.0.beside_stale);
        let beside = std::sync::Mutex::new(beside);
        let pool = Arc::new(Pool::new(self.workers, usize::from(busy)));
        let mut helpers = self.with_helpers(|e, id| {
            if id != 1 {
                e.subtrees(pool.clone(), true);
                return;
            }
            if let Ok(mut b) = beside.lock() {
                if busy && let Some(r) = b.as_mut() {
                    e.run_beside(r, shared, &pool);
                }
                // Rounds in vain go on between this thread's nodes, as on one thread.
                if b.as_ref().is_some_and(|r| r.0.beside_stale)
                    && let Some((mut imp, engine)) = b.take()
                {
                    imp.engine = Some(engine);
                    imp.next_at = e.stats.nodes + imp.gap;
                    e.improver = Some(imp);
                }
            }
            e.subtrees(pool.clone(), !busy);
        });
        let back = beside
            .into_inner()
            .ok()
            .flatten()
            .map(|(mut imp, engine)| {
                imp.engine = Some(engine);
                imp
            })
            .or_else(|| helpers.first_mut().and_then(|h| h.improver.take()));
        if let Some(mut imp) = back {
            imp.next_at = self.stats.nodes + imp.gap;
            self.improver = Some(imp);
        }
        self.pull_shared();
    }

    /// Runs `work` here (thread 0) and on `workers - 1` helpers that start from the current
    /// node (threads 1 and up), then adds the helpers' counters to this engine's. The
    /// helpers are returned for the plans they found.
    fn with_helpers(&mut self, work: impl Fn(&mut Engine<'p>, usize) + Sync) -> Vec<Engine<'p>> {
        let root = self.st.clone();
        let base = root.removals;
        let mut helpers: Vec<Engine<'p>> = (1..self.workers)
            .map(|_| self.subtree_engine(root.clone()))
            .collect();
        std::thread::scope(|s| {
            for (i, h) in helpers.iter_mut().enumerate() {
                let work = &work;
                s.spawn(move || work(h, i + 1));
            }
            work(self, 0);
        });
        for h in &helpers {
            // Their states began as copies of this one: only their own removals count.
            self.st.removals += h.st.removals - base;
            self.stats.add(&Stats {
                removals: 0,
                ..h.stats
            });
        }
        self.stats.removals = self.st.removals;
        helpers
    }

    /// An engine for the subtrees of this one's search (see [`Engine::dfs_top`]): its
    /// relaxation, symmetry ordering, pruning targets and incumbent.
    fn subtree_engine(&self, root: State) -> Engine<'p> {
        let mut e = self.round_engine(root);
        e.node_lp_on = self.node_lp_on;
        e.node_lp = self.node_lp.clone();
        e.cuts = self.cuts.clone();
        e.sym_classes = self.sym_classes.clone();
        e.sym = self.sym.clone();
        e.sym_rank = self.sym_rank.clone();
        e.target = self.target;
        e.cap = self.cap;
        e.restart_below = self.restart_below;
        e.shared = self.shared;
        if let Some(f) = self.found.first() {
            e.seed(f.solution.values.clone());
        }
        e
    }

    /// [`Engine::dfs_top`] under a node limit: the threads share the tree as there, but in
    /// lock step (see `lockstep.rs`), so the search does not depend on timing and a limit
    /// stops it at the same node run after run. Each thread searches [`MEET_EVERY`] of its
    /// own nodes between meetings (or waits there without work); only there does the best
    /// plan pass between threads and do threads without work get subtrees.
    fn lockstep_top(&mut self) {
        let meetings = Arc::new(Meetings::new(
            self.workers,
            MEET_EVERY,
            self.node_limit.map(|l| (l, StopReason::NodeLimit)),
        ));
        // Plans pass only at meetings, not through the shared incumbent.
        let shared = self.shared.take();
        let helpers = self.with_helpers(|e, id| e.in_lockstep(meetings.clone(), id));
        for h in &helpers {
            // The last meeting passed every plan on; a tie keeps the lowest thread's.
            if let Some(f) = h.found.first()
                && f.cost < self.incumbent_cost()
            {
                self.seed(f.solution.values.clone());
            }
        }
        self.shared = shared;
        if let (Some(sh), Some(f)) = (self.shared, self.found.first()) {
            sh.offer(f.cost, &f.solution.values);
        }
    }

    /// One thread of [`Engine::lockstep_top`]: thread 0 starts with the whole tree, the others
    /// without work; each searches what it is given and meets the others until a meeting
    /// ends the search.
    fn in_lockstep(&mut self, meetings: Arc<Meetings>, id: usize) {
        let mark = self.st.mark();
        self.lock = Some((meetings, id));
        self.met_at = self.stats.nodes;
        let mut job = (id == 0).then(Vec::new);
        loop {
            if let Some(path) = job.take() {
                self.search_subtree(path, mark);
            }
            if self.lock.is_none() {
                break;
            }
            match self.meet(true) {
                Met::On => {}
                Met::Job(path) => job = Some(path),
                Met::Over => break,
            }
        }
        self.lock = None;
    }

    /// Meets the other threads of a lock-step search: brings this thread's state, takes the
    /// best plan, gives the subtrees the meeting asks of it and receives one if promised.
    pub(super) fn meet(&mut self, idle: bool) -> Met {
        let Some((meetings, id)) = self.lock.clone() else {
            return Met::On;
        };
        let open = if idle || self.done() {
            0
        } else {
            self.levels.iter().filter(|l| l.open && !l.given).count()
        };
        let post = Post {
            idle,
            open,
            nodes: self.stats.nodes,
            best: self
                .found
                .first()
                .map(|f| (f.cost, f.solution.values.clone())),
            stopped: self.stats.stopped,
        };
        let verdict = meetings.meet(id, post);
        self.met_at = self.stats.nodes;
        if let Some((cost, plan)) = &verdict.best
            && *cost < self.incumbent_cost()
        {
            self.seed(plan.clone());
        }
        for &to in verdict.give.get(id).map_or(&[][..], Vec::as_slice) {
            let job = self.split();
            meetings.deliver(to, job);
        }
        if let Some(why) = verdict.end {
            self.lock = None;
            if let Some(why) = why {
                self.stats.stopped.get_or_insert(why);
            }
            return Met::Over;
        }
        if verdict.receive.get(id).copied().unwrap_or(false)
            && let Some(job) = meetings.collect(id)
        {
            return Met::Job(job);
        }
        Met::On
    }

    /// Takes subtrees from `pool` until every thread waits for one.
    fn subtrees(&mut self, pool: Arc<Pool>, mut idle: bool) {
        let mark = self.st.mark();
        self.pool = Some(pool.clone());
        loop {
            let path = match pool.take(&mut idle) {
                Take::Job(path) => path,
                Take::Wait => {
                    std::thread::sleep(std::time::Duration::from_micros(50));
                    continue;
                }
                Take::End => break,
            };
            if self.done() {
                continue;
            }
            self.pull_shared();
            self.search_subtree(path, mark);
        }
        self.pool = None;
    }

    /// Searches the subtree at the end of `path` (unless the search is over), then goes back
    /// to the root at `mark`.
    fn search_subtree(&mut self, path: Vec<Step>, mark: usize) {
        if !self.done()
            && let Some(depth) = self.replay(&path)
        {
            self.path = path;
            self.dfs(depth);
        }
        self.st.undo_to(mark);
        self.st.clear_events();
        self.node_duals.clear();
        self.path.clear();
        self.levels.clear();
    }

    /// Follows `path` from the root as [`Engine::dfs_inner`] went down it, each node's
    /// bounds and filters included but the last's (the search of the subtree runs them):
    /// the subtree is then the one the search would meet, not a larger one. The depth
    /// reached, or `None` when the path fails now (a better incumbent prunes it).
    fn replay(&mut self, path: &[Step]) -> Option<u32> {
        let mut depth = 0;
        if !path.is_empty() && self.node_fails(depth) {
            return None;
        }
        for (i, &step) in path.iter().enumerate() {
            let ok = match step {
                Step::Assign(x, v) => {
                    depth += 1;
                    self.st.assign(x, v).is_ok()
                        && self.run_queue().is_ok()
                        && (i + 1 == path.len() || !self.node_fails(depth))
                }
                Step::Remove(x, v) => {
                    self.st.remove(x, v, SEARCH).is_ok() && self.run_queue().is_ok()
                }
            };
            if !ok {
                return None;
            }
        }
        Some(depth)
    }

    /// When a thread waits for work: gives it the untried branches of the shallowest node
    /// on this thread's path that has some (that node with its current branch refuted), and
    /// that node here ends with its current branch.
    pub(super) fn give(&mut self) {
        if !self.pool.as_ref().is_some_and(|p| p.hungry()) {
            return;
        }
        if let (Some(job), Some(pool)) = (self.split(), &self.pool) {
            pool.give(job);
        }
    }

    /// The untried branches of the shallowest node on the path that has some, as a path
    /// from the root (that node with its current branch refuted); that node here then ends
    /// with its current branch.
    fn split(&mut self) -> Option<Vec<Step>> {
        let level = self.levels.iter_mut().find(|l| l.open && !l.given)?;
        level.given = true;
        let mut job = self.path[..level.at].to_vec();
        job.push(Step::Remove(level.x, level.v));
        self.stats.subtrees_given += 1;
        Some(job)
    }
}
