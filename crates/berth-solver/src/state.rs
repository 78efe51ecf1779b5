//! Search state: bitset domains, assignments, reversible integer cells and the undo trail.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{ConstraintId, Value, VarId};

/// A propagator found that the current node has no solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The variable whose domain was wiped out, if that is what happened.
    pub var: Option<VarId>,
}

/// One reversible change.
#[derive(Clone, Copy, Debug)]
enum Undo {
    /// A value was removed from a domain.
    Bit { var: u32, value: u32 },
    /// A variable was assigned; `size` is its domain size before.
    Assign { var: u32, size: u32 },
    /// A cell was overwritten; `old` is its previous content.
    Cell { idx: u32, old: i64 },
}

/// A propagation event, processed in FIFO order.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    Assigned(u32),
    Changed(u32),
}

/// Domains, assignment, cells and trail of one search.
pub(crate) struct State {
    bits: Vec<u64>,
    off: Vec<usize>,
    len: Vec<u32>,
    size: Vec<u32>,
    pub(crate) assigned: Vec<Option<Value>>,
    pub(crate) cells: Vec<i64>,
    trail: Vec<Undo>,
    pub(crate) events: VecDeque<Event>,
    queued: Vec<bool>,
    /// Root-level removals with their reason, while recording the triage.
    pub(crate) record: Option<Vec<(VarId, Value, ConstraintId)>>,
    pub(crate) removals: u64,
    /// Per variable: `clock` at its domain's last change, undoing included (see [`State::stamp`]).
    stamps: Vec<u64>,
    clock: u64,
    /// Unique among the states of the process, copies included (see [`State::id`]).
    id: u64,
}

/// The next [`State::id`].
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Clone for State {
    fn clone(&self) -> State {
        State {
            bits: self.bits.clone(),
            off: self.off.clone(),
            len: self.len.clone(),
            size: self.size.clone(),
            assigned: self.assigned.clone(),
            cells: self.cells.clone(),
            trail: self.trail.clone(),
            events: self.events.clone(),
            queued: self.queued.clone(),
            record: self.record.clone(),
            removals: self.removals,
            stamps: self.stamps.clone(),
            clock: self.clock,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        }
    }
}

impl State {
    pub(crate) fn new(sizes: &[u32], cells: Vec<i64>) -> State {
        let mut off = Vec::with_capacity(sizes.len() + 1);
        let mut total = 0usize;
        for &n in sizes {
            off.push(total);
            total += (n as usize).div_ceil(64);
        }
        off.push(total);
        let mut bits = vec![0u64; total];
        for (v, &n) in sizes.iter().enumerate() {
            let base = off[v];
            let full = n as usize / 64;
            for w in &mut bits[base..base + full] {
                *w = u64::MAX;
            }
            let rest = n as usize % 64;
            if rest > 0 {
                bits[base + full] = (1u64 << rest) - 1;
            }
        }
        State {
            bits,
            off,
            len: sizes.to_vec(),
            size: sizes.to_vec(),
            assigned: vec![None; sizes.len()],
            cells,
            trail: Vec::new(),
            events: VecDeque::new(),
            queued: vec![false; sizes.len()],
            record: None,
            stamps: vec![0; sizes.len()],
            clock: 0,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            removals: 0,
        }
    }

    pub(crate) fn vars(&self) -> usize {
        self.len.len()
    }

    pub(crate) fn universe(&self, var: u32) -> u32 {
        self.len.get(var as usize).copied().unwrap_or(0)
    }

    pub(crate) fn size(&self, var: u32) -> u32 {
        self.size.get(var as usize).copied().unwrap_or(0)
    }

    /// Values left in all domains (an assigned variable counts one).
    pub(crate) fn values_left(&self) -> u64 {
        self.size.iter().map(|&s| u64::from(s)).sum()
    }

    pub(crate) fn value(&self, var: u32) -> Option<Value> {
        self.assigned.get(var as usize).copied().flatten()
    }

    pub(crate) fn contains(&self, var: u32, value: u32) -> bool {
        let v = var as usize;
        match self.assigned.get(v) {
            None => false,
            Some(Some(a)) => a.0 == value,
            Some(None) => self.bit(v, value),
        }
    }

    fn bit(&self, v: usize, value: u32) -> bool {
        if value >= self.len[v] {
            return false;
        }
        let w = self.off[v] + (value as usize >> 6);
        self.bits[w] >> (value & 63) & 1 == 1
    }

    /// Values of `var` in increasing order.
    pub(crate) fn values(&self, var: u32) -> DomainIter<'_> {
        let v = var as usize;
        match self.assigned.get(v) {
            Some(Some(a)) => DomainIter {
                words: &[],
                word: 0,
                cur: 0,
                single: Some(a.0),
            },
            Some(None) => {
                let words = &self.bits[self.off[v]..self.off[v + 1]];
                DomainIter {
                    words,
                    word: 0,
                    cur: words.first().copied().unwrap_or(0),
                    single: None,
                }
            }
            None => DomainIter {
                words: &[],
                word: 0,
                cur: 0,
                single: None,
            },
        }
    }

    /// The domain of an unassigned `var` as bit words (value `i` is bit `i % 64` of word
    /// `i / 64`).
    pub(crate) fn words(&self, var: u32) -> &[u64] {
        let v = var as usize;
        match (self.off.get(v), self.off.get(v + 1)) {
            (Some(&a), Some(&b)) => &self.bits[a..b],
            _ => &[],
        }
    }

    /// A stamp of the domain of `var`: equal stamps of one state (same [`State::id`]) at two
    /// moments mean the domain did not change in between, not even and back (a cache key).
    pub(crate) fn stamp(&self, var: u32) -> u64 {
        self.stamps.get(var as usize).copied().unwrap_or(0)
    }

    /// Tells this state from every other, its copies included (their stamps go their own way).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    fn touch(&mut self, v: usize) {
        self.clock += 1;
        self.stamps[v] = self.clock;
    }

    pub(crate) fn mark(&self) -> usize {
        self.trail.len()
    }

    pub(crate) fn undo_to(&mut self, mark: usize) {
        while self.trail.len() > mark {
            let Some(u) = self.trail.pop() else { break };
            match u {
                Undo::Bit { var, value } => {
                    let v = var as usize;
                    let w = self.off[v] + (value as usize >> 6);
                    self.bits[w] |= 1u64 << (value & 63);
                    self.size[v] += 1;
                    self.touch(v);
                }
                Undo::Assign { var, size } => {
                    self.assigned[var as usize] = None;
                    self.size[var as usize] = size;
                    self.touch(var as usize);
                }
                Undo::Cell { idx, old } => self.cells[idx as usize] = old,
            }
        }
    }

    pub(crate) fn set_cell(&mut self, idx: usize, value: i64) {
        if let Some(c) = self.cells.get_mut(idx)
            && *c != value
        {
            self.trail.push(Undo::Cell {
                idx: idx as u32,
                old: *c,
            });
            *c = value;
        }
    }

    pub(crate) fn cell(&self, idx: usize) -> i64 {
        self.cells.get(idx).copied().unwrap_or(0)
    }

    /// Assigns `var = value` (a decision). Emits one `Assigned` event unless already so assigned.
    pub(crate) fn assign(&mut self, var: u32, value: u32) -> Result<(), Conflict> {
        let v = var as usize;
        match self.assigned.get(v) {
            None => Err(Conflict { var: None }),
            Some(Some(a)) if a.0 == value => Ok(()),
            Some(Some(_)) => Err(Conflict {
                var: Some(VarId(var)),
            }),
            Some(None) => {
                if !self.bit(v, value) {
                    return Err(Conflict {
                        var: Some(VarId(var)),
                    });
                }
                self.trail.push(Undo::Assign {
                    var,
                    size: self.size[v],
                });
                self.assigned[v] = Some(Value(value));
                self.size[v] = 1;
                self.touch(v);
                self.events.push_back(Event::Assigned(var));
                Ok(())
            }
        }
    }

    /// Removes `value` from `var`; `Ok(true)` if it was there. A wipe-out is a conflict; a domain
    /// left with one value assigns it (unit propagation).
    pub(crate) fn remove(
        &mut self,
        var: u32,
        value: u32,
        why: ConstraintId,
    ) -> Result<bool, Conflict> {
        let v = var as usize;
        match self.assigned.get(v) {
            None => return Ok(false),
            Some(Some(a)) => {
                if a.0 == value {
                    if let Some(r) = self.record.as_mut() {
                        r.push((VarId(var), Value(value), why));
                    }
                    return Err(Conflict {
                        var: Some(VarId(var)),
                    });
                }
                return Ok(false);
            }
            Some(None) => {}
        }
        if !self.bit(v, value) {
            return Ok(false);
        }
        let w = self.off[v] + (value as usize >> 6);
        self.bits[w] &= !(1u64 << (value & 63));
        self.size[v] -= 1;
        self.touch(v);
        self.removals += 1;
        self.trail.push(Undo::Bit { var, value });
        if let Some(r) = self.record.as_mut() {
            r.push((VarId(var), Value(value), why));
        }
        match self.size[v] {
            0 => Err(Conflict {
                var: Some(VarId(var)),
            }),
            1 => {
                let only = self.values(var).next();
                if let Some(only) = only {
                    self.trail.push(Undo::Assign { var, size: 1 });
                    self.assigned[v] = Some(only);
                    self.events.push_back(Event::Assigned(var));
                }
                Ok(true)
            }
            _ => {
                if !self.queued[v] {
                    self.queued[v] = true;
                    self.events.push_back(Event::Changed(var));
                }
                Ok(true)
            }
        }
    }

    pub(crate) fn dequeued(&mut self, var: u32) {
        if let Some(q) = self.queued.get_mut(var as usize) {
            *q = false;
        }
    }

    pub(crate) fn clear_events(&mut self) {
        self.events.clear();
        for q in &mut self.queued {
            *q = false;
        }
    }
}

/// Iterator over the values of one domain, in increasing order.
pub struct DomainIter<'a> {
    words: &'a [u64],
    word: usize,
    cur: u64,
    single: Option<u32>,
}

impl Iterator for DomainIter<'_> {
    type Item = Value;

    fn next(&mut self) -> Option<Value> {
        if let Some(s) = self.single.take() {
            return Some(Value(s));
        }
        loop {
            if self.cur != 0 {
                let t = self.cur.trailing_zeros();
                self.cur &= self.cur - 1;
                return Some(Value((self.word as u32) * 64 + t));
            }
            self.word += 1;
            self.cur = *self.words.get(self.word)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_change_with_the_domain_and_its_undoing_and_copies_get_their_own_id() {
        let mut st = State::new(&[3, 3], Vec::new());
        let (a0, b0) = (st.stamp(0), st.stamp(1));
        let mark = st.mark();
        assert_eq!(st.remove(0, 1, ConstraintId(0)), Ok(true));
        let a1 = st.stamp(0);
        assert_ne!(a1, a0);
        assert_eq!(st.stamp(1), b0, "another variable's stamp moved");
        // Removing a value already gone changes nothing.
        assert_eq!(st.remove(0, 1, ConstraintId(0)), Ok(false));
        assert_eq!(st.stamp(0), a1);
        st.undo_to(mark);
        // The domain is back as it was, but the stamp is new: a cache keyed by the stamp
        // computed in between must not be taken for one computed before.
        let a2 = st.stamp(0);
        assert!(a2 != a0 && a2 != a1);
        assert!(st.assign(1, 2).is_ok());
        assert_ne!(st.stamp(1), b0);
        let copy = st.clone();
        assert_ne!(copy.id(), st.id());
        assert_eq!(copy.stamp(1), st.stamp(1));
    }
}
