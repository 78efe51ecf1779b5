//! The dimension registry: every alias, folding, units, the Promise dialect, suggestions.

use proptest::prelude::*;

use super::*;

fn read(key: &str, raw: Raw<'_>, round: Round) -> Result<(String, u64, bool), String> {
    amount(key, raw, round)
        .map(|a| (a.dimension, a.value, a.exact))
        .map_err(|e| e.to_string())
}

#[test]
fn every_alias_names_its_dimension() {
    // Written out, not derived from the registry: the accepted spellings are the contract.
    let table = [
        ("vcpu", "vcpu"),
        ("vCPU", "vcpu"),
        ("VCPU", "vcpu"),
        ("vcpus", "vcpu"),
        ("vCPUs", "vcpu"),
        ("cores", "vcpu"),
        ("cpu", "vcpu"),
        ("cpus", "vcpu"),
        ("numVirtualCpu", "vcpu"),
        ("ram_mib", "ram_mib"),
        ("ram", "ram_mib"),
        ("MEMORY_MB", "ram_mib"),
        ("virtualMemSize", "ram_mib"),
        ("Memory", "ram_mib"),
        ("mem", "ram_mib"),
        ("disk_gib", "disk_gib"),
        ("disk", "disk_gib"),
        ("DISK_GB", "disk_gib"),
        ("gigabytes", "disk_gib"),
        ("Storage", "disk_gib"),
        ("sizeOfStorage", "disk_gib"),
        ("diskSize", "disk_gib"),
        ("instances", "instances"),
        ("addresses", "addresses"),
        ("floating_ips", "addresses"),
        ("floatingip", "addresses"),
    ];
    for (key, dim) in table {
        assert_eq!(lookup(key).map(|(d, _)| d.name), Some(dim), "{key}");
        assert_eq!(canonical(key), dim, "{key}");
    }
    let registered: usize = DIMENSIONS.iter().map(|d| d.aliases.len()).sum();
    assert_eq!(
        registered,
        table.len(),
        "every registered alias is in the table"
    );
}

#[test]
fn matching_ignores_case_and_separators_only() {
    for key in [
        "MEMORY_MB",
        "memory_mb",
        "memory-mb",
        "Memory.MB",
        "memoryMb",
        "memory mb",
    ] {
        assert_eq!(canonical(key), "ram_mib", "{key}");
    }
    for key in ["NUM_VIRTUAL_CPU", "num-virtual-cpu", "numvirtualcpu"] {
        assert_eq!(canonical(key), "vcpu", "{key}");
    }
    // Other keys name their own dimension, exactly as written.
    for key in ["sriov_vf", "GPU", "CUSTOM_FPGA", "vcpux", "rams"] {
        assert_eq!(lookup(key), None, "{key}");
        assert_eq!(canonical(key), key);
    }
}

#[test]
fn the_registry_is_consistent() {
    let mut folded: Vec<(String, &str, Option<ByteUnit>)> = Vec::new();
    for d in DIMENSIONS {
        assert_eq!(
            d.name,
            d.name.to_ascii_lowercase(),
            "canonical names are lowercase"
        );
        assert_eq!(
            d.aliases.first().map(|a| a.name),
            Some(d.name),
            "{}",
            d.name
        );
        assert_eq!(by_name(d.name), Some(d));
        for a in d.aliases {
            assert_eq!(
                a.bare.is_some(),
                matches!(d.measure, Measure::Bytes(_)),
                "{}: bare units exactly for byte dimensions",
                a.name
            );
            let f = fold(a.name);
            for (g, other, bare) in &folded {
                if *g == f {
                    assert_eq!(*other, d.name, "`{}` folds into two dimensions", a.name);
                    assert_eq!(*bare, a.bare, "`{}`: one spelling, two units", a.name);
                }
            }
            folded.push((f, d.name, a.bare));
        }
        if let Some(p) = d.promise {
            assert_eq!(rename(p), Some(d.name), "Promise's `{p}` keeps its numbers");
        }
    }
}

#[test]
fn rename_and_the_promise_dialect_keep_numbers() {
    for (key, dim) in [
        ("cores", Some("vcpu")),
        ("VCPU", Some("vcpu")),
        ("ram", Some("ram_mib")),
        ("MEMORY_MB", Some("ram_mib")),
        ("gigabytes", Some("disk_gib")),
        ("storage", Some("disk_gib")),
        ("instances", Some("instances")),
        // Bare numbers of `Memory` are GB: a plain rename would change them.
        ("Memory", None),
        ("mem", None),
        ("sriov_vf", None),
    ] {
        assert_eq!(rename(key), dim, "{key}");
    }
    let promise: Vec<&str> = [
        "vcpu",
        "ram_mib",
        "disk_gib",
        "instances",
        "addresses",
        "gpu",
    ]
    .into_iter()
    .map(|d| Dialect::Promise.name(d))
    .collect();
    assert_eq!(
        promise,
        ["cores", "ram", "gigabytes", "instances", "addresses", "gpu"]
    );
    // Only canonical names are translated.
    assert_eq!(Dialect::Promise.name("vcpus"), "vcpus");
}

#[test]
fn amounts_convert_to_base_units_exactly() {
    use Raw::{Number, Quantity, Text};
    use Round::{Down, Up};
    let ok = |key, raw, round| read(key, raw, round).unwrap();
    // Bare numbers are in the alias's unit.
    assert_eq!(
        ok("ram", Number("2048"), Up),
        ("ram_mib".into(), 2048, true)
    );
    assert_eq!(
        ok("MEMORY_MB", Number("2048"), Up),
        ("ram_mib".into(), 2048, true)
    );
    assert_eq!(
        ok("Memory", Number("2"), Up),
        ("ram_mib".into(), 2048, true)
    );
    assert_eq!(
        ok("virtualMemSize", Text("16 GB"), Up),
        ("ram_mib".into(), 16384, true)
    );
    assert_eq!(ok("disk", Number("20"), Up), ("disk_gib".into(), 20, true));
    assert_eq!(
        ok("Storage", Text("1 TB"), Up),
        ("disk_gib".into(), 1024, true)
    );
    assert_eq!(
        ok(
            "Memory",
            Quantity {
                quantity: "1.5",
                unit: Some("GiB")
            },
            Up
        ),
        ("ram_mib".into(), 1536, true)
    );
    assert_eq!(
        ok(
            "Memory",
            Quantity {
                quantity: "15.5",
                unit: None
            },
            Down
        ),
        ("ram_mib".into(), 15872, true)
    );
    // Fractions of a base unit round as asked and say so.
    assert_eq!(
        ok(
            "Storage",
            Quantity {
                quantity: "512",
                unit: Some("MB")
            },
            Up
        ),
        ("disk_gib".into(), 1, false)
    );
    assert_eq!(
        ok(
            "Storage",
            Quantity {
                quantity: "512",
                unit: Some("MB")
            },
            Down
        ),
        ("disk_gib".into(), 0, false)
    );
    assert_eq!(ok("ram", Text("1 B"), Up), ("ram_mib".into(), 1, false));
    assert_eq!(
        ok("ram", Text("1e-40 GB"), Up),
        ("ram_mib".into(), 1, false)
    );
    assert_eq!(ok("ram", Text("0.0"), Up), ("ram_mib".into(), 0, true));
    // Counts are whole; other dimensions are counts too.
    assert_eq!(ok("vCPU", Text("4"), Up), ("vcpu".into(), 4, true));
    assert_eq!(ok("cores", Number("10.0"), Up), ("vcpu".into(), 10, true));
    assert_eq!(ok("cores", Number("1e3"), Up), ("vcpu".into(), 1000, true));
    assert_eq!(
        ok("sriov_vf", Number("2"), Down),
        ("sriov_vf".into(), 2, true)
    );
    assert_eq!(
        ok("k", Number(&i64::MAX.to_string()), Down).1,
        i64::MAX as u64
    );
    let errs: Vec<String> = [
        ("vCPU", Number("-1")),
        ("vCPU", Number("2.5")),
        (
            "vcpu",
            Quantity {
                quantity: "4",
                unit: Some("GB"),
            },
        ),
        ("gpu", Text("2 GB")),
        (
            "Memory",
            Quantity {
                quantity: "4",
                unit: Some("parsecs"),
            },
        ),
        ("ram", Text("lots")),
        ("ram", Text("")),
        ("Storage", Number("1e30")),
        ("k", Number("9223372036854775808")),
        ("disk", Number("nan")),
    ]
    .into_iter()
    .map(|(k, raw)| read(k, raw, Up).unwrap_err())
    .collect();
    expect_test::expect![[r#"
        [
            "`vCPU` is -1; expected a non-negative integer amount",
            "`vCPU` is 2.5; expected a non-negative integer amount",
            "`vcpu` has unit `GB`; expected a plain count (units apply to memory and disk)",
            "`gpu` has unit `GB`; expected a plain count (units apply to memory and disk)",
            "`Memory` has unknown unit `parsecs`; expected one of B, KB, MB, GB, TB (or KiB, MiB, GiB, TiB)",
            "`ram` is \"lots\"; expected a non-negative amount: a number (MiB), `16 GB`, or {quantity: 16, unit: GB}",
            "`ram` is \"\"; expected a non-negative amount: a number (MiB), `16 GB`, or {quantity: 16, unit: GB}",
            "`Storage` is 1e30; the amount is too large",
            "`k` is 9223372036854775808; the amount is too large",
            "`disk` is nan; expected a non-negative amount: a number (GiB), `16 GB`, or {quantity: 16, unit: GB}",
        ]
    "#]]
    .assert_debug_eq(&errs);
}

#[test]
fn byte_units_read_case_insensitively() {
    for (text, unit) in [
        ("b", ByteUnit::B),
        ("k", ByteUnit::KiB),
        ("KB", ByteUnit::KiB),
        ("kib", ByteUnit::KiB),
        ("Mb", ByteUnit::MiB),
        ("MiB", ByteUnit::MiB),
        (" GB ", ByteUnit::GiB),
        ("g", ByteUnit::GiB),
        ("TiB", ByteUnit::TiB),
    ] {
        assert_eq!(ByteUnit::parse(text), Some(unit), "{text}");
    }
    assert_eq!(ByteUnit::parse("GX"), None);
    assert_eq!(ByteUnit::parse("bytes"), None);
    let bytes: Vec<u64> = ByteUnit::ALL.iter().map(|u| u.bytes()).collect();
    assert_eq!(bytes, [1, 1024, 1 << 20, 1 << 30, 1 << 40]);
    assert_eq!(by_name("ram_mib").map(Dimension::unit), Some("MiB"));
    assert_eq!(by_name("vcpu").map(Dimension::unit), Some("count"));
}

#[test]
fn suggestions_name_the_likely_meaning() {
    assert_eq!(distance("vcpsu", "vcpus"), 1);
    assert_eq!(distance("kitten", "sitting"), 3);
    assert_eq!(suggest("vcpsu", []), Some("vcpu".to_owned()));
    assert_eq!(suggest("coers", []), Some("cores".to_owned()));
    assert_eq!(suggest("ram_mb", []), Some("ram_mib".to_owned()));
    assert_eq!(suggest("memroy", []), Some("Memory".to_owned()));
    assert_eq!(suggest("gpus", ["gpu", "sriov_vf"]), Some("gpu".to_owned()));
    // Same name, other spelling: the request's.
    assert_eq!(suggest("GPU", ["gpu"]), Some("gpu".to_owned()));
    assert_eq!(suggest("sriov_vf", ["gpu"]), None);
    assert_eq!(suggest("bandwidth", []), None);
    assert_eq!(suggest("GPU", []), None, "not `cpu`");
    assert_eq!(suggest("rma", []), None);
}

/// One random edit of `s`: delete, insert, substitute or swap neighbours (letters only).
fn edited(s: &str, kind: u8, at: usize, c: char) -> String {
    let mut v: Vec<char> = s.chars().collect();
    let i = at % v.len();
    match kind % 4 {
        0 if v.len() > 2 => {
            v.remove(i);
        }
        1 | 0 => v.insert(i, c),
        2 => v[i] = c,
        _ => {
            let j = if i + 1 < v.len() { i + 1 } else { i - 1 };
            v.swap(i, j);
        }
    }
    v.into_iter().collect()
}

fn any_alias() -> impl Strategy<Value = &'static Alias> {
    proptest::sample::select(
        DIMENSIONS
            .iter()
            .flat_map(|d| d.aliases.iter())
            .collect::<Vec<_>>(),
    )
}

proptest! {
    #[test]
    fn any_casing_or_separators_of_an_alias_normalise(
        alias in any_alias(),
        flips in proptest::collection::vec(any::<bool>(), 64),
        seps in proptest::collection::vec(proptest::sample::select(vec!["", "", "", "_", "-", " ", "."]), 64),
    ) {
        let key: String = alias
            .name
            .chars()
            .zip(flips.iter().zip(&seps))
            .map(|(c, (up, sep))| {
                let c = if *up { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() };
                format!("{sep}{c}")
            })
            .collect();
        let want = lookup(alias.name).map(|(d, _)| d.name);
        prop_assert_eq!(lookup(&key).map(|(d, _)| d.name), want);
        prop_assert_eq!(canonical(&key).into_owned(), want.unwrap_or_default().to_owned());
    }

    #[test]
    fn a_near_miss_of_an_alias_is_unknown_and_gets_a_suggestion(
        alias in any_alias(),
        kind in 0u8..4,
        at in 0usize..64,
        c in proptest::char::range('a', 'z'),
    ) {
        let key = edited(alias.name, kind, at, c);
        prop_assume!(lookup(&key).is_none());
        // Three letters or fewer are suggested only by spelling.
        prop_assume!(fold(&key).chars().count() > 3);
        prop_assert_eq!(canonical(&key).into_owned(), key.clone());
        let s = suggest(&key, []);
        prop_assert!(s.is_some(), "no suggestion for `{}` (from `{}`)", key, alias.name);
        let s = s.unwrap_or_default();
        prop_assert!(distance(&fold(&key), &fold(&s)) <= 1, "`{}` suggested for `{}`", s, key);
    }

    #[test]
    fn amounts_never_panic_and_stay_in_range(
        key in any_alias().prop_map(|a| a.name),
        text in "[0-9eE+.\\- ]{0,12}[a-zA-Z]{0,4}",
        up in any::<bool>(),
    ) {
        let round = if up { Round::Up } else { Round::Down };
        for raw in [Raw::Number(&text), Raw::Text(&text)] {
            if let Ok(a) = amount(key, raw, round) {
                prop_assert!(i64::try_from(a.value).is_ok());
            }
        }
    }
}

#[test]
fn the_guide_lists_every_alias() {
    let guide = include_str!("../../../../docs/guide/capacity.md");
    for d in DIMENSIONS {
        assert!(
            guide.contains(&format!("| `{}` | {} |", d.name, d.unit())),
            "{}",
            d.name
        );
        for a in d.aliases {
            assert!(
                guide.contains(&format!("`{}`", a.name)),
                "`{}` is not in the guide",
                a.name
            );
        }
        if let Some(p) = d.promise {
            assert!(guide.contains(&format!("`{p}`")), "{p}");
        }
    }
}
