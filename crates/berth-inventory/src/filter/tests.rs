//! Unit tests for demand filtering, plus a property test against a naive filter.

use super::*;
use crate::model::{Canon, ZoneCategory};
use proptest::prelude::*;

mod oracle;

fn svc(id: &str, stype: &str, attrs: &[(&str, AttrValue)]) -> Candidate {
    let mut c = Candidate::new(id, InventoryType::Service);
    c.service_type = Some(stype.to_owned());
    c.service_id = Some("vCPE".to_owned());
    c.attributes = attrs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    c
}

fn pool() -> Vec<Candidate> {
    vec![
        svc(
            "mux-a",
            "vG_MuxInfra",
            &[
                ("orchestration-status", "Activated".into()),
                ("model-version", "2.0".into()),
            ],
        ),
        svc(
            "mux-b",
            "vG_MuxInfra",
            &[
                ("orchestration-status", "PendingDelete".into()),
                ("model-version", AttrValue::Float(2.0)),
            ],
        ),
        svc(
            "vg-a",
            "vG",
            &[("orchestration-status", "Activated".into())],
        ),
        svc(
            "mux-c",
            "vG_MuxInfra",
            &[(
                "features",
                AttrValue::List(vec!["sriov".into(), "dpdk".into()]),
            )],
        ),
    ]
}

fn req() -> DemandRequirement {
    DemandRequirement::new("vGMuxInfra", "aai", InventoryType::Service)
}

fn kept(r: &Resolved) -> Vec<&str> {
    r.candidates
        .iter()
        .map(|c| c.candidate_id.as_str())
        .collect()
}

fn removed(r: &Resolved) -> Vec<String> {
    r.removed
        .iter()
        .map(|r| format!("{}: {}", r.candidate_id(), r.reason()))
        .collect()
}

#[test]
fn service_type_filter_removes_other_types_with_reason() {
    let mut q = req();
    q.service_type = vec!["vG_MuxInfra".into()];
    let p = pool();
    let r = resolve_from(&q, &p);
    assert_eq!(kept(&r), ["mux-a", "mux-b", "mux-c"]);
    assert_eq!(removed(&r), ["vg-a: service type vG not in [vG_MuxInfra]"]);
}

#[test]
fn service_id_filter() {
    let mut q = req();
    q.service_id = vec!["VoLTE".into()];
    let p = pool();
    let r = resolve_from(&q, &p);
    assert!(r.candidates.is_empty());
    assert_eq!(r.removed.len(), 4);
    assert!(matches!(
        r.removed.get(0).expect("removed").reason(),
        RemovalReason::ServiceId { .. }
    ));
}

#[test]
fn attribute_filter_is_loose_and_reports_missing_and_mismatch() {
    let mut q = req();
    q.attributes
        .insert("model-version".into(), AttrFilter::Eq(AttrValue::Int(2)));
    q.attributes.insert(
        "orchestration-status".into(),
        AttrFilter::Eq("Activated".into()),
    );
    let p = pool();
    let r = resolve_from(&q, &p);
    // "2.0" (string) and 2.0 (float) both match 2; mux-b fails on status.
    assert_eq!(kept(&r), ["mux-a"]);
    assert_eq!(
        removed(&r),
        [
            "mux-b: attribute `orchestration-status` is PendingDelete; expected Activated",
            "vg-a: no attribute `model-version`",
            "mux-c: no attribute `model-version`",
        ]
    );
}

#[test]
fn any_and_not_filters_and_list_membership() {
    let p = pool();
    let mut q = req();
    q.attributes.insert(
        "orchestration-status".into(),
        AttrFilter::Not(vec!["PendingDelete".into(), "Deleted".into()]),
    );
    assert_eq!(kept(&resolve_from(&q, &p)), ["mux-a", "vg-a"]);

    let mut q = req();
    q.attributes.insert(
        "orchestration-status".into(),
        AttrFilter::Any(vec!["PendingDelete".into(), "Activated".into()]),
    );
    assert_eq!(kept(&resolve_from(&q, &p)), ["mux-a", "mux-b", "vg-a"]);

    let mut q = req();
    q.attributes
        .insert("features".into(), AttrFilter::Eq("sriov".into()));
    assert_eq!(kept(&resolve_from(&q, &p)), ["mux-c"]);
}

#[test]
fn attribute_lookup_falls_back_to_typed_fields_with_aai_spelling() {
    let mut c = Candidate::new("dfw1", InventoryType::Cloud);
    c.cloud_owner = Some("att-aic".into());
    c.cloud_region_version = Some("1.1".into());
    let mut q = DemandRequirement::new("vG", "aai", InventoryType::Cloud);
    q.attributes
        .insert("cloud-owner".into(), AttrFilter::Eq("att-aic".into()));
    q.attributes.insert(
        "cloud_region_version".into(),
        AttrFilter::Eq(AttrValue::Float(1.1)),
    );
    let r = resolve_from(&q, [&c]);
    assert_eq!(kept(&r), ["dfw1"]);
}

#[test]
fn excluded_and_required_with_existing_placement_exempt_from_required() {
    let mut q = req();
    q.excluded_candidates = vec!["mux-b".into()];
    q.required_candidates = vec!["mux-a".into(), "mux-b".into()];
    q.existing_placement = Some("mux-c".into());
    let p = pool();
    let r = resolve_from(&q, &p);
    assert_eq!(kept(&r), ["mux-a", "mux-c"]);
    assert_eq!(
        removed(&r),
        [
            "mux-b: in excluded_candidates",
            "vg-a: not in required_candidates"
        ]
    );
    assert_eq!(
        r.existing_placement,
        Some(ExistingPlacement {
            candidate_id: "mux-c".into(),
            status: PlacementStatus::Kept
        })
    );
}

#[test]
fn existing_placement_removed_or_unknown_is_flagged() {
    let p = pool();
    let mut q = req();
    q.excluded_candidates = vec!["mux-a".into()];
    q.existing_placement = Some("mux-a".into());
    let r = resolve_from(&q, &p);
    assert_eq!(
        r.existing_placement.map(|e| e.status),
        Some(PlacementStatus::Removed)
    );
    q.existing_placement = Some("nowhere".into());
    let r = resolve_from(&q, &p);
    assert_eq!(
        r.existing_placement.map(|e| e.status),
        Some(PlacementStatus::Unknown)
    );
}

#[test]
fn explicit_candidates_replace_pool_and_skip_attribute_filters() {
    let mut q = req();
    q.attributes
        .insert("missing".into(), AttrFilter::Eq("x".into()));
    q.candidates = vec![
        Candidate::new("x1", InventoryType::Service),
        Candidate::new("x2", InventoryType::Service),
    ];
    q.excluded_candidates = vec!["x2".into()];
    let p = pool();
    let r = resolve_from(&q, &p);
    assert_eq!(kept(&r), ["x1"]);
    assert_eq!(removed(&r), ["x2: in excluded_candidates"]);
}

#[test]
fn default_cost_and_zone_defaults_apply_to_kept_candidates() {
    let mut c = Candidate::new("dfw1", InventoryType::Cloud);
    c.region = Some("us-central".into());
    c.complex_name = Some("dalls_one".into());
    c.country = Some("USA".into());
    c.zones.insert(ZoneCategory::Region, "explicit".into());
    let mut priced = Candidate::new("dfw2", InventoryType::Cloud);
    priced.cost = Some(7.0);
    let mut q = DemandRequirement::new("vG", "aai", InventoryType::Cloud);
    q.default_cost = Some(100.0);
    let r = resolve_from(&q, [&c, &priced]);
    let first = &r.candidates[0];
    assert_eq!(first.cost, Some(100.0));
    assert_eq!(r.candidates[1].cost, Some(7.0));
    assert_eq!(first.zone(ZoneCategory::Region), Some("explicit"));
    assert_eq!(first.zone(ZoneCategory::Complex), Some("dalls_one"));
    assert_eq!(first.zone(ZoneCategory::Country), Some("USA"));
    assert_eq!(first.zone(ZoneCategory::Disaster), None);
}

#[test]
fn removals_spell_out_reasons_and_round_trip_through_json() {
    let mut q = req();
    q.attributes.insert(
        "orchestration-status".into(),
        AttrFilter::Eq("Activated".into()),
    );
    q.excluded_candidates = vec!["mux-a".into()];
    let p = pool();
    let r = resolve_from(&q, &p);
    let kinds: Vec<RemovalKind> = r.removed.iter().map(|r| r.kind()).collect();
    assert_eq!(
        kinds,
        [
            RemovalKind::Excluded,
            RemovalKind::AttributeMismatch,
            RemovalKind::MissingAttribute
        ]
    );
    let mismatch = r.removed.get(1).expect("three removals");
    assert_eq!(
        mismatch.to_string(),
        "mux-b: attribute `orchestration-status` is PendingDelete; expected Activated"
    );
    // Removals given in full equal the compact ones they spell out.
    let given: Removals = r
        .removed
        .iter()
        .map(|x| (Arc::clone(x.candidate()), x.reason()))
        .collect();
    assert_eq!(given, r.removed);
    let shorter: Removals = r
        .removed
        .iter()
        .take(2)
        .map(|x| (Arc::clone(x.candidate()), x.reason()))
        .collect();
    assert_ne!(shorter, r.removed);
    let json = serde_json::to_string(&r).expect("serializes");
    let back: Resolved = serde_json::from_str(&json).expect("deserializes");
    assert_eq!(back, r);
    assert_eq!(
        back.removed.get(1).map(|x| x.kind()),
        Some(RemovalKind::AttributeMismatch)
    );
}

#[test]
fn loose_equality_examples() {
    let s = |x: &str| AttrValue::Str(x.to_owned());
    assert!(s("2.0").loosely_eq(&AttrValue::Int(2)));
    assert!(s("TRUE").loosely_eq(&AttrValue::Bool(true)));
    assert!(s("8086").loosely_eq(&AttrValue::Int(8086)));
    assert!(!s("2.5").loosely_eq(&AttrValue::Int(2)));
    assert!(!s("abc").loosely_eq(&s("ABC")));
    assert!(!AttrValue::List(vec![s("a")]).loosely_eq(&s("a")));
    assert!(AttrValue::List(vec![s("a")]).matches(&s("a")));
}

// ---- property test: resolve_from vs a naive filter over text forms ----

fn value_text(v: &AttrValue) -> Option<String> {
    // The oracle's own normalisation: numbers via f64, everything else as written.
    match v {
        AttrValue::Int(i) => Some(format!("{}", *i as f64)),
        AttrValue::Float(f) => Some(format!("{f}")),
        AttrValue::Str(s) => Some(match s.parse::<f64>() {
            Ok(f) => format!("{f}"),
            Err(_) => s.clone(),
        }),
        AttrValue::Bool(b) => Some(b.to_string()),
        AttrValue::List(_) => None,
    }
}

fn naive_matches(have: &AttrValue, want: &AttrValue) -> bool {
    match have {
        AttrValue::List(items) => items
            .iter()
            .any(|i| value_text(i).is_some() && value_text(i) == value_text(want)),
        _ => value_text(have) == value_text(want),
    }
}

fn naive_keep(c: &Candidate, filters: &BTreeMap<String, AttrFilter>) -> bool {
    filters.iter().all(|(k, f)| {
        let Some(have) = c.attributes.get(k) else {
            return false;
        };
        match f {
            AttrFilter::Eq(w) => naive_matches(have, w),
            AttrFilter::Any(ws) => ws.is_empty() || ws.iter().any(|w| naive_matches(have, w)),
            AttrFilter::Not(ws) => ws.iter().all(|w| !naive_matches(have, w)),
        }
    })
}

fn scalar() -> impl Strategy<Value = AttrValue> {
    prop_oneof![
        (0i64..3).prop_map(AttrValue::Int),
        prop::sample::select(vec![0.0, 1.0, 1.5]).prop_map(AttrValue::Float),
        prop::sample::select(vec!["a", "b", "1", "1.5", "2.0"]).prop_map(AttrValue::from),
        any::<bool>().prop_map(AttrValue::Bool),
    ]
}

fn attr_value() -> impl Strategy<Value = AttrValue> {
    prop_oneof![
        4 => scalar(),
        1 => prop::collection::vec(scalar(), 0..3).prop_map(AttrValue::List),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["k1", "k2", "k3"]).prop_map(str::to_owned)
}

fn filter() -> impl Strategy<Value = AttrFilter> {
    prop_oneof![
        scalar().prop_map(AttrFilter::Eq),
        prop::collection::vec(scalar(), 0..3).prop_map(AttrFilter::Any),
        prop::collection::vec(scalar(), 0..3).prop_map(AttrFilter::Not),
    ]
}

proptest! {
    #[test]
    fn attribute_filtering_matches_naive_filter(
        attrs in prop::collection::vec(prop::collection::btree_map(key(), attr_value(), 0..3), 0..12),
        filters in prop::collection::btree_map(key(), filter(), 0..3),
    ) {
        let cands: Vec<Candidate> = attrs
            .into_iter()
            .enumerate()
            .map(|(i, a)| {
                let mut c = Candidate::new(format!("c{i}"), InventoryType::Cloud);
                c.attributes = a;
                c
            })
            .collect();
        let mut q = DemandRequirement::new("d", "aai", InventoryType::Cloud);
        q.attributes = filters.clone();
        let r = resolve_from(&q, &cands);
        let want: Vec<&str> = cands
            .iter()
            .filter(|c| naive_keep(c, &filters))
            .map(|c| c.candidate_id.as_str())
            .collect();
        prop_assert_eq!(kept(&r), want);
        // Kept and removed partition the pool, each in pool order.
        let mut all: Vec<&str> = kept(&r);
        all.extend(r.removed.iter().map(|r| r.candidate_id().as_str()));
        all.sort_unstable();
        let mut ids: Vec<&str> = cands.iter().map(|c| c.candidate_id.as_str()).collect();
        ids.sort_unstable();
        prop_assert_eq!(all, ids);
    }
}

// ---- property tests: compiled filters and shared candidates vs the old algorithm ----

/// Scalars where loose equality is subtle: huge integers and floats whose decimal forms
/// meet, non-finite floats and their spellings, padded and signed numbers, booleans.
fn tricky_scalar() -> impl Strategy<Value = AttrValue> {
    prop_oneof![
        3 => prop::sample::select(vec![
            0i64,
            1,
            2,
            -1,
            100_000_000_000_000_000,
            1_152_921_504_606_846_976,
            1_152_921_504_606_847_000,
            9_007_199_254_740_994,
            i64::MAX,
            i64::MIN,
        ])
        .prop_map(AttrValue::Int),
        1 => any::<i64>().prop_map(AttrValue::Int),
        3 => prop::sample::select(vec![
            0.0,
            -0.0,
            1.0,
            1.5,
            2.0,
            0.1,
            1e17,
            1_152_921_504_606_846_976.0,
            9_007_199_254_740_992.0,
            -9_007_199_254_740_994.0,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ])
        .prop_map(AttrValue::Float),
        1 => any::<f64>().prop_map(AttrValue::Float),
        6 => prop::sample::select(vec![
            "a",
            "gold",
            " 5",
            "5",
            "+5",
            "-0",
            "2.0",
            "2.0 ",
            "1.5",
            "1e17",
            "100000000000000000",
            "1152921504606846976",
            "1152921504606847000",
            "inf",
            "-inf",
            "NaN",
            "infinity",
            "TRUE",
            "false ",
            "0x10",
            "1_000",
            "",
            " ",
        ])
        .prop_map(AttrValue::from),
        1 => "[ab0-9 .eE+-]{0,6}".prop_map(AttrValue::Str),
        2 => any::<bool>().prop_map(AttrValue::Bool),
    ]
}

fn tricky_value() -> impl Strategy<Value = AttrValue> {
    let list = |v| prop::collection::vec(v, 0..3).prop_map(AttrValue::List);
    prop_oneof![
        4 => tricky_scalar(),
        2 => list(tricky_scalar().boxed()),
        1 => list(prop_oneof![tricky_scalar(), list(tricky_scalar().boxed())].boxed()),
    ]
}

fn tricky_filter() -> impl Strategy<Value = AttrFilter> {
    prop_oneof![
        tricky_value().prop_map(AttrFilter::Eq),
        prop::collection::vec(tricky_value(), 0..3).prop_map(AttrFilter::Any),
        prop::collection::vec(tricky_value(), 0..3).prop_map(AttrFilter::Not),
    ]
}

/// Attribute names: mostly map keys, also typed fields (with A&AI hyphens) and `cost`.
fn any_key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec!["k1", "k2"]),
        1 => prop::sample::select(vec![
            "cloud-owner",
            "cloud_owner",
            "cost",
            "region",
            "candidate-type",
            "service_type",
        ]),
    ]
    .prop_map(str::to_owned)
}

fn opt(xs: &'static [&'static str]) -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop::sample::select(xs).prop_map(str::to_owned))
}

fn names(xs: &'static [&'static str]) -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(prop::sample::select(xs).prop_map(str::to_owned), 0..3)
}

fn inventory_type() -> impl Strategy<Value = InventoryType> {
    prop_oneof![Just(InventoryType::Cloud), Just(InventoryType::Service)]
}

fn candidate(i: usize) -> impl Strategy<Value = Candidate> {
    (
        inventory_type(),
        opt(&["aai", "multicloud"]),
        prop::option::of(prop::sample::select(vec![1.0, 2.5])),
        (
            opt(&["aws", "att-aic", "2"]),
            opt(&["us-east", "5"]),
            opt(&["cx1"]),
            opt(&["USA"]),
        ),
        (opt(&["vG", "vG_MuxInfra"]), opt(&["vCPE", "VoLTE"])),
        prop::option::of(Just("explicit".to_owned())),
        prop::collection::btree_map(any_key(), tricky_value(), 0..4),
    )
        .prop_map(
            move |(
                ty,
                provider,
                cost,
                (owner, region, complex, country),
                (st, sid),
                zone,
                attrs,
            )| {
                let mut c = Candidate::new(format!("c{i}"), ty);
                c.inventory_provider = provider;
                c.cost = cost;
                c.cloud_owner = owner;
                c.region = region;
                c.complex_name = complex;
                c.country = country;
                c.service_type = st;
                c.service_id = sid;
                if let Some(z) = zone {
                    c.zones.insert(ZoneCategory::Region, z);
                }
                c.attributes = attrs;
                c
            },
        )
}

fn inventory() -> impl Strategy<Value = Vec<Candidate>> {
    (0usize..24).prop_flat_map(|n| (0..n).map(candidate).collect::<Vec<_>>())
}

fn ids() -> impl Strategy<Value = Vec<CandidateId>> {
    prop::collection::vec(
        (0usize..26).prop_map(|i| CandidateId::new(format!("c{i}"))),
        0..4,
    )
}

fn requirement() -> impl Strategy<Value = DemandRequirement> {
    (
        prop::sample::select(vec!["aai", "multicloud", "other"]),
        inventory_type(),
        names(&["vG", "vG_MuxInfra"]),
        names(&["vCPE", "VoLTE"]),
        prop::collection::btree_map(any_key(), tricky_filter(), 0..3),
        prop_oneof![3 => Just(Vec::new()), 1 => ids()],
        ids(),
        prop::option::of(prop_oneof![
            (0usize..26).prop_map(|i| CandidateId::new(format!("c{i}"))),
            Just(CandidateId::new("nowhere")),
        ]),
        prop::option::of(Just(7.0)),
    )
        .prop_map(
            |(provider, ty, st, sid, attrs, required, excluded, existing, default_cost)| {
                let mut q = DemandRequirement::new("d", provider, ty);
                q.service_type = st;
                q.service_id = sid;
                q.attributes = attrs;
                q.required_candidates = required;
                q.excluded_candidates = excluded;
                q.existing_placement = existing;
                q.default_cost = default_cost;
                q
            },
        )
}

/// The new result and the reference's, compared through `Debug` so that NaN values in
/// removal reasons compare equal to themselves; removals are spelled out in full.
fn same(got: &Resolved, want: &oracle::Naive) -> Result<(), TestCaseError> {
    let kept: Vec<&Candidate> = got.candidates.iter().map(|c| &**c).collect();
    prop_assert_eq!(format!("{kept:#?}"), format!("{:#?}", want.candidates));
    let removed: Vec<(CandidateId, RemovalReason)> = got
        .removed
        .iter()
        .map(|r| (r.candidate_id().clone(), r.reason()))
        .collect();
    prop_assert_eq!(format!("{removed:#?}"), format!("{:#?}", want.removed));
    for r in got.removed.iter() {
        prop_assert_eq!(r.kind(), r.reason().kind());
    }
    prop_assert_eq!(&got.existing_placement, &want.existing_placement);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn canonical_forms_agree_with_the_old_text_forms(a in tricky_value(), b in tricky_value()) {
        prop_assert_eq!(a.canonical(), oracle::canonical(&a));
        prop_assert_eq!(
            Canon::of(&a) == Canon::of(&b),
            oracle::canonical(&a) == oracle::canonical(&b)
        );
    }

    #[test]
    fn resolution_equals_the_old_algorithm(
        cands in inventory(),
        mut q in requirement(),
        explicit in prop::option::of(prop::collection::vec(0usize..24, 1..4)),
    ) {
        // Sometimes the requirement brings its own candidates (copies of inventory ones).
        if let Some(picks) = explicit {
            q.candidates = picks.iter().filter_map(|&i| cands.get(i).cloned()).collect();
        }
        // Straight over the pool, borrowed and shared.
        let want = oracle::resolve(&q, &cands);
        let pool = || cands.iter().filter(|c| {
            c.inventory_type == q.inventory_type && c.served_by(&q.inventory_provider)
        });
        same(&resolve_from(&q, pool()), &want)?;
        let shared: Vec<Arc<Candidate>> = pool().cloned().map(Arc::new).collect();
        same(&resolve_from(&q, &shared), &want)?;
        // Per candidate, through the public one-off check.
        for c in &cands {
            prop_assert_eq!(
                format!("{:?}", check_filters(&q, c)),
                format!("{:?}", oracle::check_filters(&q, c))
            );
        }
        // Through the indexed static provider.
        let p = crate::StaticProvider::from_candidates(cands.clone())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let inv: Vec<Candidate> = p.candidates().cloned().collect();
        let got = crate::InventoryProvider::resolve_demand(&p, &q)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        same(&got, &oracle::resolve(&q, &inv))?;
    }
}
