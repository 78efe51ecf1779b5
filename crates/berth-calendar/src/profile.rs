//! Per pool and dimension availability profile: a B+-tree of breakpoints with prefix-min/max.
//!
//! Each breakpoint (a time in microseconds) stores the *change* of four levels at that instant:
//! capacity, reserved, unreserved usage and total usage. A level at `t` is the sum of the changes
//! at keys `<= t`. Every entry of a node (a breakpoint in a leaf, a child in an inner node)
//! carries its smallest key, the sum of its changes of `available = capacity - reserved -
//! unreserved` and the minimum and maximum prefix of that sum, so point levels, range minimum,
//! "first key below" and "first key at or above" read five wide nodes at a million keys (a
//! treap walked some twenty-five scattered nodes). Nodes are columns (keys, sums, minima,
//! maxima) and updates recurse without allocating. A key lives while some contribution starts
//! or ends there (reference count), so the tree never holds dead keys. Only the set of keys
//! with their changes is observable, never the shape.

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

/// Entries per node.
const B: usize = 32;
/// Fewest entries of a node other than the root (fewer triggers a merge or a borrow).
const MIN: usize = B / 4;
/// Entries per node when building from a sorted list: room for inserts before a split.
const FILL: usize = B - B / 4;

/// One node, leaf or inner, as columns so a scan reads consecutive memory. Entry `i` covers
/// the keys in `[key[i], key[i + 1])`; in a leaf it is one breakpoint (`min == max == sum`,
/// `link` its reference count), in an inner node a child (`link` its index).
#[derive(Clone, Copy, Debug)]
struct Node {
    len: usize,
    key: [i64; B],
    /// Sum of the availability changes of the entry.
    sum: [i64; B],
    /// Minimum over the entry's keys of the prefix of availability changes, from its start.
    min: [i64; B],
    /// Maximum of the same prefixes.
    max: [i64; B],
    link: [u32; B],
}

const EMPTY: Node = Node {
    len: 0,
    key: [0; B],
    sum: [0; B],
    min: [0; B],
    max: [0; B],
    link: [0; B],
};

/// What a parent keeps about one entry.
#[derive(Clone, Copy, Debug)]
struct Summary {
    key: i64,
    sum: i64,
    min: i64,
    max: i64,
    /// Sums of the four level changes.
    lv: Levels,
}

impl Summary {
    fn point(key: i64, lv: Levels) -> Self {
        let a = avail_of(&lv);
        Summary {
            key,
            sum: a,
            min: a,
            max: a,
            lv,
        }
    }
}

fn avail_of(l: &Levels) -> i64 {
    l[CAP] - l[RES] - l[UNRES]
}

fn add_levels(acc: &mut Levels, d: &Levels) {
    for (a, x) in acc.iter_mut().zip(d) {
        *a += x;
    }
}

/// Opens a gap of `src.len()` entries at `at` (entries `at..len` move right) and fills it.
fn splice_in<T: Copy>(dst: &mut [T; B], len: usize, at: usize, src: &[T]) {
    dst.copy_within(at..len, at + src.len());
    dst[at..at + src.len()].copy_from_slice(src);
}

/// Removes entries `from..from + count` of the first `len`.
fn cut<T: Copy>(a: &mut [T; B], len: usize, from: usize, count: usize) {
    a.copy_within(from + count..len, from);
}

/// What a range walk reports to its visitor, in key order.
trait Visit {
    /// The level in force at the window start; `true` stops the walk.
    fn at_start(&mut self, level: i64) -> bool;
    /// A subtree wholly inside the window, entered at level `off`, with prefix extrema
    /// `min`/`max` (relative to `off`): `true` passes over it, `false` walks into it.
    fn pass(&mut self, off: i64, min: i64, max: i64) -> bool;
    /// A breakpoint inside the window with the level after it; `true` stops the walk.
    fn at_key(&mut self, key: i64, level: i64) -> bool;
}

/// State of a walk over `(start, end)`: the level so far and whether `at_start` was called.
struct Walk {
    start: i64,
    end: i64,
    off: i64,
    checked: bool,
}

/// First level below `need`.
struct Below {
    need: i64,
    found: Option<i64>,
    start: i64,
}

impl Visit for Below {
    fn at_start(&mut self, level: i64) -> bool {
        if level < self.need {
            self.found = Some(self.start);
        }
        self.found.is_some()
    }
    fn pass(&mut self, off: i64, min: i64, _max: i64) -> bool {
        off.saturating_add(min) >= self.need
    }
    fn at_key(&mut self, key: i64, level: i64) -> bool {
        if level < self.need {
            self.found = Some(key);
        }
        self.found.is_some()
    }
}

/// First breakpoint whose level is at least `need`.
struct AtLeast {
    need: i64,
    found: Option<i64>,
}

impl Visit for AtLeast {
    fn at_start(&mut self, _level: i64) -> bool {
        false
    }
    fn pass(&mut self, off: i64, _min: i64, max: i64) -> bool {
        off.saturating_add(max) < self.need
    }
    fn at_key(&mut self, key: i64, level: i64) -> bool {
        if level >= self.need {
            self.found = Some(key);
        }
        self.found.is_some()
    }
}

/// Minimum level.
struct Min(i64);

impl Visit for Min {
    fn at_start(&mut self, level: i64) -> bool {
        self.0 = self.0.min(level);
        false
    }
    fn pass(&mut self, off: i64, min: i64, _max: i64) -> bool {
        self.0 = self.0.min(off.saturating_add(min));
        true
    }
    fn at_key(&mut self, _key: i64, level: i64) -> bool {
        self.0 = self.0.min(level);
        false
    }
}

/// A step function of time for one pool and one dimension.
#[derive(Clone, Debug)]
pub(crate) struct Profile {
    nodes: Vec<Node>,
    /// Level changes per entry of each node (read only by reports and updates).
    levels: Vec<[Levels; B]>,
    free: Vec<u32>,
    root: u32,
    /// Edges from the root to the leaves (0: the root is a leaf).
    height: u32,
    /// Number of live breakpoints.
    count: usize,
}

impl Default for Profile {
    fn default() -> Self {
        Self::new()
    }
}

impl Profile {
    pub(crate) fn new() -> Self {
        let mut p = Profile {
            nodes: Vec::new(),
            levels: Vec::new(),
            free: Vec::new(),
            root: 0,
            height: 0,
            count: 0,
        };
        p.root = p.alloc();
        p
    }

    /// Number of live breakpoints.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    fn node(&self, n: u32) -> &Node {
        &self.nodes[n as usize]
    }

    fn alloc(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            self.nodes[i as usize].len = 0;
            return i;
        }
        self.nodes.push(EMPTY);
        self.levels.push([[0; 4]; B]);
        (self.nodes.len() - 1) as u32
    }

    /// Smallest key, sum and prefix extrema of node `n`: what its parent keeps, but the levels.
    fn hot(&self, n: u32) -> (i64, i64, i64, i64) {
        let node = self.node(n);
        let (mut run, mut min, mut max) = (0i64, i64::MAX, i64::MIN);
        for i in 0..node.len {
            min = min.min(run.saturating_add(node.min[i]));
            max = max.max(run.saturating_add(node.max[i]));
            run += node.sum[i];
        }
        let key = if node.len > 0 { node.key[0] } else { 0 };
        (key, run, min, max)
    }

    fn summary(&self, n: u32) -> Summary {
        let (key, sum, min, max) = self.hot(n);
        let mut lv = [0; 4];
        for l in &self.levels[n as usize][..self.node(n).len] {
            add_levels(&mut lv, l);
        }
        Summary {
            key,
            sum,
            min,
            max,
            lv,
        }
    }

    fn set_entry(&mut self, n: u32, i: usize, s: &Summary, link: u32) {
        let node = &mut self.nodes[n as usize];
        node.key[i] = s.key;
        node.sum[i] = s.sum;
        node.min[i] = s.min;
        node.max[i] = s.max;
        node.link[i] = link;
        self.levels[n as usize][i] = s.lv;
    }

    /// Moves `count` entries of `src` from `from` into `dst` at `at`.
    fn move_entries(&mut self, src: u32, from: usize, count: usize, dst: u32, at: usize) {
        let s = self.nodes[src as usize];
        let sl = self.levels[src as usize];
        let r = from..from + count;
        let d = &mut self.nodes[dst as usize];
        let len = d.len;
        splice_in(&mut d.key, len, at, &s.key[r.clone()]);
        splice_in(&mut d.sum, len, at, &s.sum[r.clone()]);
        splice_in(&mut d.min, len, at, &s.min[r.clone()]);
        splice_in(&mut d.max, len, at, &s.max[r.clone()]);
        splice_in(&mut d.link, len, at, &s.link[r.clone()]);
        d.len += count;
        splice_in(&mut self.levels[dst as usize], len, at, &sl[r]);
        let sn = &mut self.nodes[src as usize];
        let len = sn.len;
        cut(&mut sn.key, len, from, count);
        cut(&mut sn.sum, len, from, count);
        cut(&mut sn.min, len, from, count);
        cut(&mut sn.max, len, from, count);
        cut(&mut sn.link, len, from, count);
        sn.len -= count;
        cut(&mut self.levels[src as usize], len, from, count);
    }

    fn remove_entry(&mut self, n: u32, i: usize) {
        let node = &mut self.nodes[n as usize];
        let len = node.len;
        cut(&mut node.key, len, i, 1);
        cut(&mut node.sum, len, i, 1);
        cut(&mut node.min, len, i, 1);
        cut(&mut node.max, len, i, 1);
        cut(&mut node.link, len, i, 1);
        node.len -= 1;
        cut(&mut self.levels[n as usize], len, i, 1);
    }

    /// Inserts an entry at `at`; splits a full node first and returns the new right half.
    fn insert_entry(&mut self, n: u32, at: usize, s: &Summary, link: u32) -> Option<u32> {
        let (target, at, sib) = if self.node(n).len < B {
            (n, at, None)
        } else {
            let sib = self.alloc();
            self.move_entries(n, B / 2, B - B / 2, sib, 0);
            if at <= B / 2 {
                (n, at, Some(sib))
            } else {
                (sib, at - B / 2, Some(sib))
            }
        };
        let node = &mut self.nodes[target as usize];
        let len = node.len;
        splice_in(&mut node.key, len, at, &[s.key]);
        splice_in(&mut node.sum, len, at, &[s.sum]);
        splice_in(&mut node.min, len, at, &[s.min]);
        splice_in(&mut node.max, len, at, &[s.max]);
        splice_in(&mut node.link, len, at, &[link]);
        node.len += 1;
        splice_in(&mut self.levels[target as usize], len, at, &[s.lv]);
        sib
    }

    /// Merges child `i` of `p` (below `MIN` entries) with a neighbour, or evens them out.
    fn rebalance(&mut self, p: u32, i: usize) {
        let plen = self.node(p).len;
        if plen < 2 {
            return;
        }
        let (ia, ib) = if i + 1 < plen { (i, i + 1) } else { (i - 1, i) };
        let (a, b) = (self.node(p).link[ia], self.node(p).link[ib]);
        let (la, lb) = (self.node(a).len, self.node(b).len);
        if la + lb <= B {
            self.move_entries(b, 0, lb, a, la);
            self.free.push(b);
            self.remove_entry(p, ib);
        } else {
            let half = (la + lb) / 2;
            if la < half {
                self.move_entries(b, 0, half - la, a, la);
            } else {
                self.move_entries(a, half, la - half, b, 0);
            }
            let s = self.summary(b);
            self.set_entry(p, ib, &s, b);
        }
        let s = self.summary(a);
        self.set_entry(p, ia, &s, a);
    }

    /// Adds `delta` and `refs` at `key` under node `n` of height `h`; a key whose references
    /// drop to zero leaves. Returns the change of the subtree's level totals and the new right
    /// sibling when `n` split.
    fn update(
        &mut self,
        n: u32,
        h: u32,
        key: i64,
        delta: &Levels,
        refs: i64,
    ) -> (Levels, Option<u32>) {
        let node = self.node(n);
        let len = node.len;
        if h == 0 {
            let pos = node.key[..len].partition_point(|&k| k < key);
            if pos < len && node.key[pos] == key {
                let lv = &mut self.levels[n as usize][pos];
                let before = *lv;
                add_levels(lv, delta);
                let a = avail_of(lv);
                let node = &mut self.nodes[n as usize];
                let left = (i64::from(node.link[pos]) + refs).max(0);
                node.link[pos] = u32::try_from(left).unwrap_or(u32::MAX);
                (node.sum[pos], node.min[pos], node.max[pos]) = (a, a, a);
                if left == 0 {
                    self.remove_entry(n, pos);
                    self.count -= 1;
                    return (before.map(|x| -x), None);
                }
                return (*delta, None);
            }
            if refs <= 0 {
                return ([0; 4], None);
            }
            self.count += 1;
            let refs = u32::try_from(refs).unwrap_or(u32::MAX);
            let sib = self.insert_entry(n, pos, &Summary::point(key, *delta), refs);
            return (*delta, sib);
        }
        let i = node.key[..len]
            .partition_point(|&k| k <= key)
            .saturating_sub(1);
        let child = node.link[i];
        let (change, split) = self.update(child, h - 1, key, delta, refs);
        if let Some(sib) = split {
            let s = self.summary(child);
            self.set_entry(n, i, &s, child);
            let s = self.summary(sib);
            return (change, self.insert_entry(n, i + 1, &s, sib));
        }
        // No split: the levels moved by `change`; only the hot columns need a rescan.
        let (k, sum, min, max) = self.hot(child);
        let node = &mut self.nodes[n as usize];
        (node.key[i], node.sum[i], node.min[i], node.max[i]) = (k, sum, min, max);
        add_levels(&mut self.levels[n as usize][i], &change);
        if self.node(child).len < MIN {
            self.rebalance(n, i);
        }
        (change, None)
    }

    fn point(&mut self, key: i64, delta: Levels, refs: i64) {
        if let (_, Some(sib)) = self.update(self.root, self.height, key, &delta, refs) {
            let (a, b) = (self.summary(self.root), self.summary(sib));
            let new = self.alloc();
            self.set_entry(new, 0, &a, self.root);
            self.set_entry(new, 1, &b, sib);
            self.nodes[new as usize].len = 2;
            self.root = new;
            self.height += 1;
        }
        while self.height > 0 && self.node(self.root).len == 1 {
            self.free.push(self.root);
            self.root = self.node(self.root).link[0];
            self.height -= 1;
        }
    }

    /// Every breakpoint in key order: key, level changes, reference count.
    pub(crate) fn entries(&self) -> Vec<(i64, Levels, u32)> {
        let mut out = Vec::with_capacity(self.count);
        self.collect(self.root, self.height, i64::MIN, OPEN, &mut |k, l, r| {
            out.push((k, *l, r))
        });
        out
    }

    /// Replaces the content with `entries` (strictly increasing keys, positive references),
    /// nodes filled to three quarters and laid out level by level. O(entries).
    pub(crate) fn build(&mut self, entries: &[(i64, Levels, u32)]) {
        self.nodes.clear();
        self.levels.clear();
        self.free.clear();
        self.count = entries.len();
        self.height = 0;
        let mut level: Vec<(Summary, u32)> = entries
            .iter()
            .map(|&(k, l, r)| (Summary::point(k, l), r))
            .collect();
        loop {
            let chunks = level.len().div_ceil(FILL).max(1);
            let mut up = Vec::with_capacity(chunks);
            let mut from = 0;
            for c in 0..chunks {
                // Even sizes: every node gets at least FILL / 2 >= MIN entries when split.
                let to = level.len() * (c + 1) / chunks;
                let n = self.alloc();
                for (i, (s, link)) in level[from..to].iter().enumerate() {
                    self.set_entry(n, i, s, *link);
                }
                self.nodes[n as usize].len = to - from;
                up.push((self.summary(n), n));
                from = to;
            }
            if up.len() == 1 {
                self.root = up[0].1;
                return;
            }
            level = up;
            self.height += 1;
        }
    }

    /// The present breakpoints with the sorted, key-unique `adds` (level changes and
    /// references per key) folded in, ready for [`Profile::build`]; `None` when a sum
    /// overflows. O(breakpoints + adds).
    pub(crate) fn merged(&self, adds: &[(i64, Levels, u32)]) -> Option<Vec<(i64, Levels, u32)>> {
        let old = self.entries();
        let mut out = Vec::with_capacity(old.len() + adds.len());
        let (mut i, mut j) = (0, 0);
        while i < old.len() || j < adds.len() {
            let take_old = j == adds.len() || (i < old.len() && old[i].0 <= adds[j].0);
            let take_add = i == old.len() || (j < adds.len() && adds[j].0 <= old[i].0);
            let mut e = if take_old { old[i] } else { adds[j] };
            if take_old && take_add {
                for (x, d) in e.1.iter_mut().zip(adds[j].1) {
                    *x = x.checked_add(d)?;
                }
                e.2 = e.2.checked_add(adds[j].2)?;
            }
            i += usize::from(take_old);
            j += usize::from(take_add);
            out.push(e);
        }
        Some(out)
    }

    /// Re-lays the tree level by level with nodes three quarters full (same breakpoints, same
    /// answers); dead slots are dropped.
    pub(crate) fn compact(&mut self) {
        let entries = self.entries();
        self.build(&entries);
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

    /// Whether `key` is a breakpoint.
    #[cfg(test)]
    pub(crate) fn contains(&self, key: i64) -> bool {
        let (mut n, mut h) = (self.root, self.height);
        loop {
            let node = self.node(n);
            let len = node.len;
            if h == 0 {
                return node.key[..len].binary_search(&key).is_ok();
            }
            let i = node.key[..len]
                .partition_point(|&k| k <= key)
                .saturating_sub(1);
            n = node.link[i];
            h -= 1;
        }
    }

    /// Levels in force at `t` (sum of changes at keys `<= t`).
    pub(crate) fn levels_at(&self, t: i64) -> Levels {
        let mut acc = [0i64; 4];
        let (mut n, mut h) = (self.root, self.height);
        loop {
            let node = self.node(n);
            let lv = &self.levels[n as usize];
            let len = node.len;
            // Entries before `upto` start at or before `t`: in a leaf they all count, in an
            // inner node all but the last, which holds `t` and is descended.
            let upto = node.key[..len].partition_point(|&k| k <= t);
            if h == 0 {
                for l in &lv[..upto] {
                    add_levels(&mut acc, l);
                }
                return acc;
            }
            let c = upto.saturating_sub(1);
            for l in &lv[..c] {
                add_levels(&mut acc, l);
            }
            n = node.link[c];
            h -= 1;
        }
    }

    /// Smallest breakpoint strictly after `t`: one descent, O(log n). An inner entry's key is
    /// the smallest key of its subtree, so the answer is in the child holding `t` or is the
    /// key of the entry after it.
    pub(crate) fn next_after(&self, t: i64) -> Option<i64> {
        let (mut n, mut h) = (self.root, self.height);
        let mut after = None;
        loop {
            let node = self.node(n);
            let len = node.len;
            let upto = node.key[..len].partition_point(|&k| k <= t);
            if h == 0 {
                return if upto < len {
                    Some(node.key[upto])
                } else {
                    after
                };
            }
            if upto == 0 {
                return (len > 0).then(|| node.key[0]).or(after);
            }
            if upto < len {
                after = Some(node.key[upto]);
            }
            n = node.link[upto - 1];
            h -= 1;
        }
    }

    /// Available (`capacity - reserved - unreserved`) at `t`.
    pub(crate) fn avail_at(&self, t: i64) -> i64 {
        let mut acc = 0;
        let (mut n, mut h) = (self.root, self.height);
        loop {
            let node = self.node(n);
            let len = node.len;
            let upto = node.key[..len].partition_point(|&k| k <= t);
            if h == 0 {
                return acc + node.sum[..upto].iter().sum::<i64>();
            }
            let c = upto.saturating_sub(1);
            acc += node.sum[..c].iter().sum::<i64>();
            n = node.link[c];
            h -= 1;
        }
    }

    /// Walks the breakpoints after `w.start` and before `w.end` in order under node `n`
    /// (height `h`, keys below `ub`), passing over wholly inside subtrees the visitor allows.
    /// Returns `true` when the walk stopped (visitor done or `w.end` reached).
    fn walk<V: Visit>(&self, n: u32, h: u32, ub: i64, w: &mut Walk, v: &mut V) -> bool {
        let node = self.node(n);
        let len = node.len;
        if h == 0 {
            for i in 0..len {
                let k = node.key[i];
                if k > w.start {
                    if !w.checked {
                        w.checked = true;
                        if v.at_start(w.off) {
                            return true;
                        }
                    }
                    if k >= w.end {
                        return true;
                    }
                    w.off += node.sum[i];
                    if v.at_key(k, w.off) {
                        return true;
                    }
                } else {
                    w.off += node.sum[i];
                }
            }
            return false;
        }
        for i in 0..len {
            let lo = node.key[i];
            let hi = if i + 1 < len { node.key[i + 1] } else { ub };
            // Keys of entry `i` lie in `[lo, hi)`.
            if hi <= w.start.saturating_add(1) {
                w.off += node.sum[i];
                continue;
            }
            if lo > w.start {
                if !w.checked {
                    w.checked = true;
                    if v.at_start(w.off) {
                        return true;
                    }
                }
                if lo >= w.end {
                    return true;
                }
                if hi <= w.end && v.pass(w.off, node.min[i], node.max[i]) {
                    w.off += node.sum[i];
                    continue;
                }
            }
            if self.walk(node.link[i], h - 1, hi, w, v) {
                return true;
            }
        }
        false
    }

    /// Runs a walk over `(start, end)`; `at_start` is called with the level at `start` first.
    fn run<V: Visit>(&self, start: i64, end: i64, v: &mut V) {
        let mut w = Walk {
            start,
            end,
            off: 0,
            checked: false,
        };
        if !self.walk(self.root, self.height, OPEN, &mut w, v) && !w.checked {
            v.at_start(w.off);
        }
    }

    /// Minimum available over the window `[start, end)`.
    pub(crate) fn min_avail(&self, start: i64, end: i64) -> i64 {
        let mut m = Min(i64::MAX);
        self.run(start, end, &mut m);
        m.0
    }

    /// First instant in `[start, end)` where available is below `need`.
    pub(crate) fn first_below(&self, start: i64, end: i64, need: i64) -> Option<i64> {
        if start >= end {
            return None;
        }
        let mut v = Below {
            need,
            found: None,
            start,
        };
        self.run(start, end, &mut v);
        v.found
    }

    /// First breakpoint strictly after `after` where available is at least `need`.
    pub(crate) fn first_at_least(&self, after: i64, need: i64) -> Option<i64> {
        let mut v = AtLeast { need, found: None };
        self.run(after, OPEN, &mut v);
        v.found
    }

    /// Steps over `[start, end)`: the levels at `start`, then each breakpoint inside the window.
    pub(crate) fn steps(&self, start: i64, end: i64) -> Vec<(i64, Levels)> {
        let mut out = vec![(start, self.levels_at(start))];
        let mut level = out[0].1;
        let lo = start.saturating_add(1);
        self.collect(self.root, self.height, lo, end, &mut |k, d, _| {
            add_levels(&mut level, d);
            out.push((k, level));
        });
        out
    }

    /// Calls `f` on each breakpoint in `[lo, hi)` under node `n` (height `h`), in key order.
    fn collect(&self, n: u32, h: u32, lo: i64, hi: i64, f: &mut impl FnMut(i64, &Levels, u32)) {
        let node = self.node(n);
        let len = node.len;
        let lv = &self.levels[n as usize];
        for (i, (&k, l)) in node.key[..len].iter().zip(&lv[..len]).enumerate() {
            if k >= hi {
                return;
            }
            if h == 0 {
                if k >= lo {
                    f(k, l, node.link[i]);
                }
            } else if i + 1 == len || node.key[i + 1] > lo {
                self.collect(node.link[i], h - 1, lo, hi, f);
            }
        }
    }

    /// Last breakpoint, if any.
    #[cfg(test)]
    pub(crate) fn last_key(&self) -> Option<i64> {
        let (mut n, mut h) = (self.root, self.height);
        loop {
            let node = self.node(n);
            let last = node.len.checked_sub(1)?;
            if h == 0 {
                return Some(node.key[last]);
            }
            n = node.link[last];
            h -= 1;
        }
    }

    /// Checks the structural invariants (sizes, key order, aggregates); test support.
    #[cfg(test)]
    pub(crate) fn check(&self) -> Result<(), String> {
        let mut keys = 0;
        self.check_node(self.root, self.height, true, i64::MIN, OPEN, &mut keys)?;
        if keys != self.count {
            return Err(format!("count {} but {keys} keys", self.count));
        }
        Ok(())
    }

    #[cfg(test)]
    fn check_node(
        &self,
        n: u32,
        h: u32,
        root: bool,
        lo: i64,
        hi: i64,
        keys: &mut usize,
    ) -> Result<(), String> {
        let node = self.node(n);
        if !root && node.len < MIN {
            return Err(format!("node {n} has {} entries", node.len));
        }
        for i in 0..node.len {
            let k = node.key[i];
            let next = if i + 1 < node.len {
                node.key[i + 1]
            } else {
                hi
            };
            if k < lo || k >= next {
                return Err(format!("key {k} out of order in node {n}"));
            }
            if h == 0 {
                *keys += 1;
                let a = avail_of(&self.levels[n as usize][i]);
                if (node.sum[i], node.min[i], node.max[i]) != (a, a, a) || node.link[i] == 0 {
                    return Err(format!("leaf entry {k} of node {n} is stale"));
                }
            } else {
                let c = node.link[i];
                let s = self.summary(c);
                let got = (node.key[i], node.sum[i], node.min[i], node.max[i]);
                if got != (s.key, s.sum, s.min, s.max) || self.levels[n as usize][i] != s.lv {
                    return Err(format!("entry {i} of node {n} is stale"));
                }
                self.check_node(c, h - 1, false, k, next, keys)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
