//! Service controllers: capacity fit checks and all-or-nothing reservations.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};

use crate::error::InventoryError;
pub use crate::error::Shortfall;
use crate::ids::CandidateId;
use crate::model::Candidate;

/// The answer of a fit check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "fit")]
pub enum FitResult {
    /// The request fits.
    Fits,
    /// The request does not fit; every dimension that falls short.
    Shortfall {
        /// The missing amounts, by dimension name.
        shortfalls: Vec<Shortfall>,
    },
    /// The controller refused for another reason (bad request, policy).
    Rejected {
        /// Why.
        reason: String,
    },
}

impl FitResult {
    /// Whether the request fits.
    pub fn fits(&self) -> bool {
        matches!(self, Self::Fits)
    }
}

/// One item of a plan to reserve: a demand placed on a candidate with its resource request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationItem {
    /// Demand name.
    pub demand: String,
    /// The chosen candidate.
    pub candidate_id: CandidateId,
    /// Amount per dimension.
    pub request: BTreeMap<String, i64>,
}

/// Handle to a held reservation, used to roll it back.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ReservationToken(pub String);

impl fmt::Display for ReservationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A service controller for `instance_fit` / `region_fit` / `vim_fit` checks and for
/// reservations. Sync and object-safe; implementations use interior mutability so one
/// controller can be shared (`Arc<dyn ServiceController>`).
pub trait ServiceController: Send + Sync {
    /// The controller's name, as templates refer to it (`sdn-c`, `capacity`, ...).
    fn name(&self) -> &str;

    /// Whether `request` (amount per dimension) fits on `candidate` now.
    fn fits(&self, candidate: &Candidate, request: &BTreeMap<String, i64>) -> FitResult;

    /// Reserves every item or none: on error nothing stays reserved.
    fn reserve(&self, items: &[ReservationItem]) -> Result<ReservationToken, InventoryError>;

    /// Releases a reservation made by [`ServiceController::reserve`].
    fn rollback(&self, token: &ReservationToken) -> Result<(), InventoryError>;
}

#[derive(Debug, Default)]
struct Ledger {
    free: BTreeMap<CandidateId, BTreeMap<String, i64>>,
    held: BTreeMap<ReservationToken, Vec<ReservationItem>>,
    next: u64,
}

/// The built-in controller: checks and deducts candidates' `capacity`.
///
/// Invariant: for every candidate, free capacity + amounts held by live reservations
/// equals the capacity it was created with.
#[derive(Debug)]
pub struct CapacityController {
    name: String,
    ledger: Mutex<Ledger>,
}

impl CapacityController {
    /// A controller named `name` tracking the capacity of `candidates`.
    pub fn new<'a>(
        name: impl Into<String>,
        candidates: impl IntoIterator<Item = &'a Candidate>,
    ) -> Self {
        let free = candidates
            .into_iter()
            .map(|c| (c.candidate_id.clone(), c.capacity.clone()))
            .collect();
        Self {
            name: name.into(),
            ledger: Mutex::new(Ledger {
                free,
                held: BTreeMap::new(),
                next: 1,
            }),
        }
    }

    /// Free capacity of a candidate now, if the controller tracks it.
    pub fn free_capacity(&self, id: &str) -> Option<BTreeMap<String, i64>> {
        self.lock().free.get(id).cloned()
    }

    /// Tokens of the reservations held now.
    pub fn held(&self) -> Vec<ReservationToken> {
        self.lock().held.keys().cloned().collect()
    }

    // Every mutation is computed in full before it is applied, so a poisoned lock
    // cannot hide a half-applied change; recover the guard.
    fn lock(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Shortfalls of `request` against `free`; an error for a negative amount.
fn shortfalls(
    id: &CandidateId,
    free: &BTreeMap<String, i64>,
    request: &BTreeMap<String, i64>,
) -> Result<Vec<Shortfall>, InventoryError> {
    let mut out = Vec::new();
    for (dim, &amount) in request {
        if amount < 0 {
            return Err(InventoryError::InvalidRequest {
                candidate_id: id.clone(),
                dimension: dim.clone(),
                amount,
            });
        }
        let available = free.get(dim).copied();
        if amount > 0 && available.is_none_or(|a| a < amount) {
            out.push(Shortfall {
                dimension: dim.clone(),
                requested: amount,
                available,
            });
        }
    }
    Ok(out)
}

impl ServiceController for CapacityController {
    fn name(&self) -> &str {
        &self.name
    }

    fn fits(&self, candidate: &Candidate, request: &BTreeMap<String, i64>) -> FitResult {
        let ledger = self.lock();
        // Untracked candidates are judged by their own advertised capacity.
        let free = ledger
            .free
            .get(&candidate.candidate_id)
            .unwrap_or(&candidate.capacity);
        match shortfalls(&candidate.candidate_id, free, request) {
            Ok(s) if s.is_empty() => FitResult::Fits,
            Ok(shortfalls) => FitResult::Shortfall { shortfalls },
            Err(e) => FitResult::Rejected {
                reason: e.to_string(),
            },
        }
    }

    fn reserve(&self, items: &[ReservationItem]) -> Result<ReservationToken, InventoryError> {
        let mut ledger = self.lock();
        // Work on a copy of the touched entries; commit only if every item fits.
        let mut staged: BTreeMap<CandidateId, BTreeMap<String, i64>> = BTreeMap::new();
        for item in items {
            let id = &item.candidate_id;
            if !staged.contains_key(id) {
                let free = ledger.free.get(id).cloned().ok_or_else(|| {
                    InventoryError::UnknownCandidate {
                        candidate_id: id.clone(),
                    }
                })?;
                staged.insert(id.clone(), free);
            }
            let Some(free) = staged.get_mut(id) else {
                continue;
            };
            let missing = shortfalls(id, free, &item.request)?;
            if !missing.is_empty() {
                return Err(InventoryError::InsufficientCapacity {
                    candidate_id: id.clone(),
                    shortfalls: missing,
                });
            }
            for (dim, amount) in &item.request {
                if let Some(f) = free.get_mut(dim) {
                    *f -= amount;
                }
            }
        }
        for (id, free) in staged {
            ledger.free.insert(id, free);
        }
        let token = ReservationToken(format!("{}-{}", self.name, ledger.next));
        ledger.next += 1;
        ledger.held.insert(token.clone(), items.to_vec());
        Ok(token)
    }

    fn rollback(&self, token: &ReservationToken) -> Result<(), InventoryError> {
        let mut ledger = self.lock();
        let items =
            ledger
                .held
                .remove(token)
                .ok_or_else(|| InventoryError::UnknownReservation {
                    token: token.0.clone(),
                })?;
        for item in items {
            if let Some(free) = ledger.free.get_mut(&item.candidate_id) {
                for (dim, amount) in item.request {
                    if let Some(f) = free.get_mut(&dim) {
                        *f = f.saturating_add(amount);
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
