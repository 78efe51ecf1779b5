//! Threads that share a search tree in lock step, so that the outcome does not depend on
//! timing: each thread searches a fixed number of its own nodes, then all meet. At a
//! meeting, and only there, the best plan is exchanged, the node limit is checked, and
//! threads without work get subtrees from those with untried branches, all decided from
//! what each thread brought, in thread order. Between meetings no thread sees another, so
//! the same problem, options and thread count give the same search run after run.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::Value;

/// What a thread brings to a meeting.
pub(crate) struct Post<R> {
    /// It has no subtree to search.
    pub(crate) idle: bool,
    /// Untried branches it can give (each a subtree).
    pub(crate) open: usize,
    /// Its nodes so far (the main thread's include the searches before this one).
    pub(crate) nodes: u64,
    /// Its best plan.
    pub(crate) best: Option<(f64, Vec<Value>)>,
    /// It stopped on its own (a deadline), and why.
    pub(crate) stopped: Option<R>,
}

/// What a meeting decided, the same for every thread.
#[derive(Debug)]
pub(crate) struct Verdict<R> {
    /// The cheapest plan brought so far (the lowest thread on a tie).
    pub(crate) best: Option<(f64, Vec<Value>)>,
    /// Per thread: the threads it gives a subtree to, in order.
    pub(crate) give: Vec<Vec<usize>>,
    /// Per thread: whether it receives a subtree.
    pub(crate) receive: Vec<bool>,
    /// Every thread stops: a limit was reached (why), or no thread has work left (`None`).
    pub(crate) end: Option<Option<R>>,
}

struct Meeting<J, R> {
    round: u64,
    posts: Vec<Option<Post<R>>>,
    arrived: usize,
    verdict: Option<Arc<Verdict<R>>>,
    best: Option<(f64, Vec<Value>)>,
    inbox: Vec<Option<J>>,
}

/// The meeting point of the threads of one search; `J` is a subtree as handed over, `R`
/// why a search stopped.
pub(crate) struct Lockstep<J, R> {
    meeting: Mutex<Meeting<J, R>>,
    met: Condvar,
    threads: usize,
    /// Nodes each thread searches between meetings.
    pub(crate) every: u64,
    /// The nodes of all threads together at which they stop, and the reason given then.
    node_limit: Option<(u64, R)>,
}

impl<J, R: Copy> Lockstep<J, R> {
    pub(crate) fn new(threads: usize, every: u64, node_limit: Option<(u64, R)>) -> Lockstep<J, R> {
        Lockstep {
            meeting: Mutex::new(Meeting {
                round: 0,
                posts: (0..threads).map(|_| None).collect(),
                arrived: 0,
                verdict: None,
                best: None,
                inbox: (0..threads).map(|_| None).collect(),
            }),
            met: Condvar::new(),
            threads,
            every,
            node_limit,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Meeting<J, R>> {
        // A thread that panicked holding the lock leaves the meeting as it was.
        self.meeting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Brings `post` for thread `id` and waits for the others; the meeting's verdict.
    pub(crate) fn meet(&self, id: usize, post: Post<R>) -> Arc<Verdict<R>> {
        let mut m = self.lock();
        let round = m.round;
        m.posts[id] = Some(post);
        m.arrived += 1;
        if m.arrived == self.threads {
            let posts: Vec<Post<R>> = m.posts.iter_mut().filter_map(Option::take).collect();
            let verdict = Arc::new(self.decide(&mut m.best, &posts));
            m.verdict = Some(verdict.clone());
            m.arrived = 0;
            m.round += 1;
            self.met.notify_all();
            return verdict;
        }
        while m.round == round {
            m = self
                .met
                .wait(m)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        // No meeting can pass before this thread comes to it, so the verdict is this one's.
        m.verdict.clone().unwrap_or_else(|| {
            Arc::new(Verdict {
                best: None,
                give: Vec::new(),
                receive: Vec::new(),
                end: Some(None),
            })
        })
    }

    fn decide(&self, best: &mut Option<(f64, Vec<Value>)>, posts: &[Post<R>]) -> Verdict<R> {
        for p in posts {
            if let Some((cost, plan)) = &p.best
                && best.as_ref().is_none_or(|b| *cost < b.0)
            {
                *best = Some((*cost, plan.clone()));
            }
        }
        let n = posts.len();
        let mut give = vec![Vec::new(); n];
        let mut receive = vec![false; n];
        let nodes: u64 = posts.iter().map(|p| p.nodes).sum();
        let stopped = posts.iter().find_map(|p| p.stopped);
        let end = if let Some(reason) = stopped {
            Some(Some(reason))
        } else if let Some((_, why)) = self.node_limit.filter(|l| nodes >= l.0) {
            Some(Some(why))
        } else if posts.iter().all(|p| p.idle) {
            Some(None)
        } else {
            // Each thread without work gets a subtree, the givers taken in turn (each gives
            // its shallowest untried branches first).
            let mut open: Vec<usize> = posts.iter().map(|p| p.open).collect();
            let mut giver = 0;
            for r in (0..n).filter(|&r| posts[r].idle) {
                let Some(g) = (0..n).map(|k| (giver + k) % n).find(|&g| open[g] > 0) else {
                    break;
                };
                open[g] -= 1;
                give[g].push(r);
                receive[r] = true;
                giver = g + 1;
            }
            None
        };
        Verdict {
            best: best.clone(),
            give,
            receive,
            end,
        }
    }

    /// Hands thread `to` the subtree a meeting promised it.
    pub(crate) fn deliver(&self, to: usize, job: J) {
        let mut m = self.lock();
        m.inbox[to] = Some(job);
        self.met.notify_all();
    }

    /// The subtree a meeting promised thread `id`, once its giver has handed it over.
    pub(crate) fn collect(&self, id: usize) -> J {
        let mut m = self.lock();
        loop {
            if let Some(job) = m.inbox[id].take() {
                return job;
            }
            m = self
                .met
                .wait(m)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(idle: bool, open: usize, nodes: u64, best: Option<f64>) -> Post<&'static str> {
        Post {
            idle,
            open,
            nodes,
            best: best.map(|c| (c, vec![Value(c as u32)])),
            stopped: None,
        }
    }

    #[test]
    fn idle_threads_get_subtrees_from_the_givers_in_turn() {
        let ls: Lockstep<(), &str> = Lockstep::new(4, 8, None);
        let mut best = None;
        let v = ls.decide(
            &mut best,
            &[
                post(false, 2, 10, Some(7.0)),
                post(true, 0, 0, None),
                post(false, 1, 10, Some(5.0)),
                post(true, 0, 0, Some(5.0)),
            ],
        );
        assert_eq!(v.give, vec![vec![1], vec![], vec![3], vec![]]);
        assert_eq!(v.receive, vec![false, true, false, true]);
        // The cheapest plan, the lowest thread on a tie.
        assert_eq!(v.best, Some((5.0, vec![Value(5)])));
        assert_eq!(v.end, None);
    }

    #[test]
    fn a_meeting_ends_the_search_at_the_node_limit_or_when_all_are_idle() {
        let ls: Lockstep<(), &str> = Lockstep::new(2, 8, Some((20, "nodes")));
        let mut best = Some((3.0, vec![Value(3)]));
        let v = ls.decide(
            &mut best,
            &[post(false, 1, 12, Some(4.0)), post(true, 0, 8, None)],
        );
        assert_eq!(v.end, Some(Some("nodes")));
        // A dearer plan than the one kept does not replace it.
        assert_eq!(v.best, Some((3.0, vec![Value(3)])));
        let v = ls.decide(&mut best, &[post(true, 0, 1, None), post(true, 0, 1, None)]);
        assert_eq!(v.end, Some(None));
        // A thread stopped by its own limit (a deadline) stops them all, for its reason.
        let mut stopped = post(true, 0, 1, None);
        stopped.stopped = Some("deadline");
        let v = ls.decide(&mut best, &[post(false, 2, 1, None), stopped]);
        assert_eq!(
            (v.end, v.give),
            (Some(Some("deadline")), vec![vec![], vec![]])
        );
        let v = ls.decide(
            &mut best,
            &[post(false, 0, 1, None), post(true, 0, 1, None)],
        );
        // Nothing to give: the idle thread waits for the next meeting.
        assert_eq!((v.end, v.receive), (None, vec![false, false]));
    }

    #[test]
    fn threads_meet_and_hand_over_subtrees() {
        let ls: Arc<Lockstep<u32, &str>> = Arc::new(Lockstep::new(3, 8, None));
        let got: Vec<Option<u32>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..3)
                .map(|id| {
                    let ls = ls.clone();
                    s.spawn(move || {
                        let v = ls.meet(id, post(id != 0, if id == 0 { 5 } else { 0 }, 1, None));
                        for &to in &v.give[id] {
                            ls.deliver(to, 100 + to as u32);
                        }
                        v.receive[id].then(|| ls.collect(id))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().ok().flatten())
                .collect()
        });
        assert_eq!(got, vec![None, Some(101), Some(102)]);
    }
}
