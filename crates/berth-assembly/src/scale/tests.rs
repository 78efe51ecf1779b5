//! Scale evaluation: worked cases and properties against a windowed oracle.

use proptest::prelude::*;

use super::*;

fn policy(out: Option<f64>, inn: Option<f64>, smoothing: u32) -> ScalePolicy {
    ScalePolicy {
        name: "p".into(),
        metric_owner: "A".into(),
        metric: "load".into(),
        target: "B".into(),
        scale_out_threshold: out,
        scale_in_threshold: inn,
        smoothing,
    }
}

fn cluster(min: u32, max: Option<u32>, inc: u32) -> ClusterSpec {
    ClusterSpec {
        initial: min,
        minimum: min,
        maximum: max,
        increment: inc,
    }
}

#[test]
fn needs_consecutive_breaches() {
    let p = policy(Some(90.0), Some(10.0), 3);
    let c = cluster(1, Some(4), 1);
    // Two breaches, a dip, then three: only the third of the second run acts.
    let d = evaluate_scale(&p, &c, 1, &[95.0, 95.0, 50.0, 91.0, 92.0, 93.0]);
    assert_eq!(
        d,
        vec![ScaleDecision::ScaleOut {
            at: 5,
            from: 1,
            to: 2
        }]
    );
    // The threshold itself is not a breach.
    assert!(evaluate_scale(&p, &c, 1, &[90.0; 10]).is_empty());
}

#[test]
fn clamps_to_bounds_and_increment() {
    let p = policy(Some(80.0), Some(10.0), 1);
    let c = cluster(2, Some(5), 2);
    let d = evaluate_scale(&p, &c, 2, &[99.0, 99.0, 99.0, 5.0, 5.0, 5.0]);
    assert_eq!(
        d,
        vec![
            ScaleDecision::ScaleOut {
                at: 0,
                from: 2,
                to: 4
            },
            ScaleDecision::ScaleOut {
                at: 1,
                from: 4,
                to: 5
            },
            ScaleDecision::ScaleIn {
                at: 3,
                from: 5,
                to: 3
            },
            ScaleDecision::ScaleIn {
                at: 4,
                from: 3,
                to: 2
            },
        ]
    );
}

#[test]
fn run_restarts_after_a_trigger_and_nan_breaks_it() {
    let p = policy(Some(90.0), None, 2);
    let c = cluster(1, None, 1);
    let d = evaluate_scale(&p, &c, 1, &[95.0, 95.0, 95.0, f64::NAN, 95.0, 95.0]);
    assert_eq!(
        d,
        vec![
            ScaleDecision::ScaleOut {
                at: 1,
                from: 1,
                to: 2
            },
            ScaleDecision::ScaleOut {
                at: 5,
                from: 2,
                to: 3
            },
        ]
    );
}

/// Naive oracle: at each index look back over the whole window.
fn oracle(p: &ScalePolicy, c: &ClusterSpec, start: u32, series: &[f64]) -> Vec<ScaleDecision> {
    let n = p.smoothing.max(1) as usize;
    let max = c.maximum.unwrap_or(u32::MAX);
    let mut nodes = start;
    let mut last_trigger: Option<usize> = None;
    let mut out = Vec::new();
    for i in 0..series.len() {
        if i + 1 < n || last_trigger.is_some_and(|t| t + n > i) {
            continue;
        }
        let window = &series[i + 1 - n..=i];
        let all = |want: bool| window.iter().all(|v| breach(p, *v) == Some(want));
        if all(true) {
            last_trigger = Some(i);
            if nodes < max {
                let to = (u64::from(nodes) + u64::from(c.increment.max(1))).min(u64::from(max));
                let to = u32::try_from(to).unwrap();
                out.push(ScaleDecision::ScaleOut {
                    at: i,
                    from: nodes,
                    to,
                });
                nodes = to;
            }
        } else if all(false) {
            last_trigger = Some(i);
            if nodes > c.minimum {
                let to = nodes.saturating_sub(c.increment.max(1)).max(c.minimum);
                out.push(ScaleDecision::ScaleIn {
                    at: i,
                    from: nodes,
                    to,
                });
                nodes = to;
            }
        }
    }
    out
}

fn arb_case() -> impl Strategy<Value = (ScalePolicy, ClusterSpec, u32, Vec<f64>)> {
    (0u32..4, 0u32..6, 1u32..4, 1u32..5, 0u32..6).prop_flat_map(
        |(min, extra, inc, smoothing, start_off)| {
            let max = min + extra;
            let start = min + start_off.min(extra);
            (
                Just(policy(Some(70.0), Some(30.0), smoothing)),
                Just(cluster(min, Some(max), inc)),
                Just(start),
                proptest::collection::vec(
                    prop_oneof![Just(10.0), Just(50.0), Just(90.0), 0.0f64..100.0],
                    0..40,
                ),
            )
        },
    )
}

proptest! {
    #[test]
    fn matches_oracle((p, c, start, series) in arb_case()) {
        prop_assert_eq!(evaluate_scale(&p, &c, start, &series), oracle(&p, &c, start, &series));
    }

    #[test]
    fn never_leaves_bounds_and_each_decision_follows_n_breaches((p, c, start, series) in arb_case()) {
        let mut nodes = start;
        for d in evaluate_scale(&p, &c, start, &series) {
            let (at, from, to, out) = match d {
                ScaleDecision::ScaleOut { at, from, to } => (at, from, to, true),
                ScaleDecision::ScaleIn { at, from, to } => (at, from, to, false),
            };
            prop_assert_eq!(from, nodes);
            prop_assert!(to >= c.minimum && c.maximum.is_none_or(|m| to <= m));
            prop_assert!(from.abs_diff(to) <= c.increment && from != to);
            let n = p.smoothing as usize;
            prop_assert!(at + 1 >= n);
            prop_assert!(series[at + 1 - n..=at].iter().all(|v| breach(&p, *v) == Some(out)));
            nodes = to;
        }
    }
}
