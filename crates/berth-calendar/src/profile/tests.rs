//! Profile against a naive array of levels.

use proptest::prelude::*;

use super::*;

/// Naive model: a list of contributions, levels summed by brute force.
#[derive(Default)]
struct Naive {
    items: Vec<(i64, i64, Levels)>,
}

impl Naive {
    fn levels(&self, t: i64) -> Levels {
        let mut l = [0; 4];
        for (s, e, d) in &self.items {
            if *s <= t && t < *e {
                for i in 0..4 {
                    l[i] += d[i];
                }
            }
        }
        l
    }
    fn avail(&self, t: i64) -> i64 {
        avail_of(&self.levels(t))
    }
}

#[derive(Debug, Clone)]
enum Op {
    Add(i64, i64, Levels),
    Remove(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (
            0i64..40,
            1i64..20,
            prop::bool::ANY,
            -5i64..6,
            0i64..6,
            0i64..6
        )
            .prop_map(|(s, len, open, cap, res, un)| {
                Op::Add(s, if open { OPEN } else { s + len }, [cap, res, un, un])
            }),
        (0usize..64).prop_map(Op::Remove),
    ]
}

proptest! {
    #[test]
    fn profile_matches_naive(ops in prop::collection::vec(op(), 1..60), probes in prop::collection::vec((0i64..70, 1i64..30, -3i64..8), 8)) {
        let mut p = Profile::new();
        let mut n = Naive::default();
        for o in ops {
            match o {
                Op::Add(s, e, d) => { p.add(s, e, d); n.items.push((s, e, d)); }
                Op::Remove(i) => {
                    if !n.items.is_empty() {
                        let (s, e, d) = n.items.remove(i % n.items.len());
                        p.remove(s, e, d);
                    }
                }
            }
        }
        for t in 0..80 {
            prop_assert_eq!(p.levels_at(t), n.levels(t));
            let next = (t + 1..100).find(|k| p.contains(*k));
            prop_assert_eq!(p.next_after(t), next);
        }
        prop_assert_eq!(p.next_after(-1), (0..100).find(|k| p.contains(*k)));
        for (s, len, need) in probes {
            let e = s + len;
            let naive_min = (s..e).map(|t| n.avail(t)).min().unwrap_or(i64::MAX);
            prop_assert_eq!(p.min_avail(s, e), naive_min);
            let naive_below = (s..e).find(|t| n.avail(*t) < need);
            prop_assert_eq!(p.first_below(s, e, need), naive_below);
            let got = p.first_at_least(s, need);
            // first_at_least reports breakpoints only: the first key after s where avail >= need.
            let expect = (s + 1..100).filter(|t| p.contains(*t)).find(|t| n.avail(*t) >= need);
            prop_assert_eq!(got, expect);
            let steps = p.steps(s, e);
            prop_assert_eq!(steps[0], (s, n.levels(s)));
            for w in steps.windows(2) {
                prop_assert!(w[0].0 < w[1].0);
            }
            for (t, l) in &steps {
                prop_assert_eq!(*l, n.levels(*t));
            }
        }
        // No dead keys: every key is some contribution's boundary.
        let bounds: std::collections::BTreeSet<i64> = n.items.iter().flat_map(|(s, e, _)| [*s, *e]).filter(|t| *t != OPEN).collect();
        prop_assert!(p.len() <= bounds.len());
    }
}

#[test]
fn removing_everything_empties_the_tree() {
    let mut p = Profile::new();
    for i in 0..100 {
        p.add(i, i + 10, [1, 0, 0, 0]);
    }
    assert_eq!(p.levels_at(50), [10, 0, 0, 0]);
    for i in 0..100 {
        p.remove(i, i + 10, [1, 0, 0, 0]);
    }
    assert_eq!(p.len(), 0);
    assert_eq!(p.last_key(), None);
}

/// Difference-array oracle over `0..SPAN`: levels by prefix sums, keys by reference count.
const SPAN: usize = 2_000;

#[derive(Clone, Debug)]
struct Diff {
    delta: Vec<Levels>,
    refs: Vec<i64>,
}

impl Diff {
    fn new() -> Self {
        Diff {
            delta: vec![[0; 4]; SPAN],
            refs: vec![0; SPAN],
        }
    }
    fn point(&mut self, k: i64, d: Levels, r: i64) {
        let k = k as usize;
        add_levels(&mut self.delta[k], &d);
        self.refs[k] += r;
    }
    fn add(&mut self, s: i64, e: i64, d: Levels) {
        self.point(s, d, 1);
        if e != OPEN {
            self.point(e, d.map(|x| -x), 1);
        }
    }
    fn remove(&mut self, s: i64, e: i64, d: Levels) {
        self.point(s, d.map(|x| -x), -1);
        if e != OPEN {
            self.point(e, d, -1);
        }
    }
    fn levels(&self) -> Vec<Levels> {
        let mut l = [0; 4];
        self.delta
            .iter()
            .map(|d| {
                add_levels(&mut l, d);
                l
            })
            .collect()
    }
}

/// Deep trees: thousands of keys, so leaves split, merge and borrow and the root grows and
/// shrinks; after every batch the structure is checked and every answer compared.
fn deep_case(ops: &[(i64, i64, bool, i64, bool)], probes: &[(i64, i64, i64)], bulk: bool) {
    let mut p = Profile::new();
    let mut d = Diff::new();
    let mut live: Vec<(i64, i64, Levels)> = Vec::new();
    let mut pending: Vec<(i64, Levels, u32)> = Vec::new();
    for (i, &(s, len, open, v, remove)) in ops.iter().enumerate() {
        let e = if open {
            OPEN
        } else {
            (s + len).min(SPAN as i64 - 1)
        };
        if remove && !live.is_empty() {
            let (s, e, l) = live.swap_remove((v.unsigned_abs() as usize * 7919) % live.len());
            p.remove(s, e, l);
            d.remove(s, e, l);
        } else if s < e {
            let l = [v, v.rem_euclid(3), v.rem_euclid(2), v.rem_euclid(5)];
            if l == [0; 4] {
                continue;
            }
            if bulk && i % 3 == 0 {
                // Through the sorted loader instead of one by one.
                pending.push((s, l, 1));
                if e != OPEN {
                    pending.push((e, l.map(|x| -x), 1));
                }
                pending.sort_by_key(|x| x.0);
                let mut merged: Vec<(i64, Levels, u32)> = Vec::new();
                for (k, l, r) in pending.drain(..) {
                    match merged.last_mut() {
                        Some(m) if m.0 == k => {
                            add_levels(&mut m.1, &l);
                            m.2 += r;
                        }
                        _ => merged.push((k, l, r)),
                    }
                }
                let all = p.merged(&merged).unwrap();
                p.build(&all);
            } else {
                p.add(s, e, l);
            }
            d.add(s, e, l);
            live.push((s, e, l));
        }
        if i % 97 == 0 {
            assert_eq!(p.check(), Ok(()));
        }
    }
    assert_eq!(p.check(), Ok(()));
    let levels = d.levels();
    let avail: Vec<i64> = levels.iter().map(avail_of).collect();
    let keys: Vec<i64> = (0..SPAN as i64)
        .filter(|&k| d.refs[k as usize] > 0)
        .collect();
    assert_eq!(p.len(), keys.len());
    for &k in &keys {
        assert!(p.contains(k));
    }
    assert_eq!(p.last_key(), keys.last().copied());
    assert_eq!(p.next_after(i64::MIN), keys.first().copied());
    assert_eq!(keys.last().and_then(|&k| p.next_after(k)), None);
    for t in (0..SPAN as i64).step_by(7) {
        assert_eq!(p.levels_at(t), levels[t as usize]);
        assert_eq!(p.avail_at(t), avail[t as usize]);
    }
    for &(s, len, need) in probes {
        let e = (s + len).min(SPAN as i64);
        let range = s as usize..e as usize;
        assert_eq!(
            p.min_avail(s, e),
            avail[range.clone()]
                .iter()
                .copied()
                .min()
                .unwrap_or(i64::MAX)
        );
        let below = range.clone().find(|&t| avail[t] < need).map(|t| t as i64);
        assert_eq!(p.first_below(s, e, need), below);
        let at_least = keys
            .iter()
            .copied()
            .find(|&k| k > s && avail[k as usize] >= need);
        assert_eq!(p.first_at_least(s, need), at_least);
        let next = keys.iter().copied().find(|&k| k > s);
        assert_eq!(p.next_after(s), next);
        let steps = p.steps(s, e);
        let expect: Vec<(i64, Levels)> = std::iter::once((s, levels[s as usize]))
            .chain(
                keys.iter()
                    .filter(|&&k| k > s && k < e)
                    .map(|&k| (k, levels[k as usize])),
            )
            .collect();
        assert_eq!(steps, expect);
    }
    let mut c = p.clone();
    c.compact();
    assert_eq!(c.check(), Ok(()));
    assert_eq!(c.entries(), p.entries());
    for (s, e, l) in live {
        p.remove(s, e, l);
    }
    assert_eq!(p.check(), Ok(()));
    assert_eq!(p.len(), 0);
}

fn deep_op() -> impl Strategy<Value = (i64, i64, bool, i64, bool)> {
    (
        0i64..SPAN as i64 - 1,
        1i64..300,
        prop::bool::weighted(0.05),
        -4i64..9,
        prop::bool::weighted(0.3),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn deep_profile_matches_difference_array(
        ops in prop::collection::vec(deep_op(), 200..2500),
        probes in prop::collection::vec((0i64..SPAN as i64 - 1, 1i64..600, -10i64..40), 40),
        bulk in prop::bool::ANY,
    ) {
        deep_case(&ops, &probes, bulk);
    }
}

#[test]
fn ascending_and_descending_loads_keep_the_tree_balanced() {
    for rev in [false, true] {
        let mut p = Profile::new();
        let keys: Vec<i64> = if rev {
            (0..5_000).rev().collect()
        } else {
            (0..5_000).collect()
        };
        for &k in &keys {
            p.add(2 * k, 2 * k + 1, [3, 1, 0, 0]);
        }
        assert_eq!(p.check(), Ok(()));
        assert_eq!(p.len(), 10_000);
        // 10 000 keys in nodes of at least MIN entries: at most 1 + log_MIN(10 000) levels.
        assert!(p.height <= 5, "height {}", p.height);
        assert_eq!(p.min_avail(0, 10_000), 0);
        assert_eq!(p.first_below(1, 10_000, 1), Some(1));
        assert_eq!(p.first_at_least(0, 2), Some(2));
        for &k in &keys {
            p.remove(2 * k, 2 * k + 1, [3, 1, 0, 0]);
        }
        assert_eq!(p.check(), Ok(()));
        assert_eq!((p.len(), p.height), (0, 0));
    }
}
