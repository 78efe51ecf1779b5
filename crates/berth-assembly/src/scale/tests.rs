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

// ---- `scale`: the seed's h_bta policy on current metrics --------------------------------

const H_BTA: &str = include_str!("../../../../examples/assemblies/h_bta.yaml");

/// h_bta: `scaleStreamer` scales B (1..=4 nodes, step 1) on `A.load`, out above 90, in
/// below 10, after 4 consecutive breaches (the seed's defaults).
fn h_bta(samples: &[f64], nodes: Option<u32>) -> ScaleOutcome {
    let plan = crate::plan_text(H_BTA, &BTreeMap::new()).unwrap();
    let metrics = BTreeMap::from([("A.load".to_owned(), samples.to_vec())]);
    let nodes: BTreeMap<String, u32> = nodes.map(|n| ("B".to_owned(), n)).into_iter().collect();
    let mut out = scale(&plan, &metrics, &nodes).unwrap();
    assert_eq!(out.len(), 1);
    out.remove(0)
}

#[test]
fn the_seeds_policy_waits_for_its_smoothing_then_scales_out() {
    let o = h_bta(&[95.0, 96.0, 97.0], None);
    assert_eq!((o.nodes, o.result), (1, 1));
    assert_eq!(
        o.smoothing,
        Smoothing {
            needed: 4,
            breaches: 3,
            direction: Some(Direction::Out)
        }
    );
    assert_eq!(o.summary, "hold B at 1: 3 of 4 breaches above 90 so far");
    let o = h_bta(&[95.0, 96.0, 97.0, 98.0], None);
    assert_eq!((o.nodes, o.result), (1, 2));
    assert_eq!(
        o.smoothing.breaches, 0,
        "the window restarts after a trigger"
    );
    assert_eq!(
        o.summary,
        "scale out B from 1 to 2: 4 consecutive breaches above 90 (smoothing) at sample 4"
    );
    // A sample at the threshold breaks the run.
    let o = h_bta(&[95.0, 96.0, 90.0, 97.0, 98.0], None);
    assert_eq!(o.result, 1);
    assert_eq!(o.summary, "hold B at 1: 2 of 4 breaches above 90 so far");
}

#[test]
fn the_seeds_policy_scales_in_and_holds_at_its_bounds() {
    let o = h_bta(&[5.0; 5], Some(3));
    assert_eq!((o.nodes, o.result), (3, 2));
    assert_eq!(
        o.summary,
        "scale in B from 3 to 2: 4 consecutive breaches below 10 (smoothing) at sample 4; then 1 of 4 breaches below 10 so far"
    );
    let o = h_bta(&[99.0; 4], Some(4));
    assert_eq!(o.result, 4);
    assert_eq!(
        o.summary,
        "hold B at 4: 4 breaches above 90 but the cluster is at its maximum-nodes (4)"
    );
    let o = h_bta(&[1.0; 4], None);
    assert_eq!(
        o.summary,
        "hold B at 1: 4 breaches below 10 but the cluster is at its minimum-nodes (1)"
    );
    let o = h_bta(&[95.0; 8], None);
    assert_eq!(o.result, 3);
    assert!(
        o.summary.ends_with("at sample 8, 2 scale events in all"),
        "{}",
        o.summary
    );
    let o = h_bta(&[], None);
    assert_eq!(o.summary, "hold B at 1: no samples of `A.load`");
}

#[test]
fn unknown_metrics_and_components_are_all_refused() {
    let plan = crate::plan_text(H_BTA, &BTreeMap::new()).unwrap();
    let metrics = BTreeMap::from([
        ("A.lod".to_owned(), vec![1.0]),
        ("A.load".to_owned(), vec![]),
    ]);
    let nodes = BTreeMap::from([("A".to_owned(), 2)]);
    let errs: Vec<String> = scale(&plan, &metrics, &nodes)
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        [
            "metrics.\"A.lod\": no scale policy reads metric `A.lod`; expected one of A.load",
            "nodes.A: no scale policy scales component `A`; expected one of B",
        ]
    );
}

proptest! {
    #[test]
    fn scale_ends_where_the_decisions_do_and_counts_the_open_window((p, c, start, series) in arb_case()) {
        let r = replay(&p, &c, start, &series);
        let end = r.decisions.last().map_or(start, |d| match d {
            ScaleDecision::ScaleOut { to, .. } | ScaleDecision::ScaleIn { to, .. } => *to,
        });
        prop_assert_eq!(r.nodes, end);
        // The open window: breaches of one threshold at the end of the series, since the
        // last trigger (a decision or a trigger held at a bound).
        let last_trigger = oracle_triggers(&p, &series).last().copied();
        let tail = &series[last_trigger.map_or(0, |t| t + 1)..];
        let dir = tail.last().and_then(|v| breach(&p, *v));
        let run = tail.iter().rev().take_while(|v| dir.is_some() && breach(&p, **v) == dir).count();
        prop_assert_eq!(r.smoothing.breaches as usize, run);
        prop_assert_eq!(r.smoothing.direction, dir.map(|o| if o { Direction::Out } else { Direction::In }));
        prop_assert!(r.smoothing.breaches < r.smoothing.needed);
    }
}

/// Where the windowed oracle triggers (acting or not), by index.
fn oracle_triggers(p: &ScalePolicy, series: &[f64]) -> Vec<usize> {
    let n = p.smoothing.max(1) as usize;
    let mut last: Option<usize> = None;
    let mut out = Vec::new();
    for i in 0..series.len() {
        if i + 1 < n || last.is_some_and(|t| t + n > i) {
            continue;
        }
        let window = &series[i + 1 - n..=i];
        let all = |want: bool| window.iter().all(|v| breach(p, *v) == Some(want));
        if all(true) || all(false) {
            last = Some(i);
            out.push(i);
        }
    }
    out
}
