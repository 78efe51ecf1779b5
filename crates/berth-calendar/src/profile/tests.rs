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
        }
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
