//! `cloud`: candidates, pools and the catalog from a snapshot of recorded answers.

use super::*;
use crate::wire::tests::fixture;
use crate::wire::{self, parse};

fn state(name: &str) -> ProviderState {
    let rps: wire::ResourceProviders = parse("rps", fixture("resource-providers")).unwrap();
    let rp = rps
        .resource_providers
        .into_iter()
        .find(|r| r.name == name)
        .unwrap();
    let inv: wire::Inventories = parse("inv", fixture(&format!("{name}-inventories"))).unwrap();
    let alloc: wire::ProviderAllocations =
        parse("alloc", fixture(&format!("{name}-allocations"))).unwrap();
    let traits: wire::Traits = parse("traits", fixture(&format!("{name}-traits"))).unwrap();
    let aggs: wire::Aggregates = parse("aggs", fixture(&format!("{name}-aggregates"))).unwrap();
    ProviderState {
        provider: rp,
        inventories: inv.inventories,
        allocations: alloc.allocations,
        traits: traits.traits,
        aggregates: aggs.aggregates,
    }
}

pub(crate) fn snapshot() -> Snapshot {
    let flavors: wire::Flavors = parse("flavors", fixture("flavors")).unwrap();
    let zones: wire::ZonesDetail = parse("zones", fixture("zones")).unwrap();
    let aggs: wire::HostAggregates = parse("aggs", fixture("aggregates")).unwrap();
    Snapshot {
        region: Some("RegionOne".into()),
        providers: vec![state("cpu1"), state("cpu2")],
        flavors: flavors.flavors,
        host_zones: zones.compute_hosts(),
        aggregates: aggs.aggregates,
        berth_servers: BTreeSet::new(),
    }
}

fn naming() -> Naming {
    Naming {
        provider: "openstack".into(),
        cloud_owner: Some("lab".into()),
        endpoint: Some("http://127.0.0.1:25000/v3".into()),
        tenant: Some("admin".into()),
    }
}

#[test]
fn capacity_is_net_of_reserved_times_ratio_less_others() {
    let snap = snapshot();
    let c = snap.candidates(&naming());
    let ids: Vec<&str> = c.iter().map(|c| c.candidate_id.as_str()).collect();
    assert_eq!(ids, ["cpu1", "cpu2"]);
    // cpu1: 8 vCPU * 4.0, 16384 - 512 MiB, 200 GiB; nothing allocated.
    assert_eq!(
        c[0].capacity,
        BTreeMap::from([
            ("disk_gib".into(), 200),
            ("ram_mib".into(), 15872),
            ("vcpu".into(), 32)
        ])
    );
    // cpu2: 4 * 4.0 = 16 vCPU, 8192 - 512 MiB, 100 GiB, less one m1.tiny of another's.
    assert_eq!(
        c[1].capacity,
        BTreeMap::from([
            ("disk_gib".into(), 99),
            ("ram_mib".into(), 7168),
            ("vcpu".into(), 15)
        ])
    );
    // The same server booted by Berth is Berth's own: the calendar has it already.
    let mut mine = snap.clone();
    mine.berth_servers
        .insert("69c0c34e-7318-436a-8802-36a0ed95b13f".into());
    assert_eq!(mine.candidates(&naming())[1].capacity["vcpu"], 16);
}

#[test]
fn zones_aggregates_traits_and_units() {
    let c = snapshot().candidates(&naming());
    let cpu1 = &c[0];
    assert_eq!(cpu1.zones[&ZoneCategory::Disaster], "az1");
    assert_eq!(c[1].zones[&ZoneCategory::Disaster], "nova");
    assert_eq!(cpu1.groups, ["fast"]);
    assert_eq!(
        cpu1.attributes["aggregate.ssd"],
        AttrValue::Str("true".into())
    );
    assert_eq!(cpu1.attributes["vcpu.max_unit"], AttrValue::Int(8));
    assert_eq!(cpu1.attributes["ram_mib.step_size"], AttrValue::Int(1));
    assert_eq!(cpu1.inventory_provider.as_deref(), Some("openstack"));
    assert_eq!(cpu1.region.as_deref(), Some("RegionOne"));
    let AttrValue::List(traits) = &cpu1.attributes["traits"] else {
        panic!("traits are a list");
    };
    assert!(traits.contains(&AttrValue::Str("COMPUTE_NODE".into())));
}

#[test]
fn flavors_fit_each_host_and_carry_hpa() {
    let c = snapshot().candidates(&naming());
    let names = |i: usize| -> Vec<String> { c[i].flavors.iter().map(|f| f.name.clone()).collect() };
    // m1.xlarge (8 vCPU, 16384 MiB) exceeds cpu2's max_unit (4 vCPU, 8192 MiB).
    assert!(names(0).contains(&"m1.xlarge".to_owned()));
    assert!(!names(1).contains(&"m1.xlarge".to_owned()));
    assert!(names(1).contains(&"m1.large".to_owned()));
    let pinned = c[0]
        .flavors
        .iter()
        .find(|f| f.name == "hpa.pinned")
        .unwrap();
    assert_eq!(pinned.size()["vcpu"], 2);
    assert_eq!(pinned.size()["ram_mib"], 1024);
    assert_eq!(
        pinned
            .attribute("cpuPinning", "logicalCpuPinningPolicy")
            .unwrap()
            .value,
        AttrValue::Str("dedicated".into())
    );
    assert_eq!(
        pinned
            .attribute("hugePages", "memoryPageSize")
            .unwrap()
            .value,
        AttrValue::Str("large".into())
    );
}

#[test]
fn required_traits_and_aggregate_specs_choose_hosts() {
    let mut snap = snapshot();
    let mut f = snap.flavors[0].clone();
    f.name = "ssd.only".into();
    f.extra_specs = [(
        "aggregate_instance_extra_specs:ssd".to_owned(),
        "true".to_owned(),
    )]
    .into();
    let mut g = snap.flavors[0].clone();
    g.name = "needs.gpu".into();
    g.extra_specs = [("trait:CUSTOM_GPU".to_owned(), "required".to_owned())].into();
    snap.flavors.extend([f, g]);
    snap.providers[1].traits.push("CUSTOM_GPU".into());
    let c = snap.candidates(&naming());
    let has = |i: usize, n: &str| c[i].flavors.iter().any(|f| f.name == n);
    assert!(has(0, "ssd.only") && !has(1, "ssd.only"));
    assert!(!has(0, "needs.gpu") && has(1, "needs.gpu"));
}

#[test]
fn pools_catalog_and_fingerprint() {
    let snap = snapshot();
    let pools = snap.pools(&naming());
    assert_eq!(pools.provider, "openstack");
    assert_eq!(pools.pools.keys().collect::<Vec<_>>(), ["cpu1", "cpu2"]);
    let cat = snap.catalog(&naming());
    let tiny = cat.flavors.iter().find(|f| f.name == "m1.tiny").unwrap();
    assert_eq!((tiny.vcpus, tiny.ram, tiny.disk), (1, 512, 1));
    assert_eq!(cat.provider_type, "openstack");
    assert_eq!(
        snap.fingerprint(&naming()),
        snapshot().fingerprint(&naming())
    );
    let mut other = snap.clone();
    other.providers[0]
        .inventories
        .get_mut("VCPU")
        .unwrap()
        .reserved = 2;
    assert_ne!(other.fingerprint(&naming()), snap.fingerprint(&naming()));
    assert_eq!(other.candidates(&naming())[0].capacity["vcpu"], 24);
}

#[test]
fn page_sizes() {
    assert_eq!(page_size("1GB"), (AttrValue::Int(1), Some("GB")));
    assert_eq!(page_size("2048"), (AttrValue::Int(2048), Some("KB")));
    assert_eq!(page_size("2MB"), (AttrValue::Int(2), Some("MB")));
    assert_eq!(page_size("large"), (AttrValue::Str("large".into()), None));
}
