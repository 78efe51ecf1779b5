//! Grammar cases and every error the parser reports, with offsets and messages.

use crate::{Family, Op, ParseErrorKind, Quantity, Threshold, Unit};

fn dist(input: &str) -> Result<Threshold, crate::ParseError> {
    Threshold::parse(input, Family::Distance, Unit::Km)
}

fn cmp(op: Op, value: f64, unit: Unit) -> Threshold {
    Threshold::Compare {
        op,
        value: Quantity::new(value, unit),
    }
}

fn range(low: f64, high: f64, unit: Unit) -> Threshold {
    Threshold::Range {
        low: Quantity::new(low, unit),
        high: Quantity::new(high, unit),
    }
}

#[test]
fn operators_and_whitespace() {
    let cases = [
        ("<250km", cmp(Op::Lt, 250.0, Unit::Km)),
        ("< 250 km", cmp(Op::Lt, 250.0, Unit::Km)),
        ("  <  250   km  ", cmp(Op::Lt, 250.0, Unit::Km)),
        ("\t<=\n1.5\tmi ", cmp(Op::Le, 1.5, Unit::Mi)),
        ("<= 1.5 mi", cmp(Op::Le, 1.5, Unit::Mi)),
        (">=0", cmp(Op::Ge, 0.0, Unit::Km)),
        ("> 7 m", cmp(Op::Gt, 7.0, Unit::M)),
        ("= 3 km", cmp(Op::Eq, 3.0, Unit::Km)),
        ("3", cmp(Op::Eq, 3.0, Unit::Km)),
        ("3km", cmp(Op::Eq, 3.0, Unit::Km)),
    ];
    for (input, want) in cases {
        assert_eq!(dist(input), Ok(want), "{input:?}");
    }
}

#[test]
fn numbers() {
    let cases = [
        ("0", 0.0),
        ("000", 0.0),
        ("0.0", 0.0),
        ("007.50", 7.5),
        (".5", 0.5),
        ("5.", 5.0),
        ("1e3", 1000.0),
        ("2.5E-1", 0.25),
        ("1e+2", 100.0),
    ];
    for (input, want) in cases {
        assert_eq!(dist(input), Ok(cmp(Op::Eq, want, Unit::Km)), "{input:?}");
    }
}

#[test]
fn units_are_case_insensitive_with_aliases() {
    let time = |s: &str| Threshold::parse(s, Family::Time, Unit::Ms);
    assert_eq!(time("<5 S"), Ok(cmp(Op::Lt, 5.0, Unit::Sec)));
    assert_eq!(time("<5 s"), Ok(cmp(Op::Lt, 5.0, Unit::Sec)));
    assert_eq!(time("<5 SEC"), Ok(cmp(Op::Lt, 5.0, Unit::Sec)));
    assert_eq!(time("<5 Min"), Ok(cmp(Op::Lt, 5.0, Unit::Min)));
    assert_eq!(time("<5 MS"), Ok(cmp(Op::Lt, 5.0, Unit::Ms)));
    assert_eq!(dist("1 KM"), Ok(cmp(Op::Eq, 1.0, Unit::Km)));
    assert_eq!(dist("1 Mi"), Ok(cmp(Op::Eq, 1.0, Unit::Mi)));
    assert_eq!(dist("1 M"), Ok(cmp(Op::Eq, 1.0, Unit::M)));
    let tp = |s: &str| Threshold::parse(s, Family::Throughput, Unit::Mbps);
    for (word, unit) in [
        ("bps", Unit::Bps),
        ("kbps", Unit::Kbps),
        ("MBPS", Unit::Mbps),
        ("gBps", Unit::Gbps),
        ("Tbps", Unit::Tbps),
    ] {
        assert_eq!(tp(&format!(">=2 {word}")), Ok(cmp(Op::Ge, 2.0, unit)));
    }
    let usd = Threshold::parse("<10 usd", Family::Currency, Unit::Usd);
    assert_eq!(usd, Ok(cmp(Op::Lt, 10.0, Unit::Usd)));
}

#[test]
fn ranges() {
    let cases = [
        ("10-20 km", range(10.0, 20.0, Unit::Km)),
        ("10 - 20 km", range(10.0, 20.0, Unit::Km)),
        ("10-20", range(10.0, 20.0, Unit::Km)),
        ("10km-20km", range(10.0, 20.0, Unit::Km)),
        ("10 mi - 20 MI", range(10.0, 20.0, Unit::Mi)),
        ("10 m-20", range(10.0, 20.0, Unit::M)),
        ("5-5 km", range(5.0, 5.0, Unit::Km)),
        ("0-.5", range(0.0, 0.5, Unit::Km)),
    ];
    for (input, want) in cases {
        assert_eq!(dist(input), Ok(want), "{input:?}");
    }
    let time = Threshold::parse("1 s - 2 sec", Family::Time, Unit::Ms);
    assert_eq!(time, Ok(range(1.0, 2.0, Unit::Sec)));
}

#[test]
fn parse_any_infers_the_family() {
    let any = Threshold::parse_any;
    assert_eq!(any("<5 ms").map(|t| t.family()), Ok(Family::Time));
    assert_eq!(any("1-2 Gbps").map(|t| t.family()), Ok(Family::Throughput));
    assert_eq!(any(">= 3 USD").map(|t| t.family()), Ok(Family::Currency));
    assert_eq!(any("<= 3"), Ok(cmp(Op::Le, 3.0, Unit::One)));
    assert_eq!(any("3-4"), Ok(range(3.0, 4.0, Unit::One)));
    assert_eq!("<5km".parse::<Threshold>(), Ok(cmp(Op::Lt, 5.0, Unit::Km)));
}

#[test]
fn dimensionless_property_rejects_units() {
    let t = Threshold::parse("<4", Family::Dimensionless, Unit::One);
    assert_eq!(t, Ok(cmp(Op::Lt, 4.0, Unit::One)));
    let err = Threshold::parse("<4 km", Family::Dimensionless, Unit::One).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unit `km` is a distance unit but a dimensionless value is required; expected no unit\n  <4 km\n     ^"
    );
}

/// (input, byte offset, full Display) for a distance property with default km.
#[test]
fn errors_with_offsets_and_messages() {
    let cases: &[(&str, usize, &str)] = &[
        (
            "<250 kms",
            5,
            "unknown unit `kms`; expected one of km, mi, m\n  <250 kms\n       ^",
        ),
        (
            "<250 ms",
            5,
            "unit `ms` is a time unit but a distance value is required; expected one of km, mi, m\n  <250 ms\n       ^",
        ),
        (
            "",
            0,
            "empty threshold; expected a threshold such as `<250 km` or `10-20 km`\n  \n  ^",
        ),
        (
            "   ",
            3,
            "empty threshold; expected a threshold such as `<250 km` or `10-20 km`\n     \n     ^",
        ),
        (
            "-5 km",
            0,
            "negative values are not allowed; expected a number >= 0\n  -5 km\n  ^",
        ),
        (
            "< -5",
            2,
            "negative values are not allowed; expected a number >= 0\n  < -5\n    ^",
        ),
        (
            "10--20",
            3,
            "negative values are not allowed; expected a number >= 0\n  10--20\n     ^",
        ),
        (
            "20-10 km",
            0,
            "range low end 20 is above its high end 10; expected low end <= high end\n  20-10 km\n  ^",
        ),
        (
            "10 km-20 mi",
            9,
            "range ends have different units `km` and `mi`; expected `km` as on the low end\n  10 km-20 mi\n           ^",
        ),
        (
            "<10-20",
            0,
            "operator `<` cannot be used with a range; expected a single value after an operator\n  <10-20\n  ^",
        ),
        ("nan", 0, "unexpected `nan`; expected a number\n  nan\n  ^"),
        (
            "inf km",
            0,
            "unexpected `inf`; expected a number\n  inf km\n  ^",
        ),
        (
            "1e999",
            0,
            "number out of range; expected a finite number\n  1e999\n  ^",
        ),
        (
            "<",
            1,
            "unexpected end of input; expected a number\n  <\n   ^",
        ),
        ("<<5", 1, "unexpected `<`; expected a number\n  <<5\n   ^"),
        ("+5", 0, "unexpected `+`; expected a number\n  +5\n  ^"),
        (
            "5 km x",
            5,
            "unexpected `x`; expected `-` or end of input\n  5 km x\n       ^",
        ),
        (
            "<5 km;",
            5,
            "unexpected `;`; expected end of input\n  <5 km;\n       ^",
        ),
        (
            "5 / km",
            2,
            "unexpected `/`; expected a unit, `-` or end of input\n  5 / km\n    ^",
        ),
        (
            "<5 /",
            3,
            "unexpected `/`; expected a unit or end of input\n  <5 /\n     ^",
        ),
        (
            "10-",
            3,
            "unexpected end of input; expected a number\n  10-\n     ^",
        ),
        (
            "10-20 km km",
            9,
            "unexpected `km`; expected end of input\n  10-20 km km\n           ^",
        ),
        (
            "10-20 5",
            6,
            "unexpected `5`; expected a unit or end of input\n  10-20 5\n        ^",
        ),
        (
            "1.2.3",
            3,
            "unexpected `.3`; expected a unit, `-` or end of input\n  1.2.3\n     ^",
        ),
        ("é5", 0, "unexpected `é5`; expected a number\n  é5\n  ^"),
        (
            "5 км",
            2,
            "unexpected `км`; expected a unit, `-` or end of input\n  5 км\n    ^",
        ),
        (
            "5\nkm\u{7}",
            4,
            "unexpected `\\u{7}`; expected `-` or end of input\n  5\\nkm\\u{7}\n       ^",
        ),
    ];
    for (input, offset, display) in cases {
        let err = dist(input).unwrap_err();
        assert_eq!(err.offset, *offset, "{input:?}: {err}");
        assert_eq!(err.input, *input);
        assert_eq!(err.to_string(), *display, "{input:?}");
    }
}

#[test]
fn error_kinds_are_structured() {
    let kind = |s: &str| dist(s).unwrap_err().kind;
    assert_eq!(
        kind("1 ms"),
        ParseErrorKind::WrongFamily {
            unit: Unit::Ms,
            expected: Family::Distance
        }
    );
    assert_eq!(kind("-1"), ParseErrorKind::Negative);
    assert_eq!(
        kind("9-1"),
        ParseErrorKind::ReversedRange {
            low: 9.0,
            high: 1.0
        }
    );
    assert_eq!(
        kind("1 m - 2 km"),
        ParseErrorKind::MixedUnits {
            low: Unit::M,
            high: Unit::Km
        }
    );
    assert_eq!(
        kind(">1-2"),
        ParseErrorKind::OperatorWithRange { op: Op::Gt }
    );
    assert_eq!(kind(""), ParseErrorKind::Empty);
    // Finite in its unit but infinite in base units (1e303 Tbps = 1e309 Mbps).
    let big = Threshold::parse("1e303 Tbps", Family::Throughput, Unit::Mbps).unwrap_err();
    assert_eq!(big.kind, ParseErrorKind::OutOfRange);
    assert_eq!(big.expected, "a number whose value in Mbps is finite");
}

#[test]
fn parse_any_lists_every_unit() {
    let err = Threshold::parse_any("<5 furlongs").unwrap_err();
    assert_eq!(
        err.message(),
        "unknown unit `furlongs`; expected one of m, km, mi, ms, sec, min, bps, Kbps, Mbps, Gbps, Tbps, USD"
    );
    assert_eq!(err.offset, 3);
}

#[test]
fn default_unit_must_match_family() {
    let err = Threshold::parse("5", Family::Distance, Unit::Ms).unwrap_err();
    assert_eq!(
        err.kind,
        ParseErrorKind::DefaultUnitMismatch {
            unit: Unit::Ms,
            family: Family::Distance
        }
    );
}

#[test]
fn quantities_parse_without_operator() {
    assert_eq!("2.5 Gbps".parse(), Ok(Quantity::new(2.5, Unit::Gbps)));
    assert_eq!(" 7 ".parse(), Ok(Quantity::new(7.0, Unit::One)));
    let err = "<7 km".parse::<Quantity>().unwrap_err();
    assert_eq!(err.message(), "unexpected `<`; expected a number");
    let err = "7 km 3".parse::<Quantity>().unwrap_err();
    assert_eq!(err.message(), "unexpected `3`; expected end of input");
}
