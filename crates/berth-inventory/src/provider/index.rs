//! The static provider's attribute index: every candidate's attribute values as small
//! integers, so that resolving a demand reads contiguous memory instead of each candidate's
//! maps and strings, and checks each distinct value once per filter.

use std::collections::BTreeMap;

use crate::filter::{AttrTest, Cause, DemandFilter};
use crate::model::{AttrRef, AttrValue, Candidate, Field};

/// Marks a candidate without a value in a field column.
const NONE: u32 = u32::MAX;

/// Attribute values of the candidates, by position in the inventory.
///
/// Invariant: value ids index the distinct values of their key or field; positions are
/// those of the candidates the index was built from.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct AttrIndex {
    /// Ids of the `attributes` map keys.
    keys: BTreeMap<String, u32>,
    /// The map entries of candidate `i` are `entries[starts[i]..starts[i + 1]]`.
    starts: Vec<usize>,
    /// `(key id, value id)` pairs.
    entries: Vec<(u32, u32)>,
    /// Distinct values per key id.
    key_values: Vec<Vec<AttrValue>>,
    /// Per typed field (in [`Field::ALL`] order): a value id per candidate, or [`NONE`].
    fields: Vec<Column>,
}

/// One typed field of every candidate.
#[derive(Debug, Clone, PartialEq, Default)]
struct Column {
    ids: Vec<u32>,
    values: Vec<AttrValue>,
}

/// A value's identity for sharing ids: equal identities are equal values.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Ident<'a> {
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(&'a str),
    List(Vec<Ident<'a>>),
}

impl<'a> Ident<'a> {
    fn of(v: &'a AttrValue) -> Self {
        match v {
            AttrValue::Bool(b) => Ident::Bool(*b),
            AttrValue::Int(i) => Ident::Int(*i),
            AttrValue::Float(f) => Ident::Float(f.to_bits()),
            AttrValue::Str(s) => Ident::Str(s),
            AttrValue::List(items) => Ident::List(items.iter().map(Ident::of).collect()),
        }
    }
}

/// Distinct values and their ids, in first-seen order.
struct Interner<'a> {
    ids: BTreeMap<Ident<'a>, u32>,
    values: Vec<AttrValue>,
}

impl<'a> Interner<'a> {
    fn new() -> Self {
        Self {
            ids: BTreeMap::new(),
            values: Vec::new(),
        }
    }

    fn id(&mut self, v: AttrRef<'a>) -> u32 {
        let ident = match v {
            AttrRef::Value(v) => Ident::of(v),
            AttrRef::Str(s) => Ident::Str(s),
            AttrRef::Float(f) => Ident::Float(f.to_bits()),
        };
        let next = u32::try_from(self.values.len()).unwrap_or(NONE);
        *self.ids.entry(ident).or_insert_with(|| {
            // Typed fields are kept as the attribute lookup presents them.
            self.values.push(v.into_cow().into_owned());
            next
        })
    }
}

impl AttrIndex {
    /// Indexes `candidates` (positions are their order).
    pub(super) fn new<'a>(candidates: impl IntoIterator<Item = &'a Candidate>) -> Self {
        let candidates: Vec<&Candidate> = candidates.into_iter().collect();
        let mut keys: BTreeMap<String, u32> = BTreeMap::new();
        let mut key_values: Vec<Interner<'_>> = Vec::new();
        let mut starts = Vec::with_capacity(candidates.len() + 1);
        let mut entries = Vec::new();
        for c in &candidates {
            starts.push(entries.len());
            for (k, v) in &c.attributes {
                let next = u32::try_from(key_values.len()).unwrap_or(NONE);
                let key = *keys.entry(k.clone()).or_insert_with(|| {
                    key_values.push(Interner::new());
                    next
                });
                if let Some(values) = key_values.get_mut(key as usize) {
                    entries.push((key, values.id(AttrRef::Value(v))));
                }
            }
        }
        starts.push(entries.len());
        let fields = Field::ALL
            .iter()
            .map(|f| {
                let mut values = Interner::new();
                let ids = candidates
                    .iter()
                    .map(|c| f.get(c).map_or(NONE, |v| values.id(v)))
                    .collect();
                Column {
                    ids,
                    values: values.values,
                }
            })
            .collect();
        Self {
            keys,
            starts,
            entries,
            key_values: key_values.into_iter().map(|i| i.values).collect(),
            fields,
        }
    }

    /// Prepares the attribute filters of `filter` for scanning this index.
    pub(super) fn scan<'f, 'r>(&self, filter: &'f DemandFilter<'r>) -> Scan<'f, 'r> {
        let tests = filter
            .attribute_tests()
            .iter()
            .map(|test| {
                let key = self.keys.get(test.lookup().key()).copied();
                let field = test.lookup().field().map(|f| f as usize);
                let known = |n: usize| vec![Verdict::Unknown; n];
                ScanTest {
                    test,
                    key,
                    key_verdicts: known(
                        key.and_then(|k| self.key_values.get(k as usize))
                            .map_or(0, Vec::len),
                    ),
                    field,
                    field_verdicts: known(
                        field
                            .and_then(|f| self.fields.get(f))
                            .map_or(0, |c| c.values.len()),
                    ),
                }
            })
            .collect();
        Scan { tests }
    }

    /// The first attribute filter of `scan` that the candidate at `pos` fails.
    pub(super) fn cause(&self, scan: &mut Scan<'_, '_>, pos: usize) -> Option<Cause> {
        let entries = self
            .starts
            .get(pos)
            .zip(self.starts.get(pos + 1))
            .and_then(|(&a, &b)| self.entries.get(a..b))
            .unwrap_or(&[]);
        for t in &mut scan.tests {
            // The map first, then the typed field (as `Candidate::attribute`).
            let in_map = t.key.and_then(|k| {
                entries
                    .iter()
                    .find(|e| e.0 == k)
                    .map(|e| (k as usize, e.1 as usize))
            });
            let pass = match in_map {
                Some((k, v)) => judge(
                    t.test,
                    &mut t.key_verdicts,
                    self.key_values.get(k).and_then(|vs| vs.get(v)),
                    v,
                ),
                None => {
                    let column = t.field.and_then(|f| self.fields.get(f));
                    let id = column.and_then(|c| c.ids.get(pos)).copied().unwrap_or(NONE);
                    if id == NONE {
                        return Some(t.test.missing());
                    }
                    let v = id as usize;
                    judge(
                        t.test,
                        &mut t.field_verdicts,
                        column.and_then(|c| c.values.get(v)),
                        v,
                    )
                }
            };
            if !pass {
                return Some(t.test.mismatch());
            }
        }
        None
    }
}

/// Whether value `id` (`value`) passes `test`, computed once per scan.
fn judge(
    test: &AttrTest<'_>,
    verdicts: &mut [Verdict],
    value: Option<&AttrValue>,
    id: usize,
) -> bool {
    match verdicts.get(id) {
        Some(Verdict::Pass) => true,
        Some(Verdict::Fail) => false,
        _ => {
            let pass = value.is_some_and(|v| test.accepts(v));
            if let Some(slot) = verdicts.get_mut(id) {
                *slot = if pass { Verdict::Pass } else { Verdict::Fail };
            }
            pass
        }
    }
}

/// A filter's verdict on one distinct value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Unknown,
    Pass,
    Fail,
}

/// A demand's attribute filters against an [`AttrIndex`], with the verdicts reached so far.
pub(super) struct Scan<'f, 'r> {
    tests: Vec<ScanTest<'f, 'r>>,
}

struct ScanTest<'f, 'r> {
    test: &'f AttrTest<'r>,
    key: Option<u32>,
    key_verdicts: Vec<Verdict>,
    field: Option<usize>,
    field_verdicts: Vec<Verdict>,
}
