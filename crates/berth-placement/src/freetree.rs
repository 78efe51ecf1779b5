//! Free-capacity index of the open leaves: a segment tree of component-wise maxima, so the
//! leaves that fit a demand vector are found without scanning the leaves that do not.

/// Component-wise maximum free capacity per subtree (`i64::MIN` = no open leaf below).
#[derive(Clone, Debug)]
pub(crate) struct FreeTree {
    dims: usize,
    /// Leaf slots (a power of two at least the number of leaves).
    size: usize,
    /// Node `i` (1-based heap order) at `i * dims..(i + 1) * dims`.
    max: Vec<i64>,
}

impl FreeTree {
    /// Every leaf closed.
    pub(crate) fn new(leaves: usize, dims: usize) -> Self {
        let size = leaves.max(1).next_power_of_two();
        FreeTree {
            dims,
            size,
            max: vec![i64::MIN; 2 * size * dims],
        }
    }

    /// Sets a leaf's free vector to `cap - load` (`None` = closed: never reported).
    pub(crate) fn set(&mut self, leaf: usize, cap_load: Option<(&[i64], &[i64])>) {
        if leaf >= self.size {
            return;
        }
        let d = self.dims;
        let mut i = self.size + leaf;
        for k in 0..d {
            self.max[i * d + k] = cap_load
                .and_then(|(c, l)| Some(c.get(k)? - l.get(k)?))
                .unwrap_or(i64::MIN);
        }
        while i > 1 {
            i /= 2;
            for k in 0..d {
                self.max[i * d + k] = self.max[2 * i * d + k].max(self.max[(2 * i + 1) * d + k]);
            }
        }
    }

    fn covers(&self, node: usize, demand: &[i64]) -> bool {
        let d = self.dims;
        self.max[node * d..(node + 1) * d]
            .iter()
            .zip(demand)
            .all(|(&m, &x)| m >= x)
    }

    /// Calls `visit` on every open leaf with at least `demand` free in each dimension, in
    /// leaf order from `start` (wrapping around), until it returns `true` or `budget` nodes
    /// were examined (subtree maxima can pass where no single leaf fits).
    pub(crate) fn for_each_fit(
        &self,
        demand: &[i64],
        start: usize,
        budget: usize,
        visit: &mut impl FnMut(usize) -> bool,
    ) {
        if demand.len() != self.dims {
            return;
        }
        let start = start % self.size;
        let mut left = budget;
        if !self.walk(
            1,
            (0, self.size),
            (start, self.size),
            demand,
            &mut left,
            visit,
        ) {
            self.walk(1, (0, self.size), (0, start), demand, &mut left, visit);
        }
    }

    /// Depth-first over node `node` covering `[lo, hi)`, restricted to `[a, b)`; `true` once
    /// `visit` asked to stop.
    fn walk(
        &self,
        node: usize,
        (lo, hi): (usize, usize),
        (a, b): (usize, usize),
        demand: &[i64],
        left: &mut usize,
        visit: &mut impl FnMut(usize) -> bool,
    ) -> bool {
        if hi <= a || b <= lo {
            return false;
        }
        if *left == 0 {
            return true;
        }
        *left -= 1;
        if !self.covers(node, demand) {
            return false;
        }
        if hi - lo == 1 {
            return visit(lo);
        }
        let mid = lo.midpoint(hi);
        self.walk(2 * node, (lo, mid), (a, b), demand, left, visit)
            || self.walk(2 * node + 1, (mid, hi), (a, b), demand, left, visit)
    }
}

#[cfg(test)]
mod tests {
    use super::FreeTree;

    #[test]
    fn reports_exactly_the_fitting_open_leaves_in_wrapped_order() {
        let free: Vec<Option<[i64; 2]>> = (0..37)
            .map(|l| (l % 5 != 0).then_some([(l * 7) % 11, (l * 3) % 13]))
            .collect();
        let mut t = FreeTree::new(free.len(), 2);
        for (l, f) in free.iter().enumerate() {
            t.set(l, f.as_ref().map(|v| (&v[..], &[0, 0][..])));
        }
        for start in [0, 5, 36] {
            let demand = [4, 6];
            let mut seen = Vec::new();
            t.for_each_fit(&demand, start, usize::MAX, &mut |l| {
                seen.push(l);
                false
            });
            let want: Vec<usize> = (start..free.len())
                .chain(0..start)
                .filter(|&l| free[l].is_some_and(|f| f[0] >= 4 && f[1] >= 6))
                .collect();
            assert_eq!(seen, want);
        }
        // Closing a leaf removes it; stopping early stops.
        t.set(2, None);
        let mut first = None;
        t.for_each_fit(&[0, 0], 0, usize::MAX, &mut |l| {
            first = Some(l);
            true
        });
        assert_eq!(first, Some(1));
        // A budget of one node examines only the root.
        let mut any = false;
        t.for_each_fit(&[0, 0], 0, 1, &mut |_| {
            any = true;
            false
        });
        assert!(!any);
    }
}
