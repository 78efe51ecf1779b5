//! Subtrees searched once: a node whose residual problem was already refuted is not searched
//! again.
//!
//! Below a node, what is left to decide is fixed by the domains of its unassigned variables
//! and by what each constraint still asks of them beyond those domains
//! ([`Constraint::residual`](crate::Constraint::residual): a capacity's load on a holder that
//! could still overflow; nothing for a rule checked forward on assignment). With an objective
//! that sums unary costs, a plan below the node costs what is decided (`g`) plus the cost of
//! the rest, which depends on that residual problem alone. A subtree searched to its end under
//! threshold `T` proves that every completion costs at least `T − g`; a node met later with
//! the same residual problem and `g' + (T − g) ≥ T'` holds nothing under its own threshold
//! `T'`. This is the decomposition a tree search lacks: siblings that differ only in a
//! variable the rest does not depend on share the proof of the rest.
//!
//! Residual problems are keyed by a 128-bit hash of the domains and the constraints' words;
//! the key is taken when the node is entered, before its bound filters the domains (the
//! filtering depends on `g`, the residual problem does not).

use std::collections::{HashMap, HashSet};

use crate::expr::Compiled;
use crate::state::State;

/// Residual problems kept at most, per thread: about 50 bytes each, so at most about 13 MB
/// (a proof of 60×800 keeps under 40 000). Past that the memory starts again, since the
/// recent ones are those the search is near.
const MAX_ENTRIES: usize = 1 << 18;

/// A residual problem's key.
pub(crate) type Key = u128;

pub(crate) struct Memo {
    /// The objective's unary terms: `(variable, minimized weight, costs node)`.
    terms: Vec<(u32, f64, usize)>,
    /// The objective's constant part (minimized).
    constant: f64,
    /// Per variable: the domain stamp its hash was taken at, and the hash.
    hashes: Vec<(u64, u128)>,
    /// The state the stamps belong to.
    state: u64,
    /// Lower bound on the cost of the rest, per residual problem refuted.
    refuted: HashMap<Key, f64>,
    /// The domains' keys of those problems: a node whose domains are not among them needs
    /// no constraint words (they cost more than the domains' key).
    seen: HashSet<Key>,
    pub(crate) words: Vec<i64>,
}

/// A 128-bit SipHash of `tag` and `words` (two keyed passes: std's hasher has fixed keys, so
/// keys do not change from run to run).
fn hash128(tag: u64, words: impl Iterator<Item = u64> + Clone) -> u128 {
    use std::hash::Hasher;
    let pass = |half: u64| {
        let mut h = std::hash::DefaultHasher::new();
        h.write_u64(half);
        h.write_u64(tag);
        for w in words.clone() {
            h.write_u64(w);
        }
        h.finish()
    };
    (u128::from(pass(1)) << 64) | u128::from(pass(2))
}

impl Memo {
    /// `None` unless the objective (minimized with `sign`) is a sum of unary terms and
    /// constants.
    pub(crate) fn new(obj: &Compiled, sign: f64, vars: usize) -> Option<Memo> {
        let mut terms = Vec::new();
        let mut constant = 0.0;
        for &(weight, node) in obj.root_terms()? {
            if let Some((var, ..)) = obj.unary_leaf(node) {
                terms.push((var, sign * weight, node));
            } else {
                constant += sign * weight * obj.constant(node)?;
            }
        }
        Some(Memo {
            terms,
            constant,
            hashes: vec![(u64::MAX, 0); vars],
            state: 0,
            refuted: HashMap::new(),
            seen: HashSet::new(),
            words: Vec::new(),
        })
    }

    /// What the assigned variables cost.
    pub(crate) fn decided(&self, obj: &Compiled, st: &State) -> f64 {
        let mut g = self.constant;
        for &(x, w, node) in &self.terms {
            if let (Some(v), Some((_, costs, ..))) = (st.value(x), obj.unary_leaf(node)) {
                g += w * costs.get(v.index()).copied().unwrap_or(0.0);
            }
        }
        g
    }

    /// The key of the unassigned variables' domains (the constraints' words are added with
    /// [`Memo::key`]).
    pub(crate) fn domains(&mut self, st: &State) -> u128 {
        if self.state != st.id() {
            self.state = st.id();
            self.hashes.iter_mut().for_each(|h| h.0 = u64::MAX);
        }
        let mut key = 0u128;
        for x in 0..st.vars() as u32 {
            if st.value(x).is_some() {
                continue;
            }
            let slot = &mut self.hashes[x as usize];
            let stamp = st.stamp(x);
            if slot.0 != stamp {
                *slot = (stamp, hash128(u64::from(x), st.words(x).iter().copied()));
            }
            // A sum: the same domains give the same key whatever order they changed in.
            key = key.wrapping_add(slot.1);
        }
        key
    }

    /// The full key: the domains' key with the words of constraint `c` folded in.
    pub(crate) fn key(domains: u128, c: u32, words: &[i64]) -> u128 {
        if words.is_empty() {
            return domains;
        }
        let tag = u64::from(c) | 1 << 32;
        domains.wrapping_add(hash128(tag, words.iter().map(|&w| w as u64)))
    }

    /// Whether some refuted residual problem had these domains.
    pub(crate) fn seen(&self, domains: Key) -> bool {
        self.seen.contains(&domains)
    }

    /// Whether a refuted residual problem `key` rules out a node whose decided part costs `g`
    /// under threshold `t`.
    pub(crate) fn rules_out(&self, key: Key, g: f64, t: f64) -> bool {
        self.refuted
            .get(&key)
            .is_some_and(|&rest| g + rest >= t - 1e-9 * t.abs().max(1.0))
    }

    /// A subtree with residual problem `key` and decided cost `g` searched to its end under
    /// threshold `t`: its completions cost at least `t − g`.
    pub(crate) fn refute(&mut self, domains: Key, key: Key, g: f64, t: f64) {
        if !t.is_finite() {
            return;
        }
        let rest = t - g;
        if let Some(r) = self.refuted.get_mut(&key) {
            *r = r.max(rest);
            return;
        }
        if self.refuted.len() >= MAX_ENTRIES {
            self.forget();
        }
        self.refuted.insert(key, rest);
        self.seen.insert(domains);
    }

    /// Forgets every refuted residual problem.
    pub(crate) fn forget(&mut self) {
        self.refuted.clear();
        self.seen.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty() -> Memo {
        Memo {
            terms: Vec::new(),
            constant: 0.0,
            hashes: Vec::new(),
            state: 0,
            refuted: HashMap::new(),
            seen: HashSet::new(),
            words: Vec::new(),
        }
    }

    #[test]
    fn a_refuted_rest_rules_out_a_node_only_where_it_reaches_the_threshold() {
        let mut m = empty();
        // Decided 3 under threshold 10: the rest costs at least 7.
        m.refute(1, 11, 3.0, 10.0);
        assert!(m.seen(1) && !m.seen(2));
        assert!(m.rules_out(11, 3.0, 10.0));
        assert!(m.rules_out(11, 4.0, 11.0));
        assert!(!m.rules_out(11, 2.0, 10.0));
        assert!(!m.rules_out(12, 9.0, 10.0));
        // A weaker proof later keeps the stronger one; a stronger one replaces it.
        m.refute(1, 11, 5.0, 10.0);
        assert!(m.rules_out(11, 3.0, 10.0));
        m.refute(1, 11, 0.0, 10.0);
        assert!(m.rules_out(11, 1.0, 11.0));
        // No threshold yet: nothing proven.
        m.refute(3, 13, 0.0, f64::INFINITY);
        assert!(!m.seen(3));
    }

    #[test]
    fn a_full_memory_starts_again() {
        let mut m = empty();
        for k in 0..MAX_ENTRIES as u128 {
            m.refute(k, k, 0.0, 1.0);
        }
        assert!(m.rules_out(0, 0.0, 1.0));
        m.refute(u128::MAX, u128::MAX, 0.0, 1.0);
        assert!(!m.rules_out(0, 0.0, 1.0) && !m.seen(0));
        assert!(m.rules_out(u128::MAX, 0.0, 1.0) && m.seen(u128::MAX));
    }

    #[test]
    fn equal_domains_key_alike_whatever_their_history() {
        let mut st = State::new(&[70, 5, 5], Vec::new());
        let mut m = empty();
        m.hashes = vec![(u64::MAX, 0); 3];
        let start = m.domains(&st);
        let mark = st.mark();
        assert!(st.remove(0, 65, crate::ConstraintId(0)).is_ok());
        let one = m.domains(&st);
        assert_ne!(one, start);
        st.undo_to(mark);
        assert_eq!(m.domains(&st), start);
        // Assigned variables leave the key: their cost is the decided part.
        assert!(st.assign(1, 2).is_ok());
        let without = m.domains(&st);
        assert_ne!(without, start);
        assert_eq!(Memo::key(without, 4, &[]), without, "no words, no change");
        assert_ne!(Memo::key(without, 4, &[0]), Memo::key(without, 5, &[0]));
    }
}
