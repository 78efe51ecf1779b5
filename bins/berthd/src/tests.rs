//! Tests of the daemon's wiring helpers: the inventory's provider and its flavor catalog.

use super::*;

#[test]
fn the_inventory_provider_offers_every_flavor_with_basic_capabilities_once() {
    let inv = Inventory::parse(
        "
candidates:
  - candidate_id: a
    inventory_type: cloud
    flavors:
      - id: f1
        name: small
        capabilities:
          - feature: basicCapabilities
            attributes: {numVirtualCpu: 2, virtualMemSize: {value: 4, unit: GB}, diskSize: {value: 40, unit: GB}}
      - id: f2
        name: no-basics
        capabilities:
          - feature: cpuPinning
            attributes: {logicalCpuPinningPolicy: dedicated}
  - candidate_id: b
    inventory_type: cloud
    flavors:
      - id: f9
        name: small
        capabilities:
          - feature: basicCapabilities
            attributes: {numVirtualCpu: 64, virtualMemSize: 1}
      - id: f3
        name: tiny
        capabilities:
          - feature: basicCapabilities
            attributes: {numVirtualCpu: \"1\", virtualMemSize: {value: 512, unit: MB}}
",
    )
    .unwrap();
    let p = inventory_provider(&inv);
    assert_eq!(p.id, INVENTORY_PROVIDER);
    let got: Vec<(String, String, u64, u64, u64)> = p
        .flavors
        .into_iter()
        .map(|f| (f.id, f.name, f.vcpus, f.ram, f.disk))
        .collect();
    assert_eq!(
        got,
        vec![
            ("f1".into(), "small".into(), 2, 4096, 40),
            ("f3".into(), "tiny".into(), 1, 512, 0),
        ]
    );
}

#[test]
fn api_auth_splits_read_only_credentials_and_refuses_open_non_loopback() {
    let cfg = Config::load(None, |k| match k {
        "BERTH_TOKENS" => Some("t1".to_owned()),
        "BERTH_READ_TOKENS" => Some("r1,r2".to_owned()),
        "BERTH_BASIC_AUTH" => Some("a:b".to_owned()),
        "BERTH_READ_BASIC_AUTH" => Some("ro:pw".to_owned()),
        _ => None,
    })
    .unwrap();
    let auth = api_auth(&cfg).unwrap();
    assert!(!auth.disabled);
    assert_eq!(auth.tokens, ["t1"]);
    assert_eq!(auth.read_only_tokens, ["r1", "r2"]);
    assert_eq!(auth.basic, [("a".to_owned(), "b".to_owned())]);
    assert_eq!(auth.read_only_basic, [("ro".to_owned(), "pw".to_owned())]);
    assert!(api_auth(&Config::default()).unwrap().disabled);
    let open = Config {
        listen: "0.0.0.0:8091".parse().unwrap(),
        ..Config::default()
    };
    assert!(api_auth(&open).is_err());
}

#[test]
fn the_console_places_on_the_bundled_room_unless_a_topology_is_configured() {
    let site = load_topology(&Config::default()).unwrap();
    assert_eq!(site.source, "bundled example room");
    assert_eq!(site.topology.leaf_count(), 12);
    assert!(site.example.contains("OS::LLMNAntiCoLocation"));

    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("dc.yaml");
    std::fs::write(
        &small,
        include_str!("../../../examples/topology/small-dc.yaml"),
    )
    .unwrap();
    let cfg = Config::load(None, |k| {
        (k == "BERTH_TOPOLOGY").then(|| small.display().to_string())
    })
    .unwrap();
    let site = load_topology(&cfg).unwrap();
    assert_eq!(site.source, small.display().to_string());
    assert_eq!(site.topology.leaf_count(), 16);

    let missing = dir.path().join("missing.yaml");
    let cfg = Config {
        topology: Some(missing.clone()),
        ..Config::default()
    };
    let e = format!("{:#}", load_topology(&cfg).unwrap_err());
    assert!(
        e.starts_with(&format!("cannot read topology {}", missing.display())),
        "{e}"
    );
    std::fs::write(&small, "levels: [a]\nlocation: {id: x, level: nope}\n").unwrap();
    let cfg = Config {
        topology: Some(small.clone()),
        ..Config::default()
    };
    let e = format!("{:#}", load_topology(&cfg).unwrap_err());
    assert!(
        e.starts_with(&format!("invalid topology {}: ", small.display())),
        "{e}"
    );
}
