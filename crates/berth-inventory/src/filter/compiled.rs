//! A requirement's filters compiled once per demand, and the compact removal causes they
//! produce (spelled out as a [`RemovalReason`] only when asked).

use crate::filter::{AttrFilter, DemandRequirement, RemovalKind, RemovalReason};
use crate::model::{AttrLookup, AttrRef, AttrValue, Candidate, Canon};

/// The first service-type, service-id or attribute check a candidate fails.
///
/// Compiles the requirement's filters on every call; to check many candidates, build a
/// [`DemandFilter`] once.
pub fn check_filters(req: &DemandRequirement, c: &Candidate) -> Option<RemovalReason> {
    DemandFilter::new(req).check(c)
}

/// A requirement's service-type, service-id and attribute filters, compiled once: attribute
/// names resolved to the map key and typed field they read, wanted values reduced to their
/// canonical form. Checking a candidate does not allocate.
#[derive(Debug)]
pub struct DemandFilter<'r> {
    req: &'r DemandRequirement,
    terms: Terms,
    attributes: Vec<AttrTest<'r>>,
}

/// One compiled attribute filter.
#[derive(Debug)]
pub(crate) struct AttrTest<'r> {
    /// Position among the requirement's attribute filters.
    index: u32,
    lookup: AttrLookup<'r>,
    test: Test<'r>,
}

#[derive(Debug)]
enum Test<'r> {
    Eq(Wanted<'r>),
    Any(Vec<Wanted<'r>>),
    Not(Vec<Wanted<'r>>),
}

/// A wanted value in canonical form.
#[derive(Debug)]
enum Wanted<'r> {
    Scalar(Canon<'r>),
    List(Vec<Wanted<'r>>),
}

/// A candidate's value in canonical form (list items stay as they are).
enum Have<'c> {
    Scalar(Canon<'c>),
    List(&'c [AttrValue]),
}

/// Why a candidate was removed, in compact form: which check failed. The requirement's
/// [`Terms`] and the candidate supply the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    ServiceType,
    ServiceId,
    /// The attribute filter at this position names an attribute the candidate lacks.
    MissingAttribute(u32),
    /// The candidate's value fails the attribute filter at this position.
    AttributeMismatch(u32),
    Excluded,
    NotRequired,
}

impl Cause {
    /// The check that failed.
    pub(crate) fn kind(self) -> RemovalKind {
        match self {
            Cause::ServiceType => RemovalKind::ServiceType,
            Cause::ServiceId => RemovalKind::ServiceId,
            Cause::MissingAttribute(_) => RemovalKind::MissingAttribute,
            Cause::AttributeMismatch(_) => RemovalKind::AttributeMismatch,
            Cause::Excluded => RemovalKind::Excluded,
            Cause::NotRequired => RemovalKind::NotRequired,
        }
    }
}

/// What a requirement asked for, as removal reasons quote it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Terms {
    service_type: Vec<String>,
    service_id: Vec<String>,
    /// Attribute filters in the requirement's key order.
    attributes: Vec<(String, AttrFilter)>,
}

impl Terms {
    pub(crate) fn of(req: &DemandRequirement) -> Self {
        Self {
            service_type: req.service_type.clone(),
            service_id: req.service_id.clone(),
            attributes: req
                .attributes
                .iter()
                .map(|(k, f)| (k.clone(), f.clone()))
                .collect(),
        }
    }

    /// The full reason for removing `c` (which must be the candidate `cause` was found on).
    pub(crate) fn reason(&self, cause: Cause, c: &Candidate) -> RemovalReason {
        let attribute = |i: u32| {
            self.attributes
                .get(i as usize)
                .map_or(("", None), |(k, f)| (k.as_str(), Some(f)))
        };
        match cause {
            Cause::ServiceType => RemovalReason::ServiceType {
                expected: self.service_type.clone(),
                found: c.service_type.clone(),
            },
            Cause::ServiceId => RemovalReason::ServiceId {
                expected: self.service_id.clone(),
                found: c.service_id.clone(),
            },
            Cause::MissingAttribute(i) => RemovalReason::MissingAttribute {
                key: attribute(i).0.to_owned(),
            },
            Cause::AttributeMismatch(i) => {
                let (key, filter) = attribute(i);
                match (filter, AttrLookup::new(key).get(c)) {
                    (Some(f), Some(v)) => RemovalReason::AttributeMismatch {
                        key: key.to_owned(),
                        expected: f.clone(),
                        found: v.into_cow().into_owned(),
                    },
                    // Unreachable: causes index the terms of their own requirement, and
                    // the candidate had the attribute when the filter failed.
                    _ => RemovalReason::MissingAttribute {
                        key: key.to_owned(),
                    },
                }
            }
            Cause::Excluded => RemovalReason::Excluded,
            Cause::NotRequired => RemovalReason::NotRequired,
        }
    }
}

impl<'r> Wanted<'r> {
    fn new(v: &'r AttrValue) -> Self {
        match Canon::scalar_or_list(v) {
            Ok(c) => Wanted::Scalar(c),
            Err(items) => Wanted::List(items.iter().map(Wanted::new).collect()),
        }
    }

    fn all(vs: &'r [AttrValue]) -> Vec<Self> {
        vs.iter().map(Wanted::new).collect()
    }
}

impl<'c> Have<'c> {
    fn new(v: AttrRef<'c>) -> Self {
        match v {
            AttrRef::Value(v) => match Canon::scalar_or_list(v) {
                Ok(c) => Have::Scalar(c),
                Err(items) => Have::List(items),
            },
            AttrRef::Str(s) => Have::Scalar(Canon::of_str(s)),
            AttrRef::Float(f) => Have::Scalar(Canon::of_float(f)),
        }
    }

    /// [`AttrValue::matches`]: loose equality, or membership of a wanted scalar in a list.
    fn matches(&self, w: &Wanted<'_>) -> bool {
        match (self, w) {
            (Have::Scalar(c), Wanted::Scalar(x)) => c == x,
            (Have::Scalar(_), Wanted::List(_)) => false,
            (Have::List(items), Wanted::List(ws)) => lists_loosely_eq(items, ws),
            (Have::List(items), Wanted::Scalar(_)) => items.iter().any(|i| loosely_eq(i, w)),
        }
    }
}

/// [`AttrValue::loosely_eq`] against a compiled value.
fn loosely_eq(v: &AttrValue, w: &Wanted<'_>) -> bool {
    match (Canon::scalar_or_list(v), w) {
        (Ok(c), Wanted::Scalar(x)) => c == *x,
        (Err(items), Wanted::List(ws)) => lists_loosely_eq(items, ws),
        _ => false,
    }
}

fn lists_loosely_eq(items: &[AttrValue], ws: &[Wanted<'_>]) -> bool {
    items.len() == ws.len() && items.iter().zip(ws).all(|(i, w)| loosely_eq(i, w))
}

impl Test<'_> {
    /// [`AttrFilter::accepts`].
    fn accepts(&self, have: &Have<'_>) -> bool {
        match self {
            Test::Eq(w) => have.matches(w),
            Test::Any(ws) => ws.is_empty() || ws.iter().any(|w| have.matches(w)),
            Test::Not(ws) => !ws.iter().any(|w| have.matches(w)),
        }
    }
}

impl<'r> DemandFilter<'r> {
    /// Compiles the filters of `req`.
    pub fn new(req: &'r DemandRequirement) -> Self {
        let attributes = req
            .attributes
            .iter()
            .zip(0..)
            .map(|((key, filter), index)| AttrTest {
                index,
                lookup: AttrLookup::new(key),
                test: match filter {
                    AttrFilter::Eq(w) => Test::Eq(Wanted::new(w)),
                    AttrFilter::Any(ws) => Test::Any(Wanted::all(ws)),
                    AttrFilter::Not(ws) => Test::Not(Wanted::all(ws)),
                },
            })
            .collect();
        Self {
            req,
            terms: Terms::of(req),
            attributes,
        }
    }

    /// The first service-type, service-id or attribute check `c` fails.
    pub fn check(&self, c: &Candidate) -> Option<RemovalReason> {
        self.cause(c).map(|cause| self.terms.reason(cause, c))
    }

    /// What removal reasons quote of the requirement.
    pub(crate) fn terms(&self) -> &Terms {
        &self.terms
    }

    /// [`DemandFilter::check`] in compact form.
    pub(crate) fn cause(&self, c: &Candidate) -> Option<Cause> {
        self.service_cause(c).or_else(|| {
            self.attributes.iter().find_map(|a| match a.lookup.get(c) {
                None => Some(a.missing()),
                Some(v) => (!a.test.accepts(&Have::new(v))).then(|| a.mismatch()),
            })
        })
    }

    /// The compiled attribute filters, in the requirement's key order.
    pub(crate) fn attribute_tests(&self) -> &[AttrTest<'r>] {
        &self.attributes
    }

    /// The first service-type or service-id check `c` fails.
    pub(crate) fn service_cause(&self, c: &Candidate) -> Option<Cause> {
        let req = self.req;
        if !req.service_type.is_empty()
            && !c
                .service_type
                .as_ref()
                .is_some_and(|t| req.service_type.contains(t))
        {
            return Some(Cause::ServiceType);
        }
        if !req.service_id.is_empty()
            && !c
                .service_id
                .as_ref()
                .is_some_and(|t| req.service_id.contains(t))
        {
            return Some(Cause::ServiceId);
        }
        None
    }
}

impl<'r> AttrTest<'r> {
    /// Where the filter reads the attribute.
    pub(crate) fn lookup(&self) -> &AttrLookup<'r> {
        &self.lookup
    }

    /// Whether a candidate's value of the attribute passes.
    pub(crate) fn accepts(&self, v: &AttrValue) -> bool {
        self.test.accepts(&Have::new(AttrRef::Value(v)))
    }

    /// The cause for a candidate without the attribute.
    pub(crate) fn missing(&self) -> Cause {
        Cause::MissingAttribute(self.index)
    }

    /// The cause for a candidate whose value does not pass.
    pub(crate) fn mismatch(&self) -> Cause {
        Cause::AttributeMismatch(self.index)
    }
}
