//! Value -> key maps (group, zone, holder) with an inverted index, shared between variables.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::Value;

/// For each value of a variable, its key (group, zone, capacity holder...). Share one `Arc`
/// between variables with the same candidates: the index is then built once.
pub type Keys = Arc<[u32]>;

/// The key of a value that belongs to no group / holder.
pub const NO_KEY: u32 = u32::MAX;

/// A key map with the values of each key listed (sorted by key, then value).
pub(crate) struct KeyIndex {
    keys: Keys,
    by_key: Vec<u32>,
    ranges: Vec<(u32, u32, u32)>,
}

impl KeyIndex {
    fn new(keys: Keys) -> KeyIndex {
        let mut pairs: Vec<(u32, u32)> = keys
            .iter()
            .enumerate()
            .filter(|(_, k)| **k != NO_KEY)
            .map(|(v, k)| (*k, v as u32))
            .collect();
        pairs.sort_unstable();
        let mut ranges: Vec<(u32, u32, u32)> = Vec::new();
        for (i, (k, _)) in pairs.iter().enumerate() {
            match ranges.last_mut() {
                Some(r) if r.0 == *k => r.2 = i as u32 + 1,
                _ => ranges.push((*k, i as u32, i as u32 + 1)),
            }
        }
        KeyIndex {
            keys,
            by_key: pairs.into_iter().map(|(_, v)| v).collect(),
            ranges,
        }
    }

    /// The key table.
    pub(crate) fn keys(&self) -> &Keys {
        &self.keys
    }

    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The largest key used (not counting [`NO_KEY`]).
    pub(crate) fn max_key(&self) -> Option<u32> {
        self.ranges.last().map(|r| r.0)
    }

    pub(crate) fn key(&self, v: Value) -> u32 {
        self.keys.get(v.index()).copied().unwrap_or(NO_KEY)
    }

    /// Values whose key is `key`, increasing.
    pub(crate) fn values_with(&self, key: u32) -> &[u32] {
        match self.ranges.binary_search_by_key(&key, |r| r.0) {
            Ok(i) => {
                let (_, s, e) = self.ranges[i];
                self.by_key.get(s as usize..e as usize).unwrap_or(&[])
            }
            Err(_) => &[],
        }
    }
}

/// Whether variables `i` and `j` (positions in a scope) have equal key tables.
pub(crate) fn same_keys(of_var: &[u32], tables: &[KeyIndex], i: usize, j: usize) -> bool {
    match (of_var.get(i), of_var.get(j)) {
        (Some(a), Some(b)) if a == b => true,
        (Some(&a), Some(&b)) => match (tables.get(a as usize), tables.get(b as usize)) {
            (Some(x), Some(y)) => x.keys[..] == y.keys[..],
            _ => false,
        },
        _ => false,
    }
}

/// Positions of `a` and `b` in `vars`, when both are there.
pub(crate) fn both(
    vars: &[crate::VarId],
    a: crate::VarId,
    b: crate::VarId,
) -> Option<(usize, usize)> {
    let i = vars.iter().position(|&x| x == a)?;
    let j = vars.iter().position(|&x| x == b)?;
    Some((i, j))
}

/// Builds one index per distinct `Arc` and maps each variable to its index.
pub(crate) fn index_all(keys: Vec<Keys>) -> (Vec<u32>, Vec<KeyIndex>) {
    let mut by_ptr: BTreeMap<usize, u32> = BTreeMap::new();
    let mut tables = Vec::new();
    let mut of_var = Vec::with_capacity(keys.len());
    for k in keys {
        let addr = Arc::as_ptr(&k) as *const u32 as usize;
        let i = *by_ptr.entry(addr).or_insert_with(|| {
            tables.push(KeyIndex::new(k.clone()));
            tables.len() as u32 - 1
        });
        of_var.push(i);
    }
    (of_var, tables)
}
