//! Fuzz target: threshold parsing never panics, and every successful parse round-trips.
#![no_main]

use berth_units::{Family, Threshold};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    check(input, Threshold::parse_any(input), Threshold::parse_any);
    for family in Family::ALL {
        for unit in family.units() {
            let reparse = |s: &str| Threshold::parse(s, family, *unit);
            check(input, reparse(input), reparse);
        }
    }
});

fn check(
    input: &str,
    parsed: Result<Threshold, berth_units::ParseError>,
    reparse: impl Fn(&str) -> Result<Threshold, berth_units::ParseError>,
) {
    match parsed {
        Ok(t) => {
            let shown = t.to_string();
            assert_eq!(reparse(&shown), Ok(t), "{input:?} displayed as {shown:?}");
        }
        Err(e) => {
            assert!(e.offset <= input.len() && input.is_char_boundary(e.offset));
            let _ = e.to_string();
        }
    }
}
