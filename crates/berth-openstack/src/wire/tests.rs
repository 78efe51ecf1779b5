//! `wire` on answers recorded from Keystone 30, Placement 16 and Nova 34 (`fixtures/`).

use super::*;

pub(crate) fn fixture(name: &str) -> &'static str {
    match name {
        "keystone-token" => include_str!("../../fixtures/keystone-token.json"),
        "resource-providers" => include_str!("../../fixtures/placement-resource-providers.json"),
        "cpu1-inventories" => include_str!("../../fixtures/placement-cpu1-inventories.json"),
        "cpu2-inventories" => include_str!("../../fixtures/placement-cpu2-inventories.json"),
        "cpu1-allocations" => include_str!("../../fixtures/placement-cpu1-allocations.json"),
        "cpu2-allocations" => include_str!("../../fixtures/placement-cpu2-allocations.json"),
        "cpu1-traits" => include_str!("../../fixtures/placement-cpu1-traits.json"),
        "cpu2-traits" => include_str!("../../fixtures/placement-cpu2-traits.json"),
        "cpu1-aggregates" => include_str!("../../fixtures/placement-cpu1-aggregates.json"),
        "cpu2-aggregates" => include_str!("../../fixtures/placement-cpu2-aggregates.json"),
        "consumer-allocations" => {
            include_str!("../../fixtures/placement-consumer-allocations.json")
        }
        "flavors" => include_str!("../../fixtures/nova-flavors.json"),
        "zones" => include_str!("../../fixtures/nova-availability-zones.json"),
        "aggregates" => include_str!("../../fixtures/nova-aggregates.json"),
        "server" => include_str!("../../fixtures/nova-server.json"),
        "servers" => include_str!("../../fixtures/nova-servers.json"),
        other => panic!("no fixture {other}"),
    }
}

#[test]
fn token_and_catalog() {
    let t: TokenBody = parse("keystone token", fixture("keystone-token")).unwrap();
    assert_eq!(t.token.user.name, "admin");
    assert_eq!(t.token.project.as_ref().unwrap().name, "admin");
    assert_eq!(t.token.expires_at.to_rfc3339(), "2026-12-02T05:20:30+00:00");
    let placement = endpoint(&t.token.catalog, "placement", "public", Some("RegionOne")).unwrap();
    assert_eq!(placement, "http://127.0.0.1:25001");
    let compute = endpoint(&t.token.catalog, "compute", "internal", None).unwrap();
    assert_eq!(compute, "http://127.0.0.1:25002/v2.1");
    let e = endpoint(&t.token.catalog, "compute", "public", Some("RegionTwo")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the service catalog has no public endpoint of `compute` in region `RegionTwo`"
    );
}

#[test]
fn placement_records() {
    let rps: ResourceProviders = parse(
        "placement resource providers",
        fixture("resource-providers"),
    )
    .unwrap();
    let names: Vec<&str> = rps
        .resource_providers
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(names, ["cpu2", "cpu1"]);
    let inv: Inventories = parse("placement inventories", fixture("cpu2-inventories")).unwrap();
    let vcpu = inv.inventories["VCPU"];
    assert_eq!((vcpu.total, vcpu.reserved, vcpu.max_unit), (4, 0, Some(4)));
    assert_eq!(vcpu.capacity(), 16);
    assert_eq!(inv.inventories["MEMORY_MB"].capacity(), 8192 - 512);
    let a: ProviderAllocations =
        parse("placement allocations", fixture("cpu2-allocations")).unwrap();
    let held = &a.allocations["69c0c34e-7318-436a-8802-36a0ed95b13f"];
    assert_eq!(held.resources["MEMORY_MB"], 512);
    let t: Traits = parse("placement traits", fixture("cpu1-traits")).unwrap();
    assert!(t.traits.iter().any(|t| t == "COMPUTE_NODE"));
    let g: Aggregates = parse("placement aggregates", fixture("cpu1-aggregates")).unwrap();
    assert_eq!(g.aggregates, ["38729ec6-9d31-408c-8c74-853bd5b2116f"]);
    let c: ConsumerAllocations = parse(
        "placement consumer allocations",
        fixture("consumer-allocations"),
    )
    .unwrap();
    assert_eq!(c.consumer_generation, Some(1));
    assert_eq!(
        c.allocations["02068417-463d-4a8b-837e-31f1264ccc4a"].generation,
        Some(3)
    );
}

#[test]
fn compute_records() {
    let f: Flavors = parse("compute flavors", fixture("flavors")).unwrap();
    let pinned = f.flavors.iter().find(|f| f.name == "hpa.pinned").unwrap();
    assert_eq!(pinned.extra_specs["hw:cpu_policy"], "dedicated");
    assert_eq!((pinned.vcpus, pinned.ram, pinned.disk), (2, 1024, 5));
    let z: ZonesDetail = parse("compute availability zones", fixture("zones")).unwrap();
    let hosts = z.compute_hosts();
    assert_eq!(hosts["cpu1"], "az1");
    assert_eq!(hosts["cpu2"], "nova");
    assert!(!hosts.contains_key("controller"), "{hosts:?}");
    let g: HostAggregates = parse("compute aggregates", fixture("aggregates")).unwrap();
    assert_eq!(g.aggregates[0].hosts, ["cpu1"]);
    assert_eq!(g.aggregates[0].metadata["ssd"], "true");
    let s: ServerBody = parse("compute server", fixture("server")).unwrap();
    assert_eq!(s.server.status.as_deref(), Some("ACTIVE"));
    assert_eq!(s.server.host.as_deref(), Some("cpu2"));
    let list: ServersBody = parse("compute servers", fixture("servers")).unwrap();
    assert_eq!(list.servers.len(), 1);
}

#[test]
fn a_wrong_shape_names_its_field_path() {
    let text =
        r#"{"resource_provider_generation": 1, "inventories": {"VCPU": {"total": "eight"}}}"#;
    let e = parse::<Inventories>("placement inventories", text).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with("unexpected placement inventories answer at `inventories.VCPU.total`: invalid type: string \"eight\""),
        "{msg}"
    );
}

#[test]
fn error_bodies() {
    let placement = r#"{"errors": [{"status": 409, "title": "Conflict", "detail": "There was a conflict when trying to complete your request.\n\n consumer generation conflict - expected null but got 1  ", "code": "placement.concurrent_update", "request_id": "req-1"}]}"#;
    let (m, c) = error_message(placement);
    assert_eq!(
        m,
        "There was a conflict when trying to complete your request. consumer generation conflict - expected null but got 1"
    );
    assert_eq!(c.as_deref(), Some("placement.concurrent_update"));
    let nova = r#"{"badRequest": {"code": 400, "message": "Invalid flavorRef provided."}}"#;
    assert_eq!(error_message(nova).0, "Invalid flavorRef provided.");
    assert_eq!(error_message("").0, "no body");
}
