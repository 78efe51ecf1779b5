//! Integration tests: the shipped example inventory loads and serves the vCPE demands.

use std::collections::{BTreeMap, BTreeSet};

use berth_inventory::{
    AttrFilter, AttrValue, CapacityController, DemandRequirement, InventoryProvider, InventoryType,
    ReservationItem, ServiceController, StaticProvider, ZoneCategory,
};

const EXAMPLE: &str = include_str!("../../../../examples/inventory.yaml");

fn example() -> StaticProvider {
    StaticProvider::parse(EXAMPLE).unwrap_or_else(|e| panic!("example inventory invalid: {e:?}"))
}

#[test]
fn example_loads_without_warnings_and_counts_match() {
    let p = example();
    assert!(
        p.inventory().warnings.is_empty(),
        "{:?}",
        p.inventory().warnings
    );
    let clouds = p
        .candidates()
        .filter(|c| c.inventory_type == InventoryType::Cloud)
        .count();
    let services = p
        .candidates()
        .filter(|c| c.inventory_type == InventoryType::Service)
        .count();
    assert_eq!((clouds, services), (43, 10));
    let owners: BTreeSet<&str> = p
        .candidates()
        .filter_map(|c| c.cloud_owner.as_deref())
        .collect();
    assert_eq!(
        owners.into_iter().collect::<Vec<_>>(),
        ["CloudOwner", "att-aic", "aws", "azure", "gcp"]
    );
    let countries: BTreeSet<&str> = p
        .candidates()
        .filter_map(|c| c.country.as_deref())
        .collect();
    assert!(countries.contains("USA") && countries.contains("DEU") && countries.len() >= 9);
}

#[test]
fn every_cloud_region_has_every_zone_category_and_coordinates() {
    let p = example();
    for c in p.candidates() {
        assert!(
            c.coordinates().is_some(),
            "{} has no coordinates",
            c.candidate_id
        );
        if c.inventory_type == InventoryType::Cloud {
            for cat in ZoneCategory::ALL {
                assert!(
                    c.zone(cat).is_some(),
                    "{} lacks a {cat} zone",
                    c.candidate_id
                );
            }
            assert!(!c.flavors.is_empty() && !c.capacity.is_empty());
        }
    }
    // Categories that are spread across several zones, so diversity constraints bite.
    for cat in [
        ZoneCategory::Disaster,
        ZoneCategory::Time,
        ZoneCategory::Maintenance,
    ] {
        let zones: BTreeSet<&str> = p.candidates().filter_map(|c| c.zone(cat)).collect();
        assert!(zones.len() >= 5, "{cat}: {zones:?}");
    }
    assert!(
        p.candidates()
            .any(|c| c.zone(ZoneCategory::Disaster) == Some("us-gulf"))
    );
}

#[test]
fn hpa_flavors_are_present() {
    let p = example();
    let features: BTreeSet<&str> = p
        .candidates()
        .flat_map(|c| &c.flavors)
        .flat_map(|f| &f.capabilities)
        .map(|cap| cap.feature.as_str())
        .collect();
    for f in [
        "basicCapabilities",
        "sriovNICNetwork",
        "cpuPinning",
        "hugePages",
    ] {
        assert!(features.contains(f), "missing {f}");
    }
}

fn mux_requirement() -> DemandRequirement {
    // Seed 000's vGMuxInfra demand.
    let mut r = DemandRequirement::new("vGMuxInfra", "aai", InventoryType::Service);
    r.service_type = vec!["vG_MuxInfra".into()];
    for (k, v) in [
        ("equipment_type", AttrValue::from("vG_Mux")),
        ("customer_id", "some_company".into()),
        ("orchestration-status", "Activated".into()),
        ("model-id", "174e371e-f514-4913-a93d-ed7e7f8fbdca".into()),
        ("model-version", AttrValue::Float(2.0)),
    ] {
        r.attributes.insert(k.into(), AttrFilter::Eq(v));
    }
    r
}

#[test]
fn seed_vgmuxinfra_demand_resolves_with_triage() {
    let p = example();
    let r = p.resolve_demand(&mux_requirement()).expect("resolves");
    assert_eq!(r.candidates.len(), 6);
    let why: Vec<String> = r
        .removed
        .iter()
        .map(|r| format!("{}: {}", r.candidate_id(), r.reason()))
        .collect();
    // The vGMuxInfra at lax1 is being deleted; the three vG instances are another type.
    assert_eq!(why.len(), 4, "{why:?}");
    assert!(
        why.iter()
            .any(|w| w.contains("orchestration-status` is PendingDelete"))
    );
    assert_eq!(
        why.iter()
            .filter(|w| w.contains("service type vG not in"))
            .count(),
        3
    );
}

#[test]
fn vg_demand_cloud_side_and_groups_pair_mux_with_regions() {
    let p = example();
    let clouds = p
        .resolve_demand(&DemandRequirement::new("vG", "aai", InventoryType::Cloud))
        .expect("resolves");
    // gcp regions are served only under `multicloud`.
    assert_eq!(clouds.candidates.len(), 41);
    let muxes = p.resolve_demand(&mux_requirement()).expect("resolves");
    for mux in &muxes.candidates {
        let group = mux.groups.first().expect("every mux is grouped");
        let members = p.group_members(group);
        assert!(members.len() >= 3, "{group}: {members:?}");
        assert!(members.contains(&mux.candidate_id));
    }
}

#[test]
fn named_locations_and_licenses() {
    let p = example();
    let dallas = p
        .locate_host("USESTCDLLSTX55ANZ123")
        .expect("customer edge");
    assert!((dallas.latitude - 32.89748).abs() < 1e-9);
    assert!(p.locate_clli("DLLSTX55").is_some());
    assert!(p.locate_clli("FRNKDE01").is_some_and(|c| c.longitude > 8.0));
    assert_eq!(p.license("dpi-engine").map(|l| l.available), Some(0));
    assert!(p.license("vg-router-os").is_some_and(|l| l.available > 0));
}

#[test]
fn capacity_controller_over_example_rolls_back_batches() {
    let p = example();
    let ctl = CapacityController::new("capacity", p.candidates());
    let before = ctl.free_capacity("okc1").expect("tracked");
    let want = |v: i64| BTreeMap::from([("vcpu".to_owned(), v)]);
    let items = [
        ReservationItem {
            demand: "vGMuxInfra".into(),
            candidate_id: "dfw1".into(),
            request: want(16),
        },
        ReservationItem {
            demand: "vG".into(),
            candidate_id: "okc1".into(),
            request: want(before["vcpu"] + 1),
        },
    ];
    assert!(ctl.reserve(&items).is_err());
    assert_eq!(ctl.free_capacity("okc1"), Some(before));
    assert_eq!(ctl.free_capacity("dfw1").map(|m| m["vcpu"]), Some(4096));
}
