//! Units, families and quantity conversion.

use crate::{Family, ParseErrorKind, Quantity, Unit};

#[test]
fn families_and_base_units() {
    for family in Family::ALL {
        let base = family.base_unit();
        assert_eq!(base.family(), family);
        assert_eq!(base.to_base_factor(), 1.0);
        assert_eq!(family.units().first(), Some(&base));
        for unit in family.units() {
            assert_eq!(unit.family(), family, "{unit:?}");
        }
    }
    let listed: usize = Family::ALL.iter().map(|f| f.units().len()).sum();
    assert_eq!(listed, Unit::ALL.len());
    assert_eq!(Family::Distance.to_string(), "distance");
    assert_eq!(Family::Throughput.to_string(), "throughput");
}

#[test]
fn factors() {
    assert_eq!(Unit::Mi.to_base_factor(), 1.609344);
    assert_eq!(Quantity::new(1500.0, Unit::M).in_base(), 1.5);
    assert_eq!(Quantity::new(2.0, Unit::Min).in_base(), 120_000.0);
    assert_eq!(Quantity::new(3.0, Unit::Sec).in_base(), 3_000.0);
    assert_eq!(Quantity::new(2.0, Unit::Gbps).in_base(), 2_000.0);
    assert_eq!(Quantity::new(4.0, Unit::Tbps).in_base(), 4_000_000.0);
    assert_eq!(Quantity::new(500.0, Unit::Kbps).in_base(), 0.5);
    assert_eq!(Quantity::new(1e6, Unit::Bps).in_base(), 1.0);
}

#[test]
fn symbols_round_trip_through_from_str() {
    for unit in Unit::ALL.into_iter().filter(|u| *u != Unit::One) {
        assert_eq!(unit.symbol().parse::<Unit>(), Ok(unit));
        assert_eq!(unit.symbol().to_uppercase().parse::<Unit>(), Ok(unit));
        assert_eq!(unit.to_string(), unit.symbol());
    }
    assert_eq!("s".parse::<Unit>(), Ok(Unit::Sec));
    assert_eq!(" Mbps ".parse::<Unit>(), Ok(Unit::Mbps));
    let err = "mins".parse::<Unit>().unwrap_err();
    assert_eq!(
        err.kind,
        ParseErrorKind::UnknownUnit {
            unit: "mins".to_owned()
        }
    );
    assert_eq!(
        "".parse::<Unit>().unwrap_err().kind,
        ParseErrorKind::UnexpectedEnd
    );
}

#[test]
fn conversion() {
    let mile = Quantity::new(1.0, Unit::Mi);
    assert_eq!(mile.to(Unit::Km), Ok(Quantity::new(1.609344, Unit::Km)));
    let m = mile.to(Unit::M).unwrap();
    assert!((m.value - 1609.344).abs() < 1e-9, "{m}");
    assert_eq!(mile.to(Unit::Mi), Ok(mile));
    assert_eq!(
        Quantity::new(90.0, Unit::Sec).to(Unit::Min),
        Ok(Quantity::new(1.5, Unit::Min))
    );
    let err = mile.to(Unit::Ms).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot convert distance unit `mi` to time unit `ms`; expected a distance unit\n  1 mi\n    ^"
    );
    let huge = Quantity::new(1e305, Unit::Tbps).to(Unit::Bps).unwrap_err();
    assert_eq!(huge.kind, ParseErrorKind::OutOfRange);
    assert_eq!(
        Quantity::from_base(3_000.0, Unit::Sec),
        Quantity::new(3.0, Unit::Sec)
    );
}

#[test]
fn quantity_display() {
    assert_eq!(Quantity::new(250.0, Unit::Km).to_string(), "250 km");
    assert_eq!(Quantity::new(1.5, Unit::Usd).to_string(), "1.5 USD");
    assert_eq!(Quantity::new(3.0, Unit::One).to_string(), "3");
}
