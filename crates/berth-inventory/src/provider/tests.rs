//! Unit tests for the static provider.

use super::*;
use crate::filter::{AttrFilter, RemovalReason};
use crate::model::AttrValue;
use crate::model::InventoryType;

const DOC: &str = r#"
candidates:
  - {candidate_id: dfw1, inventory_type: cloud, latitude: 32.9, longitude: -97.0,
     physical_location_id: DLLSTX55, groups: [g1], cloud_owner: att-aic}
  - {candidate_id: sfo1, inventory_type: cloud, inventory_provider: multicloud, groups: [g1]}
  - {candidate_id: mux1, inventory_type: service, service_type: vG_MuxInfra, groups: [g2]}
  - {candidate_id: mux2, inventory_type: service, service_type: vG_MuxInfra,
     inventory_provider: aai, groups: [g2], attributes: {orchestration-status: Activated}}
host_locations:
  USESTCDLLSTX55ANZ123: {latitude: 32.89748, longitude: -97.040443}
clli_locations:
  NYCMNY13: {latitude: 40.7128, longitude: -74.006}
licenses:
  vg-router-os: {available: 3}
"#;

fn provider() -> StaticProvider {
    StaticProvider::parse(DOC).expect("valid")
}

fn ids(r: &Resolved) -> Vec<&str> {
    r.candidates
        .iter()
        .map(|c| c.candidate_id.as_str())
        .collect()
}

#[test]
fn candidates_naming_a_provider_are_served_only_under_that_name() {
    let p = provider();
    let aai = p
        .resolve_demand(&DemandRequirement::new("vG", "aai", InventoryType::Cloud))
        .expect("ok");
    assert_eq!(ids(&aai), ["dfw1"]);
    let mc = p
        .resolve_demand(&DemandRequirement::new(
            "vG",
            "multicloud",
            InventoryType::Cloud,
        ))
        .expect("ok");
    assert_eq!(ids(&mc), ["dfw1", "sfo1"]);
    let svc = p
        .resolve_demand(&DemandRequirement::new(
            "mux",
            "multicloud",
            InventoryType::Service,
        ))
        .expect("ok");
    assert_eq!(ids(&svc), ["mux1"]);
}

#[test]
fn resolution_filters_within_the_pool_only() {
    let p = provider();
    let mut req = DemandRequirement::new("mux", "aai", InventoryType::Service);
    req.attributes.insert(
        "orchestration-status".into(),
        AttrFilter::Eq("Activated".into()),
    );
    let r = p.resolve_demand(&req).expect("ok");
    assert_eq!(ids(&r), ["mux2"]);
    // Cloud candidates are not part of a service requirement's pool.
    assert_eq!(r.removed.len(), 1);
    let first = r.removed.get(0).expect("one removal");
    assert_eq!(first.candidate_id().as_str(), "mux1");
    assert!(matches!(
        first.reason(),
        RemovalReason::MissingAttribute { .. }
    ));
}

#[test]
fn locations_groups_licenses_and_lookup() {
    let p = provider();
    let dyn_p: &dyn InventoryProvider = &p;
    assert_eq!(
        dyn_p.locate_host("USESTCDLLSTX55ANZ123"),
        Some(Coordinates {
            latitude: 32.89748,
            longitude: -97.040443
        })
    );
    assert_eq!(dyn_p.locate_host("nope"), None);
    assert_eq!(
        dyn_p.locate_clli("NYCMNY13").map(|c| c.latitude),
        Some(40.7128)
    );
    // Not in clli_locations: falls back to a candidate at that CLLI.
    assert_eq!(
        dyn_p.locate_clli("DLLSTX55").map(|c| c.longitude),
        Some(-97.0)
    );
    assert_eq!(dyn_p.locate_clli("XXXXXX00"), None);
    assert_eq!(
        dyn_p.group_members("g1"),
        vec![CandidateId::from("dfw1"), CandidateId::from("sfo1")]
    );
    assert!(dyn_p.group_members("g9").is_empty());
    assert_eq!(
        dyn_p.license("vg-router-os"),
        Some(LicenseInfo { available: 3 })
    );
    assert_eq!(dyn_p.license("other"), None);
    assert_eq!(
        dyn_p.candidate("mux1").map(|c| c.inventory_type),
        Some(InventoryType::Service)
    );
    assert_eq!(p.groups().len(), 2);
    assert_eq!(p.candidates().count(), 4);
    assert!(p.topology().is_none() && p.topology_file().is_none());
}

#[test]
fn from_candidates_rejects_duplicates_and_applies_zone_defaults() {
    let mut a = Candidate::new("a", InventoryType::Cloud);
    a.country = Some("USA".into());
    let b = Candidate::new("a", InventoryType::Cloud);
    let err = StaticProvider::from_candidates([a.clone(), b]);
    assert!(matches!(
        err,
        Err(InventoryError::DuplicateCandidate { .. })
    ));
    let p = StaticProvider::from_candidates([a]).expect("unique");
    assert_eq!(
        p.candidate("a")
            .and_then(|c| c.zone(crate::ZoneCategory::Country).map(str::to_owned)),
        Some("USA".to_owned())
    );
}

#[test]
fn resolutions_share_candidates_and_copy_only_to_fill_a_default_cost() {
    let mut inv = Inventory::default();
    let mut unpriced = Candidate::new("a", InventoryType::Cloud);
    // Given without zone defaults: the provider applies them once, up front.
    unpriced.region = Some("us-east".into());
    let mut priced = Candidate::new("b", InventoryType::Cloud);
    priced.cost = Some(3.0);
    for c in [unpriced, priced] {
        inv.candidates.insert(c.candidate_id.clone(), c);
    }
    let p = StaticProvider::new(inv);
    let req = DemandRequirement::new("vG", "aai", InventoryType::Cloud);
    let first = p.resolve_demand(&req).expect("ok");
    let second = p.resolve_demand(&req).expect("ok");
    for (x, y) in first.candidates.iter().zip(&second.candidates) {
        assert!(Arc::ptr_eq(x, y), "{} was copied", x.candidate_id);
    }
    assert_eq!(
        first.candidates[0].zone(crate::ZoneCategory::Region),
        Some("us-east")
    );
    let mut costly = req.clone();
    costly.default_cost = Some(9.0);
    let third = p.resolve_demand(&costly).expect("ok");
    assert_eq!(third.candidates[0].cost, Some(9.0));
    assert!(!Arc::ptr_eq(&third.candidates[0], &first.candidates[0]));
    assert!(Arc::ptr_eq(&third.candidates[1], &first.candidates[1]));
    // The provider's own record is untouched.
    assert_eq!(p.candidate("a").and_then(|c| c.cost), None);
    // Removed candidates are shared too.
    let mut excluding = req.clone();
    excluding.excluded_candidates = vec!["b".into()];
    let fourth = p.resolve_demand(&excluding).expect("ok");
    let removal = fourth.removed.get(0).expect("b removed");
    assert_eq!(removal.reason(), RemovalReason::Excluded);
    assert!(Arc::ptr_eq(removal.candidate(), &first.candidates[1]));
}

#[test]
fn indexed_resolution_judges_each_distinct_value_on_its_own() {
    // Values that share a key but differ (loosely equal or not) must not share a verdict.
    let values = [
        AttrValue::Float(1.0),
        AttrValue::Float(2.0),
        AttrValue::Int(1),
        AttrValue::Str("1".into()),
        AttrValue::Str("1.5".into()),
        AttrValue::Float(1.5),
        AttrValue::List(vec![AttrValue::Float(2.0), AttrValue::Float(1.0)]),
        AttrValue::List(vec![AttrValue::Float(2.0)]),
        AttrValue::Bool(true),
    ];
    let candidates = values.iter().enumerate().map(|(i, v)| {
        let mut c = Candidate::new(format!("c{i}"), InventoryType::Cloud);
        c.attributes.insert("k".into(), v.clone());
        // The typed field is read only where the map lacks the key.
        c.cloud_owner = Some(if i % 2 == 0 { "1" } else { "2" }.into());
        c
    });
    let p = StaticProvider::from_candidates(candidates).expect("unique");
    let mut req = DemandRequirement::new("d", "aai", InventoryType::Cloud);
    req.attributes
        .insert("k".into(), AttrFilter::Eq(AttrValue::Int(1)));
    let r = p.resolve_demand(&req).expect("ok");
    assert_eq!(ids(&r), ["c0", "c2", "c3", "c6"]);
    req.attributes.clear();
    req.attributes.insert(
        "cloud-owner".into(),
        AttrFilter::Not(vec![AttrValue::Float(2.0)]),
    );
    let r = p.resolve_demand(&req).expect("ok");
    assert_eq!(ids(&r), ["c0", "c2", "c4", "c6", "c8"]);
}

#[test]
fn every_type_is_served_and_a_type_without_candidates_resolves_empty() {
    let p = StaticProvider::parse(
        "candidates:\n  - {candidate_id: n1, inventory_type: nsi, inventory_provider: aai, attributes: {instance_name: a}}\n  - {candidate_id: t1, inventory_type: nst}\n",
    )
    .expect("valid");
    // Every HAS inventory type is served under every name: a type without candidates is an
    // empty set, not an unconfigured provider.
    for ty in InventoryType::ALL {
        assert!(p.serves("aai", ty) && p.serves("sdc", ty), "{ty}");
    }
    let resolve = |provider: &str, ty| {
        let r = p
            .resolve_demand(&DemandRequirement::new("slice", provider, ty))
            .expect("resolves");
        assert!(r.removed.is_empty());
        ids(&r)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<String>>()
    };
    assert!(resolve("sdc", InventoryType::Nsi).is_empty());
    assert!(resolve("aai", InventoryType::Cloud).is_empty());
    assert!(resolve("aai", InventoryType::Nssi).is_empty());
    // A candidate naming no provider is served under every name.
    assert_eq!(resolve("sdc", InventoryType::Nst), vec!["t1"]);
    let req = DemandRequirement::new("slice", "aai", InventoryType::Nsi);
    let r = p.resolve_demand(&req).expect("resolves");
    assert_eq!(ids(&r), vec!["n1"]);
    assert_eq!(
        r.candidates[0]
            .attribute("instance_name")
            .map(|v| v.into_owned()),
        Some(AttrValue::Str("a".into()))
    );
}
