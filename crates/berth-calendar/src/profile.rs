//! Per pool and dimension availability profile: a treap of breakpoints with prefix-min/max.
//!
//! Each breakpoint (a time in microseconds) stores the *change* of four levels at that instant:
//! capacity, reserved, unreserved usage and total usage. A level at `t` is the sum of the changes
//! at keys `<= t`. Subtrees carry the sum of their changes and the minimum and maximum prefix of
//! `available = capacity - reserved - unreserved`, so point levels, range minimum, "first key
//! below" and "first key at or above" are all O(log n) without rescanning. A key lives while some
//! contribution starts or ends there (reference count), so the tree never holds dead keys.
//! Priorities are a hash of the key: the shape depends only on the key set (deterministic).

/// Index of the capacity level.
pub(crate) const CAP: usize = 0;
/// Index of the reserved level (reservation holds).
pub(crate) const RES: usize = 1;
/// Index of the unreserved-usage level (allocations without reservation).
pub(crate) const UNRES: usize = 2;
/// Index of the total-usage level (every live allocation).
pub(crate) const USED: usize = 3;

/// The four levels (or changes) kept per breakpoint.
pub(crate) type Levels = [i64; 4];

/// Stand-in for "no end": larger than every valid instant in microseconds.
pub(crate) const OPEN: i64 = i64::MAX;

const NIL: u32 = 0;

/// What descents read: key, links and the availability aggregates, one cache line per node.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
struct Hot {
    key: i64,
    left: u32,
    right: u32,
    /// Change of available at this key.
    delta: i64,
    /// Sum of changes in the subtree.
    sum: i64,
    /// Sum of changes in the left subtree (saves reading the left child on the way down).
    lsum: i64,
    min_pref: i64,
    max_pref: i64,
}

/// The four levels, read only by reports and by updates.
#[derive(Clone, Debug)]
struct Cold {
    refs: u32,
    delta: Levels,
    sum: Levels,
}

const HOT_NIL: Hot = Hot {
    key: 0,
    left: NIL,
    right: NIL,
    delta: 0,
    sum: 0,
    lsum: 0,
    min_pref: i64::MAX,
    max_pref: i64::MIN,
};

const COLD_NIL: Cold = Cold {
    refs: 0,
    delta: [0; 4],
    sum: [0; 4],
};

fn avail_of(l: &Levels) -> i64 {
    l[CAP] - l[RES] - l[UNRES]
}

fn priority(key: i64) -> u64 {
    // splitmix64: a fixed hash, so the treap shape is a function of the key set.
    let mut z = (key as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn higher(a: i64, b: i64) -> bool {
    let (pa, pb) = (priority(a), priority(b));
    pa > pb || (pa == pb && a < b)
}

/// A step function of time for one pool and one dimension.
#[derive(Clone, Debug)]
pub(crate) struct Profile {
    hot: Vec<Hot>,
    cold: Vec<Cold>,
    free: Vec<u32>,
    root: u32,
}

impl Default for Profile {
    fn default() -> Self {
        Self::new()
    }
}

impl Profile {
    pub(crate) fn new() -> Self {
        Profile {
            hot: vec![HOT_NIL],
            cold: vec![COLD_NIL],
            free: Vec::new(),
            root: NIL,
        }
    }

    /// Number of live breakpoints.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.hot.len() - 1 - self.free.len()
    }

    fn n(&self, i: u32) -> &Hot {
        &self.hot[i as usize]
    }

    fn n_mut(&mut self, i: u32) -> &mut Hot {
        &mut self.hot[i as usize]
    }

    fn pull(&mut self, i: u32) {
        let (l, r) = (self.n(i).left, self.n(i).right);
        let (ls, lmin, lmax) = (self.n(l).sum, self.n(l).min_pref, self.n(l).max_pref);
        let (rs, rmin, rmax) = (self.n(r).sum, self.n(r).min_pref, self.n(r).max_pref);
        let node = &mut self.hot[i as usize];
        let here = ls + node.delta;
        node.lsum = ls;
        node.sum = here + rs;
        node.min_pref = lmin.min(here).min(here.saturating_add(rmin));
        node.max_pref = lmax.max(here).max(here.saturating_add(rmax));
        let (cl, cr) = (self.cold[l as usize].sum, self.cold[r as usize].sum);
        let c = &mut self.cold[i as usize];
        for k in 0..4 {
            c.sum[k] = cl[k] + c.delta[k] + cr[k];
        }
    }

    fn alloc(&mut self, key: i64, delta: Levels, refs: u32) -> u32 {
        let hot = Hot {
            key,
            delta: avail_of(&delta),
            ..HOT_NIL
        };
        let cold = Cold {
            refs,
            delta,
            sum: [0; 4],
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.hot[i as usize] = hot;
                self.cold[i as usize] = cold;
                i
            }
            None => {
                self.hot.push(hot);
                self.cold.push(cold);
                (self.hot.len() - 1) as u32
            }
        };
        self.pull(i);
        i
    }
    /// Splits `t` into keys `< key` and keys `>= key`.
    fn split(&mut self, t: u32, key: i64) -> (u32, u32) {
        if t == NIL {
            return (NIL, NIL);
        }
        if self.n(t).key < key {
            let (a, b) = self.split(self.n(t).right, key);
            self.n_mut(t).right = a;
            self.pull(t);
            (t, b)
        } else {
            let (a, b) = self.split(self.n(t).left, key);
            self.n_mut(t).left = b;
            self.pull(t);
            (a, t)
        }
    }

    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        if higher(self.n(a).key, self.n(b).key) {
            let r = self.merge(self.n(a).right, b);
            self.n_mut(a).right = r;
            self.pull(a);
            a
        } else {
            let l = self.merge(a, self.n(b).left);
            self.n_mut(b).left = l;
            self.pull(b);
            b
        }
    }

    fn insert_node(&mut self, t: u32, new: u32) -> u32 {
        if t == NIL {
            return new;
        }
        let key = self.n(new).key;
        if higher(key, self.n(t).key) {
            let (l, r) = self.split(t, key);
            let node = self.n_mut(new);
            node.left = l;
            node.right = r;
            self.pull(new);
            return new;
        }
        if key < self.n(t).key {
            let l = self.insert_node(self.n(t).left, new);
            self.n_mut(t).left = l;
        } else {
            let r = self.insert_node(self.n(t).right, new);
            self.n_mut(t).right = r;
        }
        self.pull(t);
        t
    }

    /// Adds `delta` and `refs` to an existing key; removes the key when no reference is left.
    fn bump(&mut self, t: u32, key: i64, delta: &Levels, refs: i64) -> u32 {
        if t == NIL {
            return NIL;
        }
        let k = self.n(t).key;
        if key != k {
            // Sums change by exactly `delta` on the path: add it instead of re-reading both
            // children (one cache line less per level); only the extrema need the children.
            let left = key < k;
            let child = if left {
                self.n(t).left
            } else {
                self.n(t).right
            };
            let c = self.bump(child, key, delta, refs);
            let davail = avail_of(delta);
            let cold = &mut self.cold[t as usize];
            for (s, d) in cold.sum.iter_mut().zip(delta.iter()) {
                *s += d;
            }
            let node = self.n_mut(t);
            if left {
                node.left = c;
                node.lsum += davail;
            } else {
                node.right = c;
            }
            node.sum += davail;
            let (l, r, here) = (node.left, node.right, node.lsum + node.delta);
            let (lmin, lmax) = (self.n(l).min_pref, self.n(l).max_pref);
            let (rmin, rmax) = (self.n(r).min_pref, self.n(r).max_pref);
            let node = self.n_mut(t);
            node.min_pref = lmin.min(here).min(here.saturating_add(rmin));
            node.max_pref = lmax.max(here).max(here.saturating_add(rmax));
            return t;
        } else {
            let c = &mut self.cold[t as usize];
            for (x, d) in c.delta.iter_mut().zip(delta.iter()) {
                *x += d;
            }
            c.refs = (i64::from(c.refs) + refs).max(0) as u32;
            let (refs_left, avail) = (c.refs, avail_of(&c.delta));
            let node = self.n_mut(t);
            node.delta = avail;
            if refs_left == 0 {
                let (l, r) = (node.left, node.right);
                self.free.push(t);
                return self.merge(l, r);
            }
        }
        self.pull(t);
        t
    }

    fn contains(&self, key: i64) -> bool {
        let mut t = self.root;
        while t != NIL {
            let k = self.n(t).key;
            if key == k {
                return true;
            }
            t = if key < k {
                self.n(t).left
            } else {
                self.n(t).right
            };
        }
        false
    }

    fn point(&mut self, key: i64, delta: Levels, refs: i64) {
        if self.contains(key) {
            self.root = self.bump(self.root, key, &delta, refs);
        } else if refs > 0 {
            let new = self.alloc(key, delta, refs as u32);
            self.root = self.insert_node(self.root, new);
        }
    }

    /// Rewrites the arena in depth-first order (same tree, same answers) so a descent reads
    /// neighbouring memory; dead slots are dropped.
    pub(crate) fn compact(&mut self) {
        let live = self.hot.len() - self.free.len();
        let mut hot = Vec::with_capacity(live);
        let mut cold = Vec::with_capacity(live);
        hot.push(HOT_NIL);
        cold.push(COLD_NIL);
        // (old index, slot in the new arena of the parent link to patch, is-left)
        let mut stack: Vec<(u32, u32, bool)> = Vec::new();
        if self.root != NIL {
            stack.push((self.root, NIL, true));
        }
        let mut root = NIL;
        while let Some((old, parent, left)) = stack.pop() {
            let new = hot.len() as u32;
            let mut h = self.hot[old as usize].clone();
            let (l, r) = (h.left, h.right);
            h.left = NIL;
            h.right = NIL;
            hot.push(h);
            cold.push(self.cold[old as usize].clone());
            if parent == NIL {
                root = new;
            } else if left {
                hot[parent as usize].left = new;
            } else {
                hot[parent as usize].right = new;
            }
            if r != NIL {
                stack.push((r, new, false));
            }
            if l != NIL {
                stack.push((l, new, true));
            }
        }
        self.hot = hot;
        self.cold = cold;
        self.free.clear();
        self.root = root;
    }

    /// Adds `delta` over `[start, end)` (`end == OPEN` for no end).
    pub(crate) fn add(&mut self, start: i64, end: i64, delta: Levels) {
        if delta == [0; 4] || start >= end {
            return;
        }
        self.point(start, delta, 1);
        if end != OPEN {
            self.point(end, delta.map(|d| -d), 1);
        }
    }

    /// Exactly undoes an earlier `add(start, end, delta)`.
    pub(crate) fn remove(&mut self, start: i64, end: i64, delta: Levels) {
        if delta == [0; 4] || start >= end {
            return;
        }
        self.point(start, delta.map(|d| -d), -1);
        if end != OPEN {
            self.point(end, delta, -1);
        }
    }

    /// Levels in force at `t` (sum of changes at keys `<= t`).
    pub(crate) fn levels_at(&self, t: i64) -> Levels {
        let mut acc = [0i64; 4];
        let mut n = self.root;
        while n != NIL {
            let node = self.n(n);
            if node.key <= t {
                let ls = self.cold[node.left as usize].sum;
                let d = self.cold[n as usize].delta;
                for i in 0..4 {
                    acc[i] += ls[i] + d[i];
                }
                n = node.right;
            } else {
                n = node.left;
            }
        }
        acc
    }

    /// Available (`capacity - reserved - unreserved`) at `t`.
    pub(crate) fn avail_at(&self, t: i64) -> i64 {
        let mut acc = 0;
        let mut n = self.root;
        while n != NIL {
            let node = self.n(n);
            if node.key <= t {
                acc += node.lsum + node.delta;
                n = node.right;
            } else {
                n = node.left;
            }
        }
        acc
    }

    /// Minimum available over the window `[start, end)`.
    pub(crate) fn min_avail(&self, start: i64, end: i64) -> i64 {
        let first = self.avail_at(start);
        let rest = self.range_min(self.root, start.saturating_add(1), end, false, false, 0);
        first.min(rest)
    }

    fn range_min(&self, n: u32, lo: i64, hi: i64, lo_ok: bool, hi_ok: bool, offset: i64) -> i64 {
        if n == NIL {
            return i64::MAX;
        }
        let node = self.n(n);
        if lo_ok && hi_ok {
            return offset.saturating_add(node.min_pref);
        }
        let here = offset + node.lsum + node.delta;
        if node.key < lo {
            return self.range_min(node.right, lo, hi, false, hi_ok, here);
        }
        if node.key >= hi {
            return self.range_min(node.left, lo, hi, lo_ok, false, offset);
        }
        let a = self.range_min(node.left, lo, hi, lo_ok, true, offset);
        let b = self.range_min(node.right, lo, hi, true, hi_ok, here);
        a.min(here).min(b)
    }

    /// First instant in `[start, end)` where available is below `need`.
    pub(crate) fn first_below(&self, start: i64, end: i64, need: i64) -> Option<i64> {
        if start >= end {
            return None;
        }
        if self.avail_at(start) < need {
            return Some(start);
        }
        self.find_below(
            self.root,
            start.saturating_add(1),
            end,
            false,
            false,
            0,
            need,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn find_below(
        &self,
        n: u32,
        lo: i64,
        hi: i64,
        lo_ok: bool,
        hi_ok: bool,
        offset: i64,
        need: i64,
    ) -> Option<i64> {
        if n == NIL {
            return None;
        }
        let node = self.n(n);
        if lo_ok && hi_ok && offset.saturating_add(node.min_pref) >= need {
            return None;
        }
        let here = offset + node.lsum + node.delta;
        if node.key < lo {
            return self.find_below(node.right, lo, hi, false, hi_ok, here, need);
        }
        if node.key >= hi {
            return self.find_below(node.left, lo, hi, lo_ok, false, offset, need);
        }
        if let Some(k) = self.find_below(node.left, lo, hi, lo_ok, true, offset, need) {
            return Some(k);
        }
        if here < need {
            return Some(node.key);
        }
        self.find_below(node.right, lo, hi, true, hi_ok, here, need)
    }

    /// First breakpoint strictly after `after` where available is at least `need`.
    pub(crate) fn first_at_least(&self, after: i64, need: i64) -> Option<i64> {
        self.find_at_least(self.root, after.saturating_add(1), false, 0, need)
    }

    fn find_at_least(&self, n: u32, lo: i64, lo_ok: bool, offset: i64, need: i64) -> Option<i64> {
        if n == NIL {
            return None;
        }
        let node = self.n(n);
        if lo_ok && offset.saturating_add(node.max_pref) < need {
            return None;
        }
        let here = offset + node.lsum + node.delta;
        if node.key < lo {
            return self.find_at_least(node.right, lo, false, here, need);
        }
        if let Some(k) = self.find_at_least(node.left, lo, lo_ok, offset, need) {
            return Some(k);
        }
        if here >= need {
            return Some(node.key);
        }
        self.find_at_least(node.right, lo, true, here, need)
    }

    /// Steps over `[start, end)`: the levels at `start`, then each breakpoint inside the window.
    pub(crate) fn steps(&self, start: i64, end: i64) -> Vec<(i64, Levels)> {
        let mut out = vec![(start, self.levels_at(start))];
        let mut keys = Vec::new();
        self.collect(self.root, start.saturating_add(1), end, &mut keys);
        let mut level = out[0].1;
        for (k, d) in keys {
            for i in 0..4 {
                level[i] += d[i];
            }
            out.push((k, level));
        }
        out
    }

    fn collect(&self, n: u32, lo: i64, hi: i64, out: &mut Vec<(i64, Levels)>) {
        if n == NIL {
            return;
        }
        let node = self.n(n);
        if node.key >= lo {
            self.collect(node.left, lo, hi, out);
        }
        if node.key >= lo && node.key < hi {
            out.push((node.key, self.cold[n as usize].delta));
        }
        if node.key < hi {
            self.collect(node.right, lo, hi, out);
        }
    }

    /// Last breakpoint, if any.
    #[cfg(test)]
    pub(crate) fn last_key(&self) -> Option<i64> {
        let mut n = self.root;
        let mut last = None;
        while n != NIL {
            last = Some(self.n(n).key);
            n = self.n(n).right;
        }
        last
    }
}

#[cfg(test)]
mod tests;
