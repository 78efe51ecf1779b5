//! Plan options and the injectable clock (the only source of time the engine reads).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use berth_constraints::LatencyModel;
use berth_inventory::ServiceController;
use berth_topology::Topology;

use crate::CloudPolicyInput;

/// A monotonic clock: time elapsed since an arbitrary origin.
pub trait Clock: Send + Sync {
    /// Time since the clock's origin.
    fn now(&self) -> Duration;
}

/// The system's monotonic clock, origin at construction.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// A clock starting now.
    pub fn new() -> SystemClock {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// A clock that never moves: for tests and reproducible output (`elapsed_ms` is 0 and no
/// time limit ever expires).
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedClock;

impl Clock for FixedClock {
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

/// How to plan.
#[derive(Clone)]
pub struct PlanOptions {
    /// How many plans (k best, ranked); at least 1 (HAS `num_solution`).
    pub solutions: usize,
    /// Stop the search after this long (measured on `clock`) and return the best plan so far.
    pub time_limit: Option<Duration>,
    /// Stop after this many search nodes (deterministic).
    pub node_limit: Option<u64>,
    /// Stop at the first plan found (fast, not proven optimal).
    pub first_plan: bool,
    /// HAS `unique` for every demand: a candidate used in one plan is excluded from the next.
    /// Demands whose requirement says `unique: true` are unique regardless.
    pub unique: bool,
    /// Latency from distance where candidates have no topology path.
    pub latency: Option<LatencyModel>,
    /// Objective bonus for keeping a demand on its existing placement (0 = none).
    pub existing_bonus: f64,
    /// Service controllers by name; fit constraints naming others use candidates' capacity.
    pub controllers: BTreeMap<String, Arc<dyn ServiceController>>,
    /// Network topology that candidates' `topology_node` refer to.
    pub topology: Option<Arc<Topology>>,
    /// The clock for `time_limit` and `elapsed_ms`; `None` = [`SystemClock`].
    pub clock: Option<Arc<dyn Clock>>,
    /// A cloud selection policy to apply to the demands it names (see [`CloudPolicyInput`]).
    pub cloud_policy: Option<Arc<CloudPolicyInput>>,
    /// Told when the search improves its best plan (score and bound).
    pub progress: Option<Arc<dyn berth_solver::Progress>>,
    /// Threads of the search, sharing its tree (see `berth_solver::SolveOptions::threads`);
    /// 0: one per core. A proven optimum is the same plan for any count.
    pub threads: usize,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            solutions: 1,
            time_limit: None,
            node_limit: None,
            first_plan: false,
            unique: false,
            latency: None,
            existing_bonus: 0.0,
            controllers: BTreeMap::new(),
            topology: None,
            clock: None,
            cloud_policy: None,
            progress: None,
            threads: 1,
        }
    }
}

impl std::fmt::Debug for PlanOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanOptions")
            .field("solutions", &self.solutions)
            .field("time_limit", &self.time_limit)
            .field("node_limit", &self.node_limit)
            .field("first_plan", &self.first_plan)
            .field("unique", &self.unique)
            .field("latency", &self.latency)
            .field("existing_bonus", &self.existing_bonus)
            .field("controllers", &self.controllers.keys().collect::<Vec<_>>())
            .field("topology", &self.topology.is_some())
            .field("clock", &self.clock.is_some())
            .field("progress", &self.progress.is_some())
            .field("threads", &self.threads)
            .field(
                "cloud_policy",
                &self.cloud_policy.as_ref().map(|c| &c.policy.policy_name),
            )
            .finish()
    }
}

/// The solver's deadline, read from the plan's clock.
pub(crate) struct ClockDeadline {
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) at: Duration,
}

impl berth_solver::Deadline for ClockDeadline {
    fn expired(&self) -> bool {
        self.clock.now() >= self.at
    }

    fn remaining(&self) -> Option<Duration> {
        Some(self.at.saturating_sub(self.clock.now()))
    }
}
