//! The plan service: accepted plans are stored (status `template`) before the caller hears
//! back, solved on a bounded worker pool (the engine in blocking threads, `timeout` enforced),
//! their `reservations` made all-or-nothing, and resumed after a restart.
//!
//! Workers take plans from the store's plan queue, not from this process: every daemon on one
//! database solves plans accepted by any of them, each plan once. A worker claims a plan for
//! `claim_secs`, renews the claim while it works and completes it when the plan is recorded;
//! a daemon that dies mid-plan leaves a claim that runs out, and another worker takes the plan.
//! A daemon claims the plans it accepts in the same write that stores them and hands them to
//! its own workers, so a single daemon pays no extra write per plan; recording the outcome
//! completes the claim in the same write too.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::inventory::SharedInventory;
use berth_calendar::{
    Amounts, Applied, Command, ReservationQuery, ReservationRequest, ReservationState,
};
use berth_engine::{PlanOptions, PlanOutcome, Status};
use berth_store::{NewPlan, PlanRecord, PlanUpdate, Store, StoreError};
use berth_template::Template;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::{Mutex, mpsc};

use crate::clock::WallClock;
use crate::reservations::ReservationService;
use crate::status::PlanStatus;
use crate::{ServiceError, check_name};

/// A plan request (HAS `POST /v1/plans`), already decoded from the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRequest {
    /// Plan name.
    pub name: String,
    /// Client-chosen id (a UUID is generated otherwise).
    #[serde(default)]
    pub id: Option<String>,
    /// The template: a JSON object, or YAML/JSON text.
    pub template: serde_json::Value,
    /// How many plans; `None` = all (up to `limit` or the service's cap).
    #[serde(default)]
    pub num_solution: Option<usize>,
    /// Solve time limit in seconds.
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Cap on the number of plans.
    #[serde(default)]
    pub limit: Option<usize>,
    /// `get_file` contents by name.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
}

/// A plan as the API reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Status.
    pub status: PlanStatus,
    /// Why it failed, or what was found.
    pub message: Option<String>,
    /// The engine's outcome (`berth solve` JSON contract) once solved.
    pub outcome: Option<serde_json::Value>,
    /// Reservation ids made for it.
    pub reservations: Vec<String>,
    /// The node whose worker finished it.
    pub solved_by: Option<String>,
    /// When accepted.
    pub created: DateTime<Utc>,
    /// Last change.
    pub updated: DateTime<Utc>,
}

/// Plan service settings.
#[derive(Debug, Clone)]
pub struct PlanConfig {
    /// Worker tasks (plans solved at once).
    pub workers: usize,
    /// Accepted plans not yet finished; more are refused as unavailable.
    pub max_pending: usize,
    /// Timeout when the request gives none, in seconds.
    pub default_timeout: u64,
    /// Largest timeout accepted, in seconds.
    pub max_timeout: u64,
    /// Cap on plans per request (`num_solution: all`).
    pub max_solutions: usize,
    /// Length of a reservation made for a plan, in hours, unless its properties say otherwise.
    pub reservation_hours: i64,
    /// Template parsing limits.
    pub limits: berth_template::Limits,
    /// This daemon's name in the plan queue (claim owner, `solved_by`). Claims held under it
    /// are released at start, so it must be unique among running daemons.
    pub node: String,
    /// How long a claim on a plan lasts unless renewed (renewed every third of it while the
    /// plan is worked on); a dead daemon's plan waits this long before another takes it.
    pub claim_secs: u64,
    /// How often idle workers look for plans accepted by other daemons.
    pub poll: Duration,
    /// Search threads of each plan (0: one per core); `workers` plans solve at once.
    pub threads: usize,
    /// Cloud selection policy applied to every plan (to the demands it names).
    pub cloud_policy: Option<Arc<berth_engine::CloudPolicyInput>>,
}

impl Default for PlanConfig {
    fn default() -> Self {
        PlanConfig {
            workers: 2,
            max_pending: 10_000,
            default_timeout: 300,
            max_timeout: 3600,
            max_solutions: 50,
            reservation_hours: 24,
            limits: berth_template::Limits::default(),
            node: "local".to_owned(),
            claim_secs: 30,
            poll: Duration::from_millis(500),
            threads: 1,
            cloud_policy: None,
        }
    }
}

/// The plans, their store, and the statuses of plans this process is working on.
pub struct PlanService {
    store: Arc<dyn Store>,
    inventory: SharedInventory,
    reservations: Arc<ReservationService>,
    clock: Arc<dyn WallClock>,
    cfg: PlanConfig,
    /// Transient statuses (translating .. reserving) of plans solved here; not persisted.
    working: Mutex<HashMap<String, PlanStatus>>,
    /// Plans this process accepted, claimed until the given time, for its own workers.
    accepted: mpsc::UnboundedSender<(String, DateTime<Utc>)>,
    accepted_rx: Mutex<mpsc::UnboundedReceiver<(String, DateTime<Utc>)>>,
    /// Until when this daemon's workers leave the store's queue alone: set `poll` ahead when
    /// a claim found nothing, so a busy daemon asks the queue once per `poll`, not once per
    /// plan it finishes.
    queue_quiet_until: std::sync::Mutex<Option<Instant>>,
    /// Plans this process finished or deleted, for [`FinalWatch`].
    finals: tokio::sync::broadcast::Sender<Final>,
}

/// A plan this process finished or deleted: `plan` as recorded, `None` when the record was not
/// written here (deleted, or recorded elsewhere) and must be read.
#[derive(Debug, Clone)]
struct Final {
    id: String,
    plan: Option<Arc<Plan>>,
}

/// Waits for one plan's end, from before the read that found it unfinished (see
/// [`PlanService::watch_final`]), so an end in between is not missed.
pub struct FinalWatch {
    finals: tokio::sync::broadcast::Receiver<Final>,
}

fn parse_status(s: &str) -> PlanStatus {
    PlanStatus::ALL
        .into_iter()
        .find(|x| x.as_str() == s)
        .unwrap_or(PlanStatus::Error)
}

fn to_plan(r: PlanRecord, working: &HashMap<String, PlanStatus>) -> Plan {
    let mut status = parse_status(&r.status);
    if status == PlanStatus::Template
        && let Some(w) = working.get(&r.id)
    {
        status = *w;
    }
    let result = r.result.unwrap_or_default();
    let reservations = result
        .get("reservations")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    Plan {
        id: r.id,
        name: r.name,
        status,
        message: r.message,
        outcome: result.get("outcome").cloned().filter(|v| !v.is_null()),
        reservations,
        solved_by: result
            .get("solved_by")
            .and_then(|v| v.as_str())
            .map(str::to_owned),
        created: r.created_at,
        updated: r.updated_at,
    }
}

impl PlanService {
    /// Starts `cfg.workers` workers on the store's plan queue, after releasing the claims an
    /// earlier run under the same node name left (so its unfinished plans resume at once).
    /// `inventory` is a provider, or a [`SharedInventory`] an inventory reload replaces (each
    /// plan resolves against the one it took when it started solving).
    pub async fn start(
        store: Arc<dyn Store>,
        inventory: impl Into<SharedInventory>,
        reservations: Arc<ReservationService>,
        clock: Arc<dyn WallClock>,
        cfg: PlanConfig,
    ) -> Result<Arc<PlanService>, ServiceError> {
        let released = store.release_plan_claims(&cfg.node).await?;
        if released > 0 {
            tracing::info!(plans = released, node = %cfg.node, "resuming plans claimed before a restart");
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let svc = Arc::new(PlanService {
            store,
            inventory: inventory.into(),
            reservations,
            clock,
            cfg,
            working: Mutex::new(HashMap::new()),
            accepted: tx,
            accepted_rx: Mutex::new(rx),
            queue_quiet_until: std::sync::Mutex::new(None),
            finals: tokio::sync::broadcast::channel(256).0,
        });
        for _ in 0..svc.cfg.workers.max(1) {
            let svc = Arc::clone(&svc);
            tokio::spawn(async move { svc.work().await });
        }
        Ok(svc)
    }

    fn hold(&self) -> Duration {
        Duration::from_secs(self.cfg.claim_secs.max(1))
    }

    /// One worker: plans this process accepted (claimed with their creation) first, then
    /// plans claimed from the queue; idle until one is accepted or the poll interval passes.
    async fn work(&self) {
        loop {
            // In a cluster a plan's reservations are calendar writes, which only the lease
            // holder commits: the holder's workers alone claim plans, so a plan taken over
            // from a dead daemon is not solved where it cannot reserve.
            if !self.reservations.writes_here() {
                tokio::time::sleep(self.cfg.poll).await;
                continue;
            }
            let local = self.accepted_rx.lock().await.try_recv().ok();
            if let Some((id, until)) = local {
                self.solve_accepted(&id, until).await;
                continue;
            }
            if let Some(left) = self.queue_quiet_for() {
                if let Some((id, until)) = self.next_accepted(left).await {
                    self.solve_accepted(&id, until).await;
                }
                continue;
            }
            match self
                .store
                .claim_plan(&self.cfg.node, self.clock.now(), self.hold())
                .await
            {
                Ok(Some(claim)) => {
                    if claim.attempts > 1 {
                        tracing::info!(plan = %claim.plan_id, attempts = claim.attempts, "taking over a plan whose claim ran out");
                    }
                    self.solve_claimed(&claim.plan_id).await;
                }
                Ok(None) => {
                    if let Ok(mut q) = self.queue_quiet_until.lock() {
                        *q = Some(Instant::now() + self.cfg.poll);
                    }
                    if let Some((id, until)) = self.next_accepted(self.cfg.poll).await {
                        self.solve_accepted(&id, until).await;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot claim a plan");
                    tokio::time::sleep(self.cfg.poll).await;
                }
            }
        }
    }

    /// How long the store's queue is still left alone after a claim found it empty.
    fn queue_quiet_for(&self) -> Option<Duration> {
        let until = (*self.queue_quiet_until.lock().ok()?)?;
        until
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
    }

    /// The next plan accepted here, waiting at most `wait`.
    async fn next_accepted(&self, wait: Duration) -> Option<(String, DateTime<Utc>)> {
        let mut rx = self.accepted_rx.lock().await;
        tokio::select! {
            next = rx.recv() => next,
            () = tokio::time::sleep(wait) => None,
        }
    }

    /// Solves a plan accepted here, claimed until `until`. A plan that waited long enough for
    /// its claim to get short is renewed first, and skipped when another daemon took it over.
    async fn solve_accepted(&self, id: &str, until: DateTime<Utc>) {
        let left = until - self.clock.now();
        if left < chrono::TimeDelta::from_std(self.hold() / 2).unwrap_or_default() {
            match self
                .store
                .renew_plan_claim(id, &self.cfg.node, self.clock.now(), self.hold())
                .await
            {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => {
                    // The claim runs out and the plan is claimed from the queue again.
                    tracing::warn!(plan = id, error = %e, "cannot renew a plan claim");
                    return;
                }
            }
        }
        self.solve_claimed(id).await;
    }

    /// Runs a claimed plan while renewing the claim; recording the outcome completes it.
    async fn solve_claimed(&self, id: &str) {
        let node = self.cfg.node.as_str();
        let renew = async {
            loop {
                tokio::time::sleep(self.hold() / 3).await;
                match self
                    .store
                    .renew_plan_claim(id, node, self.clock.now(), self.hold())
                    .await
                {
                    Ok(true) => {}
                    Ok(false) => {
                        // Another worker may solve it too; recording the result stays
                        // compare-and-set, so only one outcome is kept.
                        tracing::warn!(plan = id, "lost the claim on a plan being solved");
                        std::future::pending::<()>().await;
                    }
                    Err(e) => tracing::warn!(plan = id, error = %e, "cannot renew a plan claim"),
                }
            }
        };
        tokio::select! {
            () = self.run(id) => {}
            () = renew => {}
        }
    }

    /// Takes a plan that needs no solving (finished, or gone) out of the queue.
    async fn complete(&self, id: &str) {
        if let Err(e) = self.store.complete_plan_claim(id, &self.cfg.node).await {
            tracing::warn!(plan = id, error = %e, "cannot complete a plan claim");
        }
    }

    /// Accepts a plan: checks the request, stores it with status `template`, queues it.
    pub async fn accept(&self, mut request: PlanRequest) -> Result<Plan, ServiceError> {
        check_name("name", &request.name).map_err(|m| ServiceError::invalid_at("name", m))?;
        if !(request.template.is_object() || request.template.is_string()) {
            return Err(ServiceError::invalid_at(
                "template",
                "`template` is neither an object nor text; expected an object or YAML/JSON text",
            ));
        }
        if let Some(t) = request.timeout
            && (t == 0 || t > self.cfg.max_timeout)
        {
            return Err(ServiceError::invalid(format!(
                "`timeout` {t} is out of range; expected 1..={}",
                self.cfg.max_timeout
            )));
        }
        let id = match request.id.take().filter(|s| !s.is_empty()) {
            Some(id) => {
                check_name("id", &id).map_err(|m| ServiceError::invalid_at("id", m))?;
                if id.len() > 128 || id.contains('/') || id == "." || id == ".." {
                    return Err(ServiceError::invalid_at(
                        "id",
                        format!(
                            "`id` is `{id}`; expected at most 128 bytes without `/` (it is used in URLs)"
                        ),
                    ));
                }
                id
            }
            None => uuid::Uuid::new_v4().to_string(),
        };
        let pending = self.store.count_queued_plans().await?;
        if pending >= u64::try_from(self.cfg.max_pending).unwrap_or(u64::MAX) {
            return Err(ServiceError::Unavailable {
                message: format!("{pending} plans are queued or being solved; try again later"),
            });
        }
        let new = NewPlan {
            id: id.clone(),
            name: request.name.clone(),
            status: PlanStatus::Template.as_str().to_owned(),
            request: serde_json::to_value(&request).map_err(ServiceError::store)?,
            created_at: self.clock.now(),
        };
        // Claimed with its creation: this daemon solves what it accepts unless it dies first.
        // In a cluster, a daemon that cannot write the calendar (not the lease holder) only
        // queues it: the holder, which can reserve, claims it.
        let until = new.created_at
            + chrono::TimeDelta::from_std(self.hold()).unwrap_or(chrono::TimeDelta::MAX);
        let claim_here = self.reservations.writes_here();
        let created = if claim_here {
            self.store
                .create_plan_claimed(&new, &self.cfg.node, until)
                .await
        } else {
            self.store.create_plan(&new).await
        };
        let rec = match created {
            Ok(r) => r,
            Err(StoreError::Duplicate { .. }) => {
                // The same request again (a client retry) gets the plan it created.
                let existing = self.store.get_plan(&id).await?;
                return match existing {
                    Some(r) if r.request == new.request => {
                        let working = self.working.lock().await;
                        Ok(to_plan(r, &working))
                    }
                    _ => Err(ServiceError::invalid(format!("plan `{id}` already exists"))),
                };
            }
            Err(e) => return Err(e.into()),
        };
        metrics::counter!("berth_plans_accepted_total").increment(1);
        self.announce(&id, Some(PlanStatus::Template));
        if claim_here {
            let _ = self.accepted.send((id, until));
        }
        Ok(to_plan(rec, &HashMap::new()))
    }

    /// One plan.
    pub async fn get(&self, id: &str) -> Result<Option<Plan>, ServiceError> {
        let rec = self.store.get_plan(id).await?;
        let working = self.working.lock().await;
        Ok(rec.map(|r| to_plan(r, &working)))
    }

    /// Plan `id` once it is final (`done`, `not found`, `error`) or gone, waiting at most
    /// `wait` (as it is then otherwise). A plan finished here is seen at once; one finished by
    /// another daemon when the store is read again, every `poll`.
    pub async fn wait_final(&self, id: &str, wait: Duration) -> Result<Option<Plan>, ServiceError> {
        let watch = self.watch_final();
        let plan = self.get(id).await?;
        watch.until_final(self, id, plan, wait).await
    }

    /// Starts watching for plan ends: take it before reading the plan that is to be waited on
    /// (then [`FinalWatch::until_final`]).
    pub fn watch_final(&self) -> FinalWatch {
        FinalWatch {
            finals: self.finals.subscribe(),
        }
    }

    /// Every plan, by creation time then id.
    pub async fn list(&self) -> Result<Vec<Plan>, ServiceError> {
        let recs = self.store.list_plans().await?;
        let working = self.working.lock().await;
        Ok(recs.into_iter().map(|r| to_plan(r, &working)).collect())
    }

    /// Plans per status (for metrics).
    pub async fn counts(&self) -> Result<BTreeMap<PlanStatus, usize>, ServiceError> {
        let mut out: BTreeMap<PlanStatus, usize> =
            PlanStatus::ALL.iter().map(|s| (*s, 0)).collect();
        for p in self.list().await? {
            *out.entry(p.status).or_default() += 1;
        }
        Ok(out)
    }

    /// Deletes a plan (a running solve finishes but its result is dropped).
    pub async fn delete(&self, id: &str) -> Result<(), ServiceError> {
        self.store.delete_plan(id).await?;
        self.working.lock().await.remove(id);
        self.announce(id, None);
        let _ = self.finals.send(Final {
            id: id.to_owned(),
            plan: None,
        });
        Ok(())
    }

    fn announce(&self, id: &str, status: Option<PlanStatus>) {
        self.reservations.announce(crate::Change::Plan {
            id: id.to_owned(),
            status,
        });
    }

    async fn set_status(&self, id: &str, status: PlanStatus) {
        self.working.lock().await.insert(id.to_owned(), status);
        self.announce(id, Some(status));
    }

    /// Records a finished plan and completes its claim (in the same write when it records).
    /// `version` is the record's version when the worker read it to solve: the write is
    /// compare-and-set on it, so a plan recorded or deleted meanwhile is left as it is.
    async fn finish(
        &self,
        id: &str,
        version: u64,
        status: PlanStatus,
        message: Option<String>,
        outcome: Option<serde_json::Value>,
        reservations: Vec<String>,
    ) {
        let update = PlanUpdate {
            status: status.as_str().to_owned(),
            result: Some(serde_json::json!({
                "outcome": outcome,
                "reservations": reservations,
                "solved_by": self.cfg.node,
            })),
            message,
            updated_at: self.clock.now(),
        };
        let written = self
            .store
            .finish_plan(id, version, &update, &self.cfg.node)
            .await;
        let recorded = match written {
            Ok(rec) => Some(Arc::new(to_plan(rec, &HashMap::new()))),
            // Recorded elsewhere, or deleted.
            Err(StoreError::NotFound { .. } | StoreError::VersionConflict { .. }) => {
                self.complete(id).await;
                None
            }
            // Not stored: the plan stays queued and is solved again once the claim runs out.
            Err(e) => {
                tracing::error!(plan = id, error = %e, "cannot record a finished plan");
                None
            }
        };
        self.working.lock().await.remove(id);
        self.announce(id, Some(status));
        let _ = self.finals.send(Final {
            id: id.to_owned(),
            plan: recorded,
        });
        metrics::counter!("berth_plans_finished_total", "status" => status.as_str()).increment(1);
    }

    /// Solves one plan end to end; every failure becomes status `error` with the reason. A
    /// plan that cannot be read stays claimed until the claim runs out, then is tried again.
    async fn run(&self, id: &str) {
        let started = Instant::now();
        let (request, version) = match self.store.get_plan(id).await {
            Ok(Some(r)) if r.status == PlanStatus::Template.as_str() => {
                match serde_json::from_value::<PlanRequest>(r.request) {
                    Ok(req) => (req, r.version),
                    Err(e) => {
                        self.finish(
                            id,
                            r.version,
                            PlanStatus::Error,
                            Some(format!("unreadable plan request: {e}")),
                            None,
                            Vec::new(),
                        )
                        .await;
                        return;
                    }
                }
            }
            Ok(_) => {
                self.complete(id).await;
                return;
            }
            Err(e) => {
                tracing::error!(plan = id, error = %e, "cannot read an accepted plan");
                return;
            }
        };
        let (status, message, outcome, reservations) = self.solve(id, request).await;
        metrics::histogram!("berth_plan_duration_seconds").record(started.elapsed().as_secs_f64());
        tracing::info!(
            plan = id,
            node = %self.cfg.node,
            status = status.as_str(),
            ms = started.elapsed().as_millis() as u64,
            "plan finished"
        );
        self.finish(id, version, status, message, outcome, reservations)
            .await;
    }

    async fn solve(
        &self,
        id: &str,
        request: PlanRequest,
    ) -> (
        PlanStatus,
        Option<String>,
        Option<serde_json::Value>,
        Vec<String>,
    ) {
        self.set_status(id, PlanStatus::Translating).await;
        let opts = berth_template::LoadOptions {
            files: request.files.clone(),
            limits: self.cfg.limits.clone(),
            ..Default::default()
        };
        let tpl = request.template.clone();
        let loaded = tokio::task::spawn_blocking(move || match &tpl {
            serde_json::Value::String(text) => berth_template::load(text, &opts),
            other => berth_template::load_json(other, &opts),
        })
        .await;
        let template = match loaded {
            Ok(Ok(t)) => Arc::new(t),
            Ok(Err(diags)) => {
                let errors: Vec<String> = diags
                    .iter()
                    .filter(|d| d.is_error())
                    .map(ToString::to_string)
                    .collect();
                return (
                    PlanStatus::Error,
                    Some(format!("invalid template: {}", errors.join("; "))),
                    None,
                    Vec::new(),
                );
            }
            Err(e) => {
                return (
                    PlanStatus::Error,
                    Some(format!("translation failed: {e}")),
                    None,
                    Vec::new(),
                );
            }
        };
        self.set_status(id, PlanStatus::Translated).await;
        self.set_status(id, PlanStatus::Solving).await;
        let timeout = request
            .timeout
            .unwrap_or(self.cfg.default_timeout)
            .clamp(1, self.cfg.max_timeout);
        let cap = request
            .limit
            .unwrap_or(self.cfg.max_solutions)
            .clamp(1, self.cfg.max_solutions);
        let opts = PlanOptions {
            solutions: request.num_solution.unwrap_or(cap).clamp(1, cap),
            time_limit: Some(Duration::from_secs(timeout)),
            threads: self.cfg.threads,
            cloud_policy: self.cfg.cloud_policy.clone(),
            ..PlanOptions::default()
        };
        let inventory = self.inventory.current();
        let (t, inv) = (Arc::clone(&template), Arc::clone(&inventory));
        let handle =
            tokio::task::spawn_blocking(move || berth_engine::plan(&t, inv.as_ref(), &opts));
        // The engine stops itself at the time limit; the outer guard covers a runaway step.
        let outcome = match tokio::time::timeout(
            Duration::from_secs(timeout) + Duration::from_secs(2),
            handle,
        )
        .await
        {
            Ok(Ok(Ok(o))) => o,
            Ok(Ok(Err(e))) => {
                let o = PlanOutcome::from_error(&e);
                return (
                    PlanStatus::Error,
                    Some(e.to_string()),
                    Some(o.to_json()),
                    Vec::new(),
                );
            }
            Ok(Err(e)) => {
                return (
                    PlanStatus::Error,
                    Some(format!("solver failed: {e}")),
                    None,
                    Vec::new(),
                );
            }
            Err(_) => {
                return (
                    PlanStatus::Error,
                    Some(format!("plan timed out after {timeout} s")),
                    None,
                    Vec::new(),
                );
            }
        };
        let json = map::with_map(outcome.to_json(), &template, inventory.as_ref());
        match outcome.status {
            Status::NotFound => {
                return (
                    PlanStatus::NotFound,
                    Some(outcome.message),
                    Some(json),
                    Vec::new(),
                );
            }
            Status::Error => {
                return (
                    PlanStatus::Error,
                    Some(outcome.message),
                    Some(json),
                    Vec::new(),
                );
            }
            Status::Solved => {}
        }
        self.set_status(id, PlanStatus::Solved).await;
        if template.reservations.items.is_empty() {
            return (
                PlanStatus::Done,
                Some(outcome.message),
                Some(json),
                Vec::new(),
            );
        }
        self.set_status(id, PlanStatus::Reserving).await;
        match self.reserve(id, &template, &outcome).await {
            Ok(ids) => (PlanStatus::Done, Some(outcome.message), Some(json), ids),
            Err(e) => (
                PlanStatus::Error,
                Some(format!("reservation failed, nothing reserved: {e}")),
                Some(json),
                Vec::new(),
            ),
        }
    }

    /// Reserves the best plan's candidates: one calendar reservation per (reservation, demand),
    /// all in one append or none. A plan resumed after a crash finds its earlier reservations.
    async fn reserve(
        &self,
        id: &str,
        template: &Template,
        outcome: &PlanOutcome,
    ) -> Result<Vec<String>, ServiceError> {
        let existing = self
            .reservations
            .read_all(|partition, cal| {
                let q = ReservationQuery::default();
                cal.query_reservations(&q)
                    .into_iter()
                    .filter(|r| {
                        r.attributes.get("plan").map(String::as_str) == Some(id)
                            && r.state != ReservationState::Cancelled
                    })
                    .map(|r| crate::qualify(partition, r.id))
                    .collect::<Vec<_>>()
            })
            .await?
            .concat();
        if !existing.is_empty() {
            return Ok(existing);
        }
        let best = outcome
            .solutions
            .first()
            .ok_or_else(|| ServiceError::invalid("the plan has no solution"))?;
        let now = self.clock.now();
        let mut commands = Vec::new();
        for (name, item) in &template.reservations.items {
            let amounts = reservation_amounts(item);
            if amounts.is_zero() {
                return Err(ServiceError::invalid(format!(
                    "reservation `{name}` names no amounts; expected numeric entries in its `request` or properties"
                )));
            }
            let hours = item
                .properties
                .get("duration_hours")
                .and_then(serde_json::Value::as_i64)
                .unwrap_or(self.cfg.reservation_hours);
            for demand in &item.demands {
                let placement = best.placements.get(demand).ok_or_else(|| {
                    ServiceError::invalid(format!(
                        "reservation `{name}` names demand `{demand}` that has no placement"
                    ))
                })?;
                let zone = placement
                    .get("candidate_id")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default();
                let req = ReservationRequest::new(zone, amounts.clone())
                    .ending(now + chrono::TimeDelta::hours(hours.max(1)))
                    .attribute("plan", id)
                    .attribute("reservation", name.as_str())
                    .attribute("demand", demand.as_str());
                commands.push(Command::CreateReservation(req));
            }
        }
        let outcomes = self.reservations.batch(commands).await?;
        Ok(outcomes
            .into_iter()
            .filter_map(|c| match c.outcome.applied {
                Applied::ReservationCreated { id, .. } => {
                    Some(crate::qualify(c.partition.as_deref(), id))
                }
                _ => None,
            })
            .collect())
    }
}

/// Amounts of a template reservation: the non-negative integers of its `request` object, else
/// of its properties (`controller` and `duration_hours` aside).
fn reservation_amounts(item: &berth_template::Reservation) -> Amounts {
    let from = |m: &serde_json::Map<String, serde_json::Value>| {
        let mut a = Amounts::new();
        for (k, v) in m {
            let q = v
                .as_u64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()));
            if let Some(q) = q
                && k != "duration_hours"
            {
                a = a.with(k.as_str(), q);
            }
        }
        a
    };
    if let Some(serde_json::Value::Object(m)) = &item.request {
        return from(m);
    }
    let props: serde_json::Map<String, serde_json::Value> = item
        .properties
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    from(&props)
}

mod map;

impl FinalWatch {
    /// `plan` (plan `id` as read after this watch began) once it is final or gone, waiting at
    /// most `wait`; as it is then otherwise.
    pub async fn until_final(
        mut self,
        svc: &PlanService,
        id: &str,
        mut plan: Option<Plan>,
        wait: Duration,
    ) -> Result<Option<Plan>, ServiceError> {
        use tokio::sync::broadcast::error::RecvError;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let now = tokio::time::Instant::now();
            if plan.as_ref().is_none_or(|p| p.status.is_final()) || now >= deadline {
                return Ok(plan);
            }
            let reread = (now + svc.cfg.poll).min(deadline);
            loop {
                tokio::select! {
                    got = self.finals.recv() => match got {
                        Ok(f) if f.id != id => {}
                        Ok(Final { plan: Some(p), .. }) => return Ok(Some((*p).clone())),
                        Ok(_) | Err(RecvError::Lagged(_)) => break,
                        Err(RecvError::Closed) => {
                            tokio::time::sleep_until(reread).await;
                            break;
                        }
                    },
                    () = tokio::time::sleep_until(reread) => break,
                }
            }
            plan = svc.get(id).await?;
        }
    }
}

#[cfg(test)]
mod tests;
