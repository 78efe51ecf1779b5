//! Capacity dimensions end to end through `plan`: an inventory and a request naming one
//! dimension by any two aliases in any casing agree exactly (oracle: `need <= capacity` in
//! base units), and a near-miss request key is named at its line:column with a suggestion.

#![allow(clippy::unwrap_used)]

use berth_engine::{Status, request_diagnostics};
use berth_inventory::Inventory;
use berth_units::dimension::{DIMENSIONS, Measure, lookup};
use proptest::prelude::*;

use crate::{opts, run};

/// An alias of a registered dimension, with the dimension's index.
fn any_alias() -> impl Strategy<Value = (usize, &'static str)> {
    let all: Vec<(usize, &'static str)> = DIMENSIONS
        .iter()
        .enumerate()
        .flat_map(|(i, d)| d.aliases.iter().map(move |a| (i, a.name)))
        .collect();
    proptest::sample::select(all)
}

/// `key` with its letters' case flipped where `flips` says.
fn recased(key: &str, flips: &[bool]) -> String {
    key.chars()
        .zip(flips.iter().chain(std::iter::repeat(&false)))
        .map(|(c, f)| {
            if *f {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// `n` base units of dimension `i` as YAML: a bare count, or text with the base unit.
fn written(i: usize, n: u32) -> String {
    match DIMENSIONS[i].measure {
        Measure::Count => n.to_string(),
        Measure::Bytes(u) => format!("\"{n} {}\"", u.symbol()),
    }
}

fn template(key: &str, amount: &str) -> String {
    format!(
        "homing_template_version: 2017-10-10\ndemands:\n  vG: [{{inventory_provider: aai, inventory_type: cloud}}]\nconstraints:\n  fit:\n    type: region_fit\n    demands: [vG]\n    properties:\n      controller: multicloud\n      request:\n        {key}: {amount}\n"
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_two_spellings_of_a_dimension_fit_exactly(
        (i, have) in any_alias(),
        other in 0usize..16,
        flips in proptest::collection::vec(any::<bool>(), 16),
        cap in 0u32..64,
        need in 1u32..64,
    ) {
        let aliases = DIMENSIONS[i].aliases;
        let want = aliases[other % aliases.len()].name;
        let inv = format!(
            "candidates:\n  - candidate_id: a\n    inventory_type: cloud\n    capacity: {{{}: {}}}\n",
            recased(have, &flips),
            written(i, cap)
        );
        let t = template(&recased(want, &flips[8..]), &written(i, need));
        let out = run(&t, &inv, &opts()).unwrap();
        let fits = need <= cap;
        prop_assert_eq!(
            out.status == Status::Solved,
            fits,
            "{} {} of {} {}: {:?}",
            want, need, have, cap, out.status
        );
    }

    #[test]
    fn a_near_miss_request_key_is_named_with_a_suggestion(
        (_, alias) in any_alias(),
        at in 0usize..16,
        c in proptest::char::range('a', 'z'),
    ) {
        // One inserted letter: no alias, near one.
        let mut key: Vec<char> = alias.chars().collect();
        key.insert(at % (key.len() + 1), c);
        let key: String = key.into_iter().collect();
        prop_assume!(lookup(&key).is_none());
        let inv = Inventory::parse(&format!(
            "candidates:\n  - candidate_id: a\n    inventory_type: cloud\n    capacity: {{{alias}: 4}}\n"
        ))
        .unwrap();
        let text = template(&key, "1");
        let t = berth_template::load(&text, &berth_template::LoadOptions::default()).unwrap();
        let doc = berth_doc::parse(&text).ok();
        let d = request_diagnostics(&t, doc.as_ref(), &inv);
        prop_assert_eq!(d.len(), 1, "{:?}", d);
        prop_assert_eq!((d[0].line, d[0].column), (11, 9));
        prop_assert_eq!(
            &d[0].path,
            &format!("constraints.fit.properties.request.{key}")
        );
        let head = format!("request `{key}` names a capacity no candidate of the inventory has, so no candidate fits; did you mean `");
        prop_assert!(d[0].message.starts_with(&head), "{}", d[0].message);
    }
}

#[test]
fn registered_dimensions_nobody_offers_are_named_too() {
    let inv = Inventory::parse(
        "candidates:\n  - {candidate_id: a, inventory_type: cloud, capacity: {vcpus: 4}}\n",
    )
    .unwrap();
    let text = template("Storage", "10");
    let t = berth_template::load(&text, &berth_template::LoadOptions::default()).unwrap();
    let d = request_diagnostics(&t, berth_doc::parse(&text).ok().as_ref(), &inv);
    let shown: Vec<String> = d.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "constraints.fit.properties.request.Storage (11:9): request `Storage` (dimension `disk_gib`) names a capacity no candidate of the inventory has, so no candidate fits"
        ]
    );
    // Offered under another spelling: nothing to say.
    let text = template("vCPU", "2");
    let t = berth_template::load(&text, &berth_template::LoadOptions::default()).unwrap();
    assert!(request_diagnostics(&t, None, &inv).is_empty());
}
