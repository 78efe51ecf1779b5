//! Demand requirements and the filtering that turns an inventory into a demand's candidates.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::{AttrValue, Candidate, CandidateId, InventoryType};

mod compiled;

pub(crate) use compiled::{AttrTest, Cause, Terms};
pub use compiled::{DemandFilter, check_filters};

/// What a demand asks of an inventory provider: one entry of a template demand's list,
/// mapped by the engine into this crate's own terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DemandRequirement {
    /// Demand name, for messages.
    pub demand: String,
    /// Provider name (`aai`, `multicloud`, ...).
    pub inventory_provider: String,
    /// `cloud` or `service`.
    pub inventory_type: InventoryType,
    /// Accepted service types; empty = any.
    pub service_type: Vec<String>,
    /// Accepted service ids; empty = any.
    pub service_id: Vec<String>,
    /// Attribute filters; a candidate must pass all of them.
    pub attributes: BTreeMap<String, AttrFilter>,
    /// If non-empty, only these candidates (and the existing placement) are kept.
    pub required_candidates: Vec<CandidateId>,
    /// Candidates removed from the search space.
    pub excluded_candidates: Vec<CandidateId>,
    /// The demand's current placement.
    pub existing_placement: Option<CandidateId>,
    /// Predetermined candidates: when non-empty they replace the provider's inventory and
    /// skip service-type, service-id and attribute filters (required/excluded still apply).
    pub candidates: Vec<Candidate>,
    /// Cost given to candidates without one.
    pub default_cost: Option<f64>,
}

impl DemandRequirement {
    /// A requirement with only the provider and type set.
    pub fn new(
        demand: impl Into<String>,
        inventory_provider: impl Into<String>,
        inventory_type: InventoryType,
    ) -> Self {
        Self {
            demand: demand.into(),
            inventory_provider: inventory_provider.into(),
            inventory_type,
            service_type: Vec::new(),
            service_id: Vec::new(),
            attributes: BTreeMap::new(),
            required_candidates: Vec::new(),
            excluded_candidates: Vec::new(),
            existing_placement: None,
            candidates: Vec::new(),
            default_cost: None,
        }
    }
}

/// A filter on one attribute, as in HAS: a value, `{any: [...]}` or `{not: [...]}`.
///
/// The attribute is looked up with [`Candidate::attribute`]: the `attributes` map first,
/// then the typed fields (`cloud_owner`, `cloud-owner`, ...).
///
/// Values compare with [`AttrValue::matches`]: loose scalar equality, and list membership
/// when the candidate's attribute is a list. A candidate without the attribute never passes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttrFilter {
    /// The attribute matches this value.
    Eq(AttrValue),
    /// The attribute matches at least one of these values (an empty list accepts any value).
    Any(Vec<AttrValue>),
    /// The attribute matches none of these values.
    Not(Vec<AttrValue>),
}

impl AttrFilter {
    /// Whether a candidate's attribute value passes.
    pub fn accepts(&self, value: &AttrValue) -> bool {
        match self {
            Self::Eq(w) => value.matches(w),
            Self::Any(ws) => ws.is_empty() || ws.iter().any(|w| value.matches(w)),
            Self::Not(ws) => !ws.iter().any(|w| value.matches(w)),
        }
    }
}

impl fmt::Display for AttrFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Eq(v) => write!(f, "{v}"),
            Self::Any(vs) => write!(f, "any of {}", AttrValue::List(vs.clone())),
            Self::Not(vs) => write!(f, "none of {}", AttrValue::List(vs.clone())),
        }
    }
}

/// Why a candidate was removed from a demand's search space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
#[non_exhaustive]
pub enum RemovalReason {
    /// Its service type is not among those asked for.
    ServiceType {
        /// The accepted types.
        expected: Vec<String>,
        /// The candidate's type, if any.
        found: Option<String>,
    },
    /// Its service id is not among those asked for.
    ServiceId {
        /// The accepted ids.
        expected: Vec<String>,
        /// The candidate's id, if any.
        found: Option<String>,
    },
    /// It lacks an attribute the demand filters on.
    MissingAttribute {
        /// Attribute name.
        key: String,
    },
    /// Its attribute value does not pass the filter.
    AttributeMismatch {
        /// Attribute name.
        key: String,
        /// The filter.
        expected: AttrFilter,
        /// The candidate's value.
        found: AttrValue,
    },
    /// It is in `excluded_candidates`.
    Excluded,
    /// `required_candidates` is given and it is not in it.
    NotRequired,
}

impl fmt::Display for RemovalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ServiceType { expected, found } => write!(
                f,
                "service type {} not in [{}]",
                found.as_deref().unwrap_or("(none)"),
                expected.join(", ")
            ),
            Self::ServiceId { expected, found } => write!(
                f,
                "service id {} not in [{}]",
                found.as_deref().unwrap_or("(none)"),
                expected.join(", ")
            ),
            Self::MissingAttribute { key } => write!(f, "no attribute `{key}`"),
            Self::AttributeMismatch {
                key,
                expected,
                found,
            } => write!(f, "attribute `{key}` is {found}; expected {expected}"),
            Self::Excluded => f.write_str("in excluded_candidates"),
            Self::NotRequired => f.write_str("not in required_candidates"),
        }
    }
}

impl RemovalReason {
    /// Which check this reason is about.
    pub fn kind(&self) -> RemovalKind {
        match self {
            Self::ServiceType { .. } => RemovalKind::ServiceType,
            Self::ServiceId { .. } => RemovalKind::ServiceId,
            Self::MissingAttribute { .. } => RemovalKind::MissingAttribute,
            Self::AttributeMismatch { .. } => RemovalKind::AttributeMismatch,
            Self::Excluded => RemovalKind::Excluded,
            Self::NotRequired => RemovalKind::NotRequired,
        }
    }
}

/// Which check removed a candidate: a [`RemovalReason`] without its details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RemovalKind {
    /// [`RemovalReason::ServiceType`].
    ServiceType,
    /// [`RemovalReason::ServiceId`].
    ServiceId,
    /// [`RemovalReason::MissingAttribute`].
    MissingAttribute,
    /// [`RemovalReason::AttributeMismatch`].
    AttributeMismatch,
    /// [`RemovalReason::Excluded`].
    Excluded,
    /// [`RemovalReason::NotRequired`].
    NotRequired,
}

/// The candidates a resolution removed, in inventory order, each with the first check it
/// failed.
///
/// Compact, so that removing a candidate costs neither an allocation nor a look at the
/// candidate: an entry is the failed check and the candidate's position in a table shared
/// with the provider. [`Removal::reason`] spells out the same [`RemovalReason`] that
/// [`check_filters`] gives. Equality compares candidates and spelled-out reasons.
#[derive(Clone, Default)]
pub struct Removals {
    /// Candidates referred to by position (a provider's inventory).
    table: Arc<[Arc<Candidate>]>,
    /// Removed candidates that are not in `table`.
    own: Vec<Arc<Candidate>>,
    /// What the requirement asked for, quoted by the reasons.
    terms: Terms,
    /// Reasons given in full through [`Removals::push`].
    given: Vec<RemovalReason>,
    entries: Vec<Entry>,
}

/// One removal: where the candidate is and why it went.
#[derive(Debug, Clone, Copy)]
struct Entry {
    place: Place,
    why: Why,
}

#[derive(Debug, Clone, Copy)]
enum Place {
    Table(u32),
    Own(u32),
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Why {
    Cause(Cause),
    Given(u32),
}

/// One entry of [`Removals`]: a removed candidate and why it was removed.
#[derive(Clone, Copy)]
pub struct Removal<'a> {
    candidate: &'a Arc<Candidate>,
    why: Why,
    removals: &'a Removals,
}

impl Removals {
    /// No removals.
    pub fn new() -> Self {
        Self::default()
    }

    /// Removals of candidates held in `table`, quoting `terms`.
    pub(crate) fn over(table: Arc<[Arc<Candidate>]>, terms: Terms) -> Self {
        Self {
            table,
            terms,
            ..Self::default()
        }
    }

    /// Records the removal of `candidate` for a reason given in full (for providers that
    /// build their own [`Resolved`]).
    pub fn push(&mut self, candidate: Arc<Candidate>, reason: RemovalReason) {
        let why = match reason {
            RemovalReason::Excluded => Why::Cause(Cause::Excluded),
            RemovalReason::NotRequired => Why::Cause(Cause::NotRequired),
            other => {
                self.given.push(other);
                Why::Given(index(self.given.len() - 1))
            }
        };
        self.push_own(candidate, why);
    }

    pub(crate) fn push_own(&mut self, candidate: Arc<Candidate>, why: Why) {
        self.own.push(candidate);
        let place = Place::Own(index(self.own.len() - 1));
        self.entries.push(Entry { place, why });
    }

    /// Records the removal of the candidate at `pos` in the table.
    pub(crate) fn push_table(&mut self, pos: u32, cause: Cause) {
        self.entries.push(Entry {
            place: Place::Table(pos),
            why: Why::Cause(cause),
        });
    }

    /// How many candidates were removed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether none were.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The `i`-th removal.
    pub fn get(&self, i: usize) -> Option<Removal<'_>> {
        self.entries.get(i).and_then(|e| self.removal(*e))
    }

    /// The removals in inventory order.
    pub fn iter(&self) -> impl Iterator<Item = Removal<'_>> + '_ {
        self.entries.iter().filter_map(|e| self.removal(*e))
    }

    fn removal(&self, e: Entry) -> Option<Removal<'_>> {
        let candidate = match e.place {
            Place::Table(i) => self.table.get(i as usize),
            Place::Own(i) => self.own.get(i as usize),
        }?;
        Some(Removal {
            candidate,
            why: e.why,
            removals: self,
        })
    }
}

/// A position as stored in an entry (positions beyond `u32` would need 4 billion candidates).
fn index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

impl<'a> Removal<'a> {
    /// The removed candidate.
    pub fn candidate(&self) -> &'a Arc<Candidate> {
        self.candidate
    }

    /// The removed candidate's id.
    pub fn candidate_id(&self) -> &'a CandidateId {
        &self.candidate.candidate_id
    }

    /// Which check removed it.
    pub fn kind(&self) -> RemovalKind {
        match self.why {
            Why::Cause(c) => c.kind(),
            // `Given` indexes `given`, which only grows.
            Why::Given(i) => self
                .removals
                .given
                .get(i as usize)
                .map_or(RemovalKind::Excluded, RemovalReason::kind),
        }
    }

    /// Why it was removed, in full.
    pub fn reason(&self) -> RemovalReason {
        match self.why {
            Why::Cause(c) => self.removals.terms.reason(c, self.candidate),
            // `Given` indexes `given`, which only grows.
            Why::Given(i) => self
                .removals
                .given
                .get(i as usize)
                .cloned()
                .unwrap_or(RemovalReason::Excluded),
        }
    }
}

impl fmt::Debug for Removal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Removal")
            .field("candidate_id", self.candidate_id())
            .field("reason", &self.reason())
            .finish()
    }
}

/// `{candidate id}: {reason}`.
impl fmt::Display for Removal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.candidate_id(), self.reason())
    }
}

impl fmt::Debug for Removals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for Removals {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|(a, b)| a.candidate() == b.candidate() && a.reason() == b.reason())
    }
}

impl FromIterator<(Arc<Candidate>, RemovalReason)> for Removals {
    fn from_iter<I: IntoIterator<Item = (Arc<Candidate>, RemovalReason)>>(iter: I) -> Self {
        let mut out = Removals::new();
        for (c, r) in iter {
            out.push(c, r);
        }
        out
    }
}

/// The serialized form of one removal.
#[derive(Serialize, Deserialize)]
struct RemovalRecord {
    candidate: Arc<Candidate>,
    reason: RemovalReason,
}

/// A list of `{candidate, reason}`.
impl Serialize for Removals {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(|r| RemovalRecord {
            candidate: Arc::clone(r.candidate()),
            reason: r.reason(),
        }))
    }
}

impl<'de> Deserialize<'de> for Removals {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let records = Vec::<RemovalRecord>::deserialize(d)?;
        Ok(records
            .into_iter()
            .map(|r| (r.candidate, r.reason))
            .collect())
    }
}

/// What became of a demand's existing placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlacementStatus {
    /// It is among the resolved candidates.
    Kept,
    /// A filter removed it; the reason is in [`Resolved::removed`].
    Removed,
    /// No candidate of this type has that id.
    Unknown,
}

/// The existing placement of a demand and its fate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExistingPlacement {
    /// The candidate id of the current placement.
    pub candidate_id: CandidateId,
    /// Whether it survived the filters.
    pub status: PlacementStatus,
}

/// A demand's candidates after filtering, and the triage of what was removed and why.
///
/// Candidates are shared with the provider (`Arc`): resolving a demand copies a candidate
/// only when it must change it (a `default_cost` to fill in, zone defaults to apply).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Resolved {
    /// Candidates kept, in inventory order.
    pub candidates: Vec<Arc<Candidate>>,
    /// Candidates removed with the first check that removed them, in inventory order.
    pub removed: Removals,
    /// The existing placement, when the demand has one.
    pub existing_placement: Option<ExistingPlacement>,
}

/// One entry of the pool [`resolve_from`] filters: a borrowed candidate (copied into an
/// `Arc` when kept or removed) or a shared one (never copied).
pub trait PoolEntry {
    /// The candidate.
    fn candidate(&self) -> &Candidate;
    /// The candidate as a shared value.
    fn share(&self) -> Arc<Candidate>;
    /// Whether the candidate is known to carry its zone defaults already (see
    /// [`Candidate::apply_zone_defaults`]), so that resolution need not look.
    fn zone_defaults_applied(&self) -> bool {
        false
    }
}

impl PoolEntry for &Candidate {
    fn candidate(&self) -> &Candidate {
        self
    }
    fn share(&self) -> Arc<Candidate> {
        Arc::new((*self).clone())
    }
}

impl PoolEntry for &Arc<Candidate> {
    fn candidate(&self) -> &Candidate {
        self
    }
    fn share(&self) -> Arc<Candidate> {
        Arc::clone(self)
    }
}

impl PoolEntry for Arc<Candidate> {
    fn candidate(&self) -> &Candidate {
        self
    }
    fn share(&self) -> Arc<Candidate> {
        Arc::clone(self)
    }
}

/// Filters `pool` (candidates of the requirement's provider and type, in inventory order)
/// by the requirement: service type and id, attributes, exclusions, required candidates.
///
/// Each removed candidate is reported once with the first failing check. The existing
/// placement is exempt from `required_candidates` (staying put is always an option) but not
/// from the other filters. Candidates without a cost get `default_cost`. The filters are
/// compiled once (see [`DemandFilter`]), not per candidate; shared pool entries are neither
/// copied when kept nor when removed.
pub fn resolve_from<P: PoolEntry>(
    req: &DemandRequirement,
    pool: impl IntoIterator<Item = P>,
) -> Resolved {
    let names = Names {
        excluded: req.excluded_candidates.iter().map(|c| c.as_str()).collect(),
        required: req.required_candidates.iter().map(|c| c.as_str()).collect(),
        existing: req.existing_placement.as_ref().map(CandidateId::as_str),
    };
    if !req.candidates.is_empty() {
        // Predetermined candidates replace the pool and skip the filters.
        let mut triage = Triage::new(req, Removals::new());
        for c in &req.candidates {
            triage.visit_named(&names, &c, None);
        }
        return triage.finish();
    }
    let filter = DemandFilter::new(req);
    let mut triage = Triage::new(req, Removals::over(Arc::default(), filter.terms().clone()));
    for entry in pool {
        let cause = filter.cause(entry.candidate());
        triage.visit_named(&names, &entry, cause);
    }
    triage.finish()
}

/// The requirement's candidate id lists, matched by name.
struct Names<'r> {
    excluded: BTreeSet<&'r str>,
    required: BTreeSet<&'r str>,
    existing: Option<&'r str>,
}

/// The running state of a resolution: what was kept, what was removed.
pub(crate) struct Triage<'r> {
    req: &'r DemandRequirement,
    seen_existing: bool,
    kept: Vec<Arc<Candidate>>,
    removals: Removals,
}

impl<'r> Triage<'r> {
    /// Starts resolving `req`, recording removals in `removals`.
    pub(crate) fn new(req: &'r DemandRequirement, removals: Removals) -> Self {
        Self {
            req,
            seen_existing: false,
            kept: Vec::new(),
            removals,
        }
    }

    /// The check a candidate fails, if any: the filters' verdict `filtered`, else
    /// `excluded_candidates`, else `required_candidates` (which the existing placement is
    /// exempt from). The membership tests run only when reached.
    pub(crate) fn cause(
        &mut self,
        filtered: Option<Cause>,
        is_existing: bool,
        excluded: impl FnOnce() -> bool,
        required: impl FnOnce() -> bool,
    ) -> Option<Cause> {
        self.seen_existing |= is_existing;
        let required_given = !self.req.required_candidates.is_empty();
        filtered
            .or_else(|| excluded().then_some(Cause::Excluded))
            .or_else(|| {
                (required_given && !is_existing && !required()).then_some(Cause::NotRequired)
            })
    }

    /// Keeps or removes `entry`, matching it by id.
    fn visit_named(&mut self, names: &Names<'_>, entry: &impl PoolEntry, filtered: Option<Cause>) {
        let id = entry.candidate().candidate_id.as_str();
        let is_existing = names.existing == Some(id);
        let excluded = || names.excluded.contains(id);
        let required = || names.required.contains(id);
        match self.cause(filtered, is_existing, excluded, required) {
            Some(cause) => self.removals.push_own(entry.share(), Why::Cause(cause)),
            None => self.keep(entry),
        }
    }

    /// Removes the candidate at `pos` of the removals' table.
    pub(crate) fn remove_at(&mut self, pos: usize, cause: Cause) {
        self.removals.push_table(index(pos), cause);
    }

    /// Keeps `entry`, with the requirement's `default_cost` and zone defaults filled in.
    pub(crate) fn keep(&mut self, entry: &impl PoolEntry) {
        let c = entry.candidate();
        let fill_cost = c.cost.is_none() && self.req.default_cost.is_some();
        let fill_zones = !entry.zone_defaults_applied() && c.lacks_zone_defaults();
        let kept = if fill_cost || fill_zones {
            let mut kept = c.clone();
            if kept.cost.is_none() {
                kept.cost = self.req.default_cost;
            }
            kept.apply_zone_defaults();
            Arc::new(kept)
        } else {
            entry.share()
        };
        self.kept.push(kept);
    }

    pub(crate) fn finish(self) -> Resolved {
        let kept = self.kept;
        let existing_placement = self.req.existing_placement.as_ref().map(|id| {
            let status = if kept.iter().any(|c| &c.candidate_id == id) {
                PlacementStatus::Kept
            } else if self.seen_existing {
                PlacementStatus::Removed
            } else {
                PlacementStatus::Unknown
            };
            ExistingPlacement {
                candidate_id: id.clone(),
                status,
            }
        });
        Resolved {
            candidates: kept,
            removed: self.removals,
            existing_placement,
        }
    }
}

#[cfg(test)]
mod tests;
