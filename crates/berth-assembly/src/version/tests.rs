//! Tests for versions, ranges and typed names.

use proptest::prelude::*;

use super::*;

fn v(s: &str) -> Version {
    Version::parse(s).unwrap()
}

fn req(s: &str) -> VersionReq {
    VersionReq::parse(s).unwrap()
}

#[test]
fn ranges_match_like_cargo_except_bare_is_exact() {
    let cases: &[(&str, &str, bool)] = &[
        ("^1.0", "1.0", true),
        ("^1.0", "1.9.3", true),
        ("^1.0", "2.0", false),
        ("^1.0", "0.9", false),
        ("^0.2", "0.2.5", true),
        ("^0.2", "0.3", false),
        ("^0.0.3", "0.0.3", true),
        ("^0.0.3", "0.0.4", false),
        ("~1.2", "1.2.9", true),
        ("~1.2", "1.3", false),
        ("~1", "1.9", true),
        (">=1.0 <2.0", "1.5", true),
        (">=1.0 <2.0", "2.0", false),
        (">=1.0, <2.0", "0.9", false),
        (">= 1.0 < 2.0", "1.0", true),
        ("1.0", "1.0.0", true),
        ("1.0", "1.0.1", false),
        ("=1.0", "1.0", true),
        ("1.x", "1.7.2", true),
        ("1.x", "2.0", false),
        ("*", "42.1", true),
        (">1.0", "1.0", false),
        ("<=1.0", "1.0", true),
    ];
    for (r, ver, want) in cases {
        assert_eq!(req(r).matches(&v(ver)), *want, "{r} vs {ver}");
    }
}

#[test]
fn malformed_ranges_and_versions_are_refused() {
    for bad in ["", ">=", "^a.b", "1.x.2", ">1.x", "1.2.3.4", "~ ~1"] {
        assert!(VersionReq::parse(bad).is_err(), "{bad:?}");
    }
    for bad in ["", "1.", "a", "1.0.0.0", "^1.0", "1..2"] {
        assert!(Version::parse(bad).is_err(), "{bad:?}");
    }
    assert_eq!(req("1.0").as_exact(), Some(v("1.0")));
    assert_eq!(req("^1.0").as_exact(), None);
}

#[test]
fn type_refs_check_kind_name_and_version() {
    let all = [TypeKind::Resource, TypeKind::Assembly];
    let t = TypeRef::parse("assembly::storage_cluster::^1.0", &all, true).unwrap();
    assert_eq!(t.kind, TypeKind::Assembly);
    assert_eq!(t.to_string(), "assembly::storage_cluster::^1.0");
    assert!(matches!(
        TypeRef::parse("assembly::storage_cluster::^1.0", &all, false),
        Err(AssemblyError::RangeNotAllowed { .. })
    ));
    assert!(matches!(
        TypeRef::parse("resource:: c_streamer::1.0", &all, false),
        Err(AssemblyError::Name { .. })
    ));
    assert!(matches!(
        TypeRef::parse("resource::x::1.0", &[TypeKind::Assembly], false),
        Err(AssemblyError::TypeKind { .. })
    ));
    assert!(matches!(
        TypeRef::parse("assembly::x", &all, false),
        Err(AssemblyError::TypeShape { .. })
    ));
}

#[test]
fn naming_rules() {
    for ok in ["a", "Streamer_cluster", "h-bta2", "A1"] {
        assert!(is_valid_name(ok), "{ok}");
    }
    for bad in ["", "1abc", "_a", "a_", "a-", "a b", "a.b", "é"] {
        assert!(!is_valid_name(bad), "{bad}");
    }
}

proptest! {
    // Oracle: the caret rule written out by hand for major > 0.
    #[test]
    fn caret_matches_oracle(ma in 1u64..5, mi in 0u64..5, a in 0u64..6, b in 0u64..6, c in 0u64..3) {
        let r = req(&format!("^{ma}.{mi}"));
        let cand = Version::new(a, b, c);
        let oracle = a == ma && (b, c) >= (mi, 0);
        prop_assert_eq!(r.matches(&cand), oracle);
    }

    #[test]
    fn tilde_and_bounds_match_oracle(ma in 0u64..4, mi in 0u64..4, a in 0u64..5, b in 0u64..5, c in 0u64..3) {
        let cand = Version::new(a, b, c);
        let tilde = req(&format!("~{ma}.{mi}"));
        prop_assert_eq!(tilde.matches(&cand), a == ma && b == mi);
        let between = req(&format!(">={ma}.{mi} <{}.0", ma + 1));
        prop_assert_eq!(between.matches(&cand), (a, b) >= (ma, mi) && a <= ma);
    }

    #[test]
    fn version_display_round_trips(a in 0u64..1000, b in 0u64..1000, c in 0u64..1000, n in 1usize..=3) {
        let text = [a, b, c][..n].iter().map(ToString::to_string).collect::<Vec<_>>().join(".");
        prop_assert_eq!(Version::parse(&text).unwrap().to_string(), text);
    }
}
