//! Property test against brute force: random small templates + inventories (distance, zone,
//! attribute, capacity and inventory group constraints); the engine's optimum equals the
//! brute-force optimum and every returned plan passes a checker written here from the
//! template semantics (an inventory group of three or more demands: the seed's first two).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use berth_engine::{PlanOptions, PlanOutcome, Status};
use proptest::prelude::*;

use crate::{opts, run};

#[derive(Debug, Clone)]
struct Cand {
    lat: i16,
    lon: i16,
    disaster: u8,
    complex: u8,
    tier: u8,
    vcpu: u8,
    cost: u8,
    /// Inventory groups `g0`..`g2` the candidate is in, as bits.
    groups: u8,
}

#[derive(Debug, Clone)]
enum Con {
    Between {
        a: usize,
        b: usize,
        km: u32,
        strict: bool,
    },
    ToLoc {
        d: usize,
        km: u32,
    },
    Zone {
        ds: Vec<usize>,
        same: bool,
        disaster: bool,
    },
    Attr {
        d: usize,
        min_tier: u8,
    },
    Fit {
        ds: Vec<usize>,
        req: u8,
    },
    Group {
        ds: Vec<usize>,
    },
}

#[derive(Debug, Clone)]
struct Case {
    cands: Vec<Cand>,
    demands: usize,
    excluded: Vec<Option<usize>>,
    cons: Vec<Con>,
    weights: Vec<u8>,
    cost_weight: u8,
    pair_term: Option<(usize, usize)>,
    k: usize,
}

fn cand() -> impl Strategy<Value = Cand> {
    (
        -40i16..=40,
        -40i16..=40,
        0u8..3,
        0u8..3,
        0u8..4,
        0u8..9,
        0u8..100,
        0u8..8,
    )
        .prop_map(
            |(lat, lon, disaster, complex, tier, vcpu, cost, groups)| Cand {
                lat,
                lon,
                disaster,
                complex,
                tier,
                vcpu,
                cost,
                groups,
            },
        )
}

fn con(n: usize) -> impl Strategy<Value = Con> {
    let idx = move || 0..n;
    let subset = move || {
        prop::collection::vec(0..n, 2..=n.max(2)).prop_map(|mut v| {
            v.sort_unstable();
            v.dedup();
            v
        })
    };
    prop_oneof![
        (idx(), idx(), 50u32..900, any::<bool>()).prop_map(|(a, b, km, strict)| Con::Between {
            a,
            b,
            km,
            strict
        }),
        (idx(), 100u32..700).prop_map(|(d, km)| Con::ToLoc { d, km }),
        (subset(), any::<bool>(), any::<bool>()).prop_map(|(ds, same, disaster)| Con::Zone {
            ds,
            same,
            disaster
        }),
        (idx(), 0u8..4).prop_map(|(d, min_tier)| Con::Attr { d, min_tier }),
        (subset(), 1u8..5).prop_map(|(ds, req)| Con::Fit { ds, req }),
        // Unsorted, so "the first two" are not always the two smallest.
        subset().prop_shuffle().prop_map(|ds| Con::Group { ds }),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..=6, 1usize..=8)
        .prop_filter("small enough to enumerate", |(d, c)| {
            (*c as u64).pow(*d as u32) <= 70_000
        })
        .prop_flat_map(|(n, m)| {
            (
                prop::collection::vec(cand(), m),
                Just(n),
                prop::collection::vec(prop::option::weighted(0.3, 0..m), n),
                prop::collection::vec(con(n), 0..5),
                prop::collection::vec(0u8..4, n),
                0u8..3,
                prop::option::weighted(0.4, (0..n, 0..n)),
                1usize..=3,
            )
        })
        .prop_map(
            |(cands, demands, excluded, cons, weights, cost_weight, pair_term, k)| Case {
                cands,
                demands,
                excluded,
                cons,
                weights,
                cost_weight,
                pair_term,
                k,
            },
        )
}

fn coord(c: &Cand) -> (f64, f64) {
    (f64::from(c.lat) / 10.0, f64::from(c.lon) / 10.0)
}

fn inventory(case: &Case) -> String {
    let mut s = String::from("candidates:\n");
    for (i, c) in case.cands.iter().enumerate() {
        let (lat, lon) = coord(c);
        let groups: Vec<String> = (0..3)
            .filter(|g| c.groups >> g & 1 == 1)
            .map(|g| format!("g{g}"))
            .collect();
        let _ = writeln!(
            s,
            "  - {{candidate_id: c{i}, inventory_type: cloud, latitude: {lat:.1}, longitude: {lon:.1}, cost: {}, complex_name: cx{}, zones: {{disaster: z{}}}, attributes: {{tier: {}}}, capacity: {{vcpu: {}}}, groups: [{}]}}",
            c.cost,
            c.complex,
            c.disaster,
            c.tier,
            c.vcpu,
            groups.join(", ")
        );
    }
    s
}

fn list(ds: &[usize]) -> String {
    ds.iter()
        .map(|d| format!("d{d}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn template(case: &Case) -> String {
    let mut s = String::from(
        "homing_template_version: 2017-10-10\nlocations:\n  home: {latitude: 0.0, longitude: 0.0}\ndemands:\n",
    );
    for d in 0..case.demands {
        let ex = case.excluded[d]
            .map(|c| format!(", excluded_candidates: [{{candidate_id: c{c}}}]"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "  d{d}: [{{inventory_provider: aai, inventory_type: cloud{ex}}}]"
        );
    }
    let mut cons = String::new();
    for (i, c) in case.cons.iter().enumerate() {
        let _ = match c {
            Con::Between { a, b, km, strict } if a != b => writeln!(
                cons,
                "  k{i}: {{type: distance_between_demands, demands: [d{a}, d{b}], properties: {{distance: '{} {km} km'}}}}",
                if *strict { "<" } else { "<=" }
            ),
            Con::ToLoc { d, km } => {
                writeln!(
                    cons,
                    "  k{i}: {{type: distance_to_location, demands: [d{d}], properties: {{distance: '<= {km} km', location: home}}}}"
                )
            }
            Con::Zone { ds, same, disaster } if ds.len() >= 2 => writeln!(
                cons,
                "  k{i}: {{type: zone, demands: [{}], properties: {{qualifier: {}, category: {}}}}}",
                list(ds),
                if *same { "same" } else { "different" },
                if *disaster { "disaster" } else { "complex" }
            ),
            Con::Attr { d, min_tier } => {
                writeln!(
                    cons,
                    "  k{i}: {{type: attribute, demands: [d{d}], properties: {{evaluate: {{tier: {{gte: {min_tier}}}}}}}}}"
                )
            }
            Con::Fit { ds, req } => writeln!(
                cons,
                "  k{i}: {{type: region_fit, demands: [{}], properties: {{controller: capacity, request: {{vcpu: {req}}}}}}}",
                list(ds)
            ),
            Con::Group { ds } if ds.len() >= 2 => writeln!(
                cons,
                "  k{i}: {{type: inventory_group, demands: [{}]}}",
                list(ds)
            ),
            _ => Ok(()),
        };
    }
    if !cons.is_empty() {
        s.push_str("constraints:\n");
        s.push_str(&cons);
    }
    s.push_str("optimization:\n  minimize:\n    sum:\n");
    for d in 0..case.demands {
        let _ = writeln!(
            s,
            "      - {{product: [{}, {{distance_between: [home, d{d}]}}]}}",
            case.weights[d]
        );
        if case.cost_weight > 0 {
            let _ = writeln!(
                s,
                "      - {{product: [{}, {{cost: d{d}}}]}}",
                case.cost_weight
            );
        }
    }
    if let Some((a, b)) = case.pair_term {
        let _ = writeln!(s, "      - {{distance_between: [d{a}, d{b}]}}");
    }
    s
}

/// Great-circle distance, written again here so the checker does not share the engine's code.
fn km(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (la, lb) = (a.0.to_radians(), b.0.to_radians());
    let dlat = lb - la;
    let dlon = (b.1 - a.1).to_radians();
    let h = (dlat / 2.0).sin().powi(2) + la.cos() * lb.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * 6371.0088 * h.sqrt().asin()
}

/// Every hard constraint of the template, checked on a complete assignment (candidate index
/// per demand).
fn feasible(case: &Case, x: &[usize]) -> bool {
    let c = |d: usize| &case.cands[x[d]];
    if (0..case.demands).any(|d| case.excluded[d] == Some(x[d])) {
        return false;
    }
    let mut load: BTreeMap<usize, u32> = BTreeMap::new();
    for con in &case.cons {
        let ok = match con {
            Con::Between {
                a,
                b,
                km: lim,
                strict,
            } if a != b => {
                let d = km(coord(c(*a)), coord(c(*b)));
                if *strict {
                    d < f64::from(*lim)
                } else {
                    d <= f64::from(*lim)
                }
            }
            Con::Between { .. } => true,
            Con::ToLoc { d, km: lim } => km(coord(c(*d)), (0.0, 0.0)) <= f64::from(*lim),
            Con::Zone { ds, same, disaster } if ds.len() >= 2 => {
                let key = |d: usize| {
                    if *disaster {
                        c(d).disaster
                    } else {
                        c(d).complex
                    }
                };
                let mut keys: Vec<u8> = ds.iter().map(|&d| key(d)).collect();
                keys.sort_unstable();
                let distinct = {
                    let mut k = keys.clone();
                    k.dedup();
                    k.len()
                };
                if *same {
                    distinct == 1
                } else {
                    distinct == keys.len()
                }
            }
            Con::Zone { .. } => true,
            Con::Attr { d, min_tier } => c(*d).tier >= *min_tier,
            Con::Fit { ds, req } => {
                for &d in ds {
                    *load.entry(x[d]).or_default() += u32::from(*req);
                }
                true
            }
            // Seed 000: pairs only; of a longer list only the first two are grouped.
            Con::Group { ds } if ds.len() >= 2 => c(ds[0]).groups & c(ds[1]).groups != 0,
            Con::Group { .. } => true,
        };
        if !ok {
            return false;
        }
    }
    load.iter()
        .all(|(cand, l)| *l <= u32::from(case.cands[*cand].vcpu))
}

fn objective(case: &Case, x: &[usize]) -> f64 {
    let mut v = 0.0;
    for (d, &xd) in x.iter().enumerate() {
        let c = &case.cands[xd];
        v += f64::from(case.weights[d]) * km((0.0, 0.0), coord(c));
        v += f64::from(case.cost_weight) * f64::from(c.cost);
    }
    if let Some((a, b)) = case.pair_term
        && a != b
    {
        v += km(coord(&case.cands[x[a]]), coord(&case.cands[x[b]]));
    }
    v
}

/// Objectives of every feasible assignment, ascending.
fn brute_force(case: &Case) -> Vec<f64> {
    let m = case.cands.len();
    let mut x = vec![0usize; case.demands];
    let mut out = Vec::new();
    loop {
        if feasible(case, &x) {
            out.push(objective(case, &x));
        }
        let mut i = 0;
        loop {
            if i == x.len() {
                out.sort_by(f64::total_cmp);
                return out;
            }
            x[i] += 1;
            if x[i] < m {
                break;
            }
            x[i] = 0;
            i += 1;
        }
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

fn assignment(case: &Case, out: &PlanOutcome, i: usize) -> Vec<usize> {
    (0..case.demands)
        .map(|d| {
            let id = out.solutions[i].placements[&format!("d{d}")]["candidate_id"]
                .as_str()
                .unwrap_or_default();
            id.trim_start_matches('c')
                .parse::<usize>()
                .unwrap_or(usize::MAX)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn optimum_equals_brute_force(case in case()) {
        let o = PlanOptions { solutions: case.k, ..opts() };
        let out = run(&template(&case), &inventory(&case), &o).unwrap();
        let all = brute_force(&case);
        if all.is_empty() {
            prop_assert_eq!(out.status, Status::NotFound, "{}", out.message);
            prop_assert!(out.solutions.is_empty());
            return Ok(());
        }
        prop_assert_eq!(out.status, Status::Solved);
        prop_assert!(out.optimal);
        // A proven optimum is its own bound.
        prop_assert!(out.bound.is_some_and(|b| close(b, all[0])), "bound {:?}, optimum {}", out.bound, all[0]);
        prop_assert_eq!(out.gap, Some(0.0));
        prop_assert_eq!(out.solutions.len(), case.k.min(all.len()));
        for (i, s) in out.solutions.iter().enumerate() {
            let x = assignment(&case, &out, i);
            prop_assert!(feasible(&case, &x), "plan {} = {:?} breaks a constraint", i, x);
            prop_assert!(close(s.objective, objective(&case, &x)), "reported {} != {}", s.objective, objective(&case, &x));
            prop_assert!(close(s.objective, all[i]), "plan {} scores {}, brute force {}", i, s.objective, all[i]);
        }
        // Deterministic: the same question, the same answer.
        let again = run(&template(&case), &inventory(&case), &o).unwrap();
        prop_assert_eq!(&out, &again);
    }

    /// Cut by a node limit, the bound is still one: brute force's optimum is not below it,
    /// nor is the plan returned, and the gap is the plan's distance to it.
    #[test]
    fn a_stopped_plan_has_a_sound_bound(case in case(), limit in 1u64..12) {
        let o = PlanOptions { node_limit: Some(limit), ..opts() };
        let out = run(&template(&case), &inventory(&case), &o).unwrap();
        let Some(best) = out.solutions.first() else {
            prop_assert_eq!((out.bound, out.gap), (None, None));
            return Ok(());
        };
        let all = brute_force(&case);
        let b = out.bound.unwrap_or(f64::NEG_INFINITY);
        prop_assert!(b <= all[0] + 1e-6, "bound {} above the optimum {}", b, all[0]);
        prop_assert!(b <= best.objective + 1e-6, "bound {} above the plan {}", b, best.objective);
        if let Some(b) = out.bound {
            let g = berth_engine::relative_gap(best.objective, b);
            prop_assert_eq!(out.gap, Some(g));
        }
        if out.optimal {
            prop_assert_eq!(out.gap, Some(0.0));
        }
    }
}

/// Found by `optimum_equals_brute_force`: two seeding passes offered the same plan and the k
/// best listed it twice (three plans where only two exist).
#[test]
fn k_best_lists_each_plan_once() {
    let c = |lon: i16, tier: u8, vcpu: u8, cost: u8| Cand {
        lat: 0,
        lon,
        disaster: 0,
        complex: 0,
        tier,
        vcpu,
        cost,
        groups: 0,
    };
    let case = Case {
        cands: vec![
            c(0, 0, 0, 0),
            c(0, 0, 0, 0),
            c(0, 0, 0, 0),
            c(26, 0, 0, 0),
            c(0, 2, 4, 0),
            c(0, 0, 6, 20),
        ],
        demands: 3,
        excluded: vec![None, None, None],
        cons: vec![
            Con::Attr { d: 1, min_tier: 2 },
            Con::Fit {
                ds: vec![0, 2],
                req: 4,
            },
            Con::ToLoc { d: 0, km: 664 },
        ],
        weights: vec![3, 0, 2],
        cost_weight: 2,
        pair_term: None,
        k: 3,
    };
    let o = PlanOptions {
        solutions: case.k,
        ..opts()
    };
    let out = run(&template(&case), &inventory(&case), &o).unwrap();
    let plans: Vec<Vec<usize>> = (0..out.solutions.len())
        .map(|i| assignment(&case, &out, i))
        .collect();
    assert_eq!(plans, vec![vec![4, 4, 5], vec![5, 4, 4]]);
    assert_eq!(brute_force(&case), vec![40.0, 40.0]);
}
