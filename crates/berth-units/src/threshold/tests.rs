//! Admission, bounds, checked construction and Display of thresholds.

use crate::{Family, Op, ParseErrorKind, Quantity, Threshold, Unit};

fn q(value: f64, unit: Unit) -> Quantity {
    Quantity::new(value, unit)
}

#[test]
fn admits_compares_in_base_units() {
    let t = Threshold::parse("<250 km", Family::Distance, Unit::Km).unwrap();
    assert!(t.admits(&q(249.0, Unit::Km)));
    assert!(!t.admits(&q(250.0, Unit::Km)));
    assert!(t.admits(&q(155.0, Unit::Mi)));
    assert!(!t.admits(&q(156.0, Unit::Mi)));
    assert!(t.admits(&q(249_999.0, Unit::M)));
    assert!(!t.admits(&q(1.0, Unit::Ms)), "other family");
    assert!(!t.admits(&q(f64::NAN, Unit::Km)));

    let eq = Threshold::parse("1 mi", Family::Distance, Unit::Km).unwrap();
    assert!(eq.admits(&q(1609.344, Unit::M)), "equal within tolerance");
    assert!(eq.admits(&q(1.609344, Unit::Km)));
    assert!(!eq.admits(&q(1609.345, Unit::M)));
}

#[test]
fn every_operator() {
    let at = |op: Op, x: f64| {
        Threshold::compare(op, q(10.0, Unit::Ms))
            .unwrap()
            .admits(&q(x, Unit::Ms))
    };
    let table = [
        (Op::Eq, [false, true, false]),
        (Op::Lt, [true, false, false]),
        (Op::Le, [true, true, false]),
        (Op::Gt, [false, false, true]),
        (Op::Ge, [false, true, true]),
    ];
    for (op, want) in table {
        assert_eq!([at(op, 9.0), at(op, 10.0), at(op, 11.0)], want, "{op}");
    }
}

#[test]
fn ranges_are_inclusive() {
    let r = Threshold::parse("1-2 sec", Family::Time, Unit::Ms).unwrap();
    assert!(r.admits(&q(1000.0, Unit::Ms)));
    assert!(r.admits(&q(2000.0, Unit::Ms)));
    assert!(r.admits(&q(1.5, Unit::Sec)));
    assert!(!r.admits(&q(999.0, Unit::Ms)));
    assert!(!r.admits(&q(2001.0, Unit::Ms)));
    assert_eq!(r.lower_bound_base(), Some((1000.0, true)));
    assert_eq!(r.upper_bound_base(), Some((2000.0, true)));
    assert_eq!(r.op(), None);
    assert_eq!(r.unit(), Unit::Sec);
}

#[test]
fn bounds() {
    let b = |s: &str| {
        let t = Threshold::parse(s, Family::Throughput, Unit::Mbps).unwrap();
        (t.lower_bound_base(), t.upper_bound_base())
    };
    assert_eq!(b("<1 Gbps"), (None, Some((1000.0, false))));
    assert_eq!(b("<=1 Gbps"), (None, Some((1000.0, true))));
    assert_eq!(b(">500 Kbps"), (Some((0.5, false)), None));
    assert_eq!(b(">=5"), (Some((5.0, true)), None));
    assert_eq!(b("5"), (Some((5.0, true)), Some((5.0, true))));
}

#[test]
fn display() {
    let show = |s: &str| Threshold::parse_any(s).unwrap().to_string();
    assert_eq!(show("< 250 KM"), "<250 km");
    assert_eq!(show("=250km"), "250 km");
    assert_eq!(show(">= .5 S"), ">=0.5 sec");
    assert_eq!(show("10 mbps - 20 MBPS"), "10-20 Mbps");
    assert_eq!(show("<= 3"), "<=3");
    assert_eq!(show("3 - 4"), "3-4");
    assert_eq!(show("1e3 usd"), "1000 USD");
    assert_eq!(Op::Ge.to_string(), ">=");
    assert_eq!(Op::Eq.to_string(), "=");
}

#[test]
fn checked_constructors() {
    assert_eq!(
        Threshold::from_number(5.0, Unit::Km),
        Ok(Threshold::Compare {
            op: Op::Eq,
            value: q(5.0, Unit::Km)
        })
    );
    let neg_zero = Threshold::from_number(-0.0, Unit::Km).unwrap();
    assert_eq!(neg_zero.to_string(), "0 km");
    let kind = |r: Result<Threshold, crate::ParseError>| r.unwrap_err().kind;
    assert_eq!(
        kind(Threshold::from_number(-1.0, Unit::Km)),
        ParseErrorKind::Negative
    );
    assert_eq!(
        kind(Threshold::from_number(f64::NAN, Unit::Km)),
        ParseErrorKind::OutOfRange
    );
    assert_eq!(
        kind(Threshold::from_number(f64::INFINITY, Unit::Km)),
        ParseErrorKind::OutOfRange
    );
    assert_eq!(
        kind(Threshold::range(q(2.0, Unit::Km), q(1.0, Unit::Km))),
        ParseErrorKind::ReversedRange {
            low: 2.0,
            high: 1.0
        }
    );
    assert_eq!(
        kind(Threshold::range(q(1.0, Unit::Km), q(2.0, Unit::Mi))),
        ParseErrorKind::MixedUnits {
            low: Unit::Km,
            high: Unit::Mi
        }
    );
    let r = Threshold::range(q(1.0, Unit::Km), q(2.0, Unit::Km)).unwrap();
    assert_eq!(r.to_string(), "1-2 km");
}

#[test]
fn property_units() {
    let p = crate::PropertyUnits::of(Family::Time);
    assert_eq!(p.default_unit, Unit::Ms);
    assert_eq!(p.parse("<5").unwrap().to_string(), "<5 ms");
    let p = crate::PropertyUnits::new(Family::Time, Unit::Sec);
    assert_eq!(p.parse("<5").unwrap().to_string(), "<5 sec");
}
