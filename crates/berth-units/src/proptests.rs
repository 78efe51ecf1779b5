//! Property tests: Display/parse round-trips, conversions against an independent factor table,
//! admission against plain comparisons of base values, and no panics on arbitrary input.

use proptest::prelude::*;

use crate::{Family, Op, Quantity, Threshold, Unit};

fn any_unit() -> impl Strategy<Value = Unit> {
    proptest::sample::select(Unit::ALL.to_vec())
}

fn any_op() -> impl Strategy<Value = Op> {
    proptest::sample::select(vec![Op::Eq, Op::Lt, Op::Gt, Op::Le, Op::Ge])
}

/// Non-negative values whose base value stays finite: integers, short decimals, wide floats, tiny ones.
fn any_value() -> impl Strategy<Value = f64> {
    prop_oneof![
        (0u32..100_000).prop_map(f64::from),
        (0u32..100_000, 1u32..4).prop_map(|(n, d)| f64::from(n) / 10f64.powi(d as i32)),
        0.0..1e12f64,
        0.0..1e290f64,
        1e-300..1e-3f64,
        Just(0.0),
    ]
}

fn any_threshold() -> impl Strategy<Value = Threshold> {
    let compare = (any_op(), any_value(), any_unit()).prop_map(|(op, v, u)| Threshold::Compare {
        op,
        value: Quantity::new(v, u),
    });
    let range = (any_value(), any_value(), any_unit()).prop_map(|(a, b, u)| Threshold::Range {
        low: Quantity::new(a.min(b), u),
        high: Quantity::new(a.max(b), u),
    });
    prop_oneof![compare, range]
}

/// Independent oracle: each unit in metres, seconds, bits per second or dollars.
fn si_factor(unit: Unit) -> f64 {
    match unit {
        Unit::M => 1.0,
        Unit::Km => 1000.0,
        Unit::Mi => 1609.344,
        Unit::Ms => 0.001,
        Unit::Sec => 1.0,
        Unit::Min => 60.0,
        Unit::Bps => 1.0,
        Unit::Kbps => 1e3,
        Unit::Mbps => 1e6,
        Unit::Gbps => 1e9,
        Unit::Tbps => 1e12,
        Unit::Usd | Unit::One => 1.0,
    }
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()) || a == b
}

fn same_family_pair() -> impl Strategy<Value = (Unit, Unit)> {
    proptest::sample::select(Family::ALL.to_vec()).prop_flat_map(|f| {
        let units = f.units().to_vec();
        (
            proptest::sample::select(units.clone()),
            proptest::sample::select(units),
        )
    })
}

/// Token soup biased towards the grammar, to reach deep error paths.
fn grammar_soup() -> impl Strategy<Value = String> {
    let tokens = vec![
        "<",
        ">",
        "=",
        "<=",
        ">=",
        "-",
        "--",
        " ",
        "\t",
        "\n",
        "0",
        "1",
        "9",
        "42",
        ".",
        "e",
        "E",
        "+",
        "km",
        "KM",
        "mi",
        "m",
        "ms",
        "s",
        "Sec",
        "min",
        "bps",
        "Kbps",
        "Mbps",
        "gbps",
        "Tbps",
        "usd",
        "x",
        "é",
        "км",
        "1e400",
        "1e303",
        "99999999999999999999",
        "nan",
        "inf",
        "\u{0}",
        "😀",
    ];
    proptest::collection::vec(proptest::sample::select(tokens), 0..10).prop_map(|v| v.concat())
}

/// Parse with every mode; assert successful parses round-trip and errors point inside the input.
fn check_no_panic_and_round_trip(input: &str) -> Result<(), TestCaseError> {
    let mut results = vec![(Threshold::parse_any(input), None)];
    for family in Family::ALL {
        for unit in family.units() {
            results.push((
                Threshold::parse(input, family, *unit),
                Some((family, *unit)),
            ));
        }
    }
    for (result, mode) in results {
        match result {
            Ok(t) => {
                let shown = t.to_string();
                let again = match mode {
                    None => Threshold::parse_any(&shown),
                    Some((family, unit)) => Threshold::parse(&shown, family, unit),
                };
                prop_assert_eq!(again, Ok(t), "{:?} displayed as {:?}", input, shown);
                prop_assert_eq!(Threshold::parse_any(&shown), Ok(t));
            }
            Err(e) => {
                prop_assert!(e.offset <= input.len());
                prop_assert!(input.is_char_boundary(e.offset));
                prop_assert_eq!(&e.input, input);
                let shown = e.to_string();
                prop_assert!(shown.lines().count() == 3, "{}", shown);
            }
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn display_round_trips(t in any_threshold()) {
        let shown = t.to_string();
        prop_assert_eq!(Threshold::parse_any(&shown), Ok(t), "{}", shown);
        let family = t.family();
        for default in family.units() {
            prop_assert_eq!(Threshold::parse(&shown, family, *default), Ok(t));
        }
    }

    #[test]
    fn conversions_are_exact_to_1e_9((a, b) in same_family_pair(), v in any_value()) {
        prop_assume!(v < 1e280);
        let q = Quantity::new(v, a);
        let there = q.to(b).unwrap();
        let back = there.to(a).unwrap();
        prop_assert!(close(back.value, v, 1e-9), "{} -> {} -> {}", q, there, back);
        let manual = v * si_factor(a) / si_factor(b);
        prop_assert!(close(there.value, manual, 1e-9), "{} -> {} vs {}", q, there, manual);
        let base = v * si_factor(a) / si_factor(a.family().base_unit());
        prop_assert!(close(q.in_base(), base, 1e-9));
    }

    #[test]
    fn conversions_across_families_fail(a in any_unit(), b in any_unit(), v in any_value()) {
        prop_assume!(a.family() != b.family());
        prop_assert!(Quantity::new(v, a).to(b).is_err());
    }

    #[test]
    fn range_admits_iff_between((u, x_unit) in same_family_pair(), a in any_value(), b in any_value(), x in any_value()) {
        let (low, high) = (a.min(b), a.max(b));
        let t = Threshold::range(Quantity::new(low, u), Quantity::new(high, u)).unwrap();
        let xq = Quantity::new(x, x_unit);
        let (lb, hb, xb) = (Quantity::new(low, u).in_base(), Quantity::new(high, u).in_base(), xq.in_base());
        prop_assume!(!close(xb, lb, 1e-11) && !close(xb, hb, 1e-11));
        prop_assert_eq!(t.admits(&xq), lb <= xb && xb <= hb);
        // The ends themselves, in the range's unit, are admitted.
        prop_assert!(t.admits(&Quantity::new(low, u)) && t.admits(&Quantity::new(high, u)));
    }

    #[test]
    fn compare_admits_matches_op((u, x_unit) in same_family_pair(), op in any_op(), v in any_value(), x in any_value()) {
        let t = Threshold::compare(op, Quantity::new(v, u)).unwrap();
        let xq = Quantity::new(x, x_unit);
        let (vb, xb) = (Quantity::new(v, u).in_base(), xq.in_base());
        if close(xb, vb, 1e-11) {
            // Equal values: only the operators that include equality admit.
            let exact = t.admits(&Quantity::new(v, u));
            prop_assert_eq!(exact, matches!(op, Op::Eq | Op::Le | Op::Ge));
        } else {
            let want = match op {
                Op::Eq => false,
                Op::Lt | Op::Le => xb < vb,
                Op::Gt | Op::Ge => xb > vb,
            };
            prop_assert_eq!(t.admits(&xq), want);
        }
        // Bounds agree with admission.
        if let Some((hi, inclusive)) = t.upper_bound_base() {
            prop_assert_eq!(hi, vb);
            prop_assert_eq!(inclusive, op != Op::Lt);
        }
        if let Some((lo, inclusive)) = t.lower_bound_base() {
            prop_assert_eq!(lo, vb);
            prop_assert_eq!(inclusive, op != Op::Gt);
        }
    }

    #[test]
    fn other_families_are_never_admitted(t in any_threshold(), x in any_value(), u in any_unit()) {
        prop_assume!(u.family() != t.family());
        prop_assert!(!t.admits(&Quantity::new(x, u)));
    }

    #[test]
    fn arbitrary_strings_never_panic(s in ".*") {
        check_no_panic_and_round_trip(&s)?;
    }

    #[test]
    fn grammar_soup_never_panics(s in grammar_soup()) {
        check_no_panic_and_round_trip(&s)?;
    }

    #[test]
    fn written_thresholds_parse(op in proptest::option::of(any_op()), n in 0u32..10_000, u in any_unit(), spaces in proptest::collection::vec(" {0,2}", 3)) {
        let op_text = op.map_or("", Op::symbol);
        let input = format!("{}{op_text}{}{n}{}{}", spaces[0], spaces[1], spaces[2], u.symbol());
        let t = Threshold::parse_any(&input).unwrap();
        prop_assert_eq!(t, Threshold::Compare { op: op.unwrap_or(Op::Eq), value: Quantity::new(f64::from(n), u) });
    }
}
