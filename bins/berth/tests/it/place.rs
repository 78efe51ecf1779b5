//! `berth place` on seed 004's two use cases, checked independently of the placer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn berth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_berth"))
        .args(args)
        .output()
        .expect("run berth")
}

fn example(name: &str) -> String {
    let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/heat")
        .join(name);
    p.to_str().expect("utf-8 path").to_owned()
}

fn placements(out: &Output) -> BTreeMap<String, String> {
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json output");
    serde_json::from_value(json["placements"].clone()).expect("placements map")
}

#[test]
fn ha_clusters_respect_llmn_rack_pm_2() {
    let out = berth(&[
        "place",
        &example("ha-clusters.yaml"),
        "--topology",
        &example("room-rack-pm.yaml"),
        "--time-limit",
        "1",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let placed = placements(&out);
    assert_eq!(placed.len(), 12);
    // Leaves are named `rackN-pmM`: the rack is the prefix. For each cluster of 4 app servers,
    // LLMN (rack, PM, 2): at least 2 racks, at most ceil(4/2) = 2 per rack, no two on one PM.
    for cluster in 1..=3 {
        let leaves: Vec<&String> = (1..=4)
            .map(|i| &placed[&format!("M{cluster}{i}")])
            .collect();
        let pms: BTreeSet<&String> = leaves.iter().copied().collect();
        assert_eq!(pms.len(), 4, "cluster {cluster} shares a PM: {leaves:?}");
        let mut per_rack: BTreeMap<&str, usize> = BTreeMap::new();
        for leaf in &leaves {
            let rack = leaf.split('-').next().expect("rack prefix");
            *per_rack.entry(rack).or_default() += 1;
        }
        assert!(
            per_rack.len() >= 2,
            "cluster {cluster} on one rack: {leaves:?}"
        );
        assert!(
            per_rack.values().all(|&n| n <= 2),
            "cluster {cluster}: {per_rack:?}"
        );
    }
}

#[test]
fn hadoop_volumes_sit_on_their_datanodes_and_render_svg() {
    let dir = tempfile::tempdir().expect("tempdir");
    let svg = dir.path().join("plan.svg");
    let out = berth(&[
        "place",
        &example("hadoop-5vm.json"),
        "--topology",
        &example("hadoop-topology.yaml"),
        "--time-limit",
        "1",
        "--render",
        svg.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let placed = placements(&out);
    for i in 0..4 {
        let volume = &placed[&format!("Storage volume used by datanode server_{i}")];
        // Hop count 0: the volume is on the leaf of the datanode it is attached to.
        let attached_to = placed
            .iter()
            .filter(|(name, _)| name.starts_with("WCA4-hadoop-datanode-"))
            .any(|(_, leaf)| leaf == volume);
        assert!(
            attached_to,
            "volume {i} on {volume}, no datanode there: {placed:?}"
        );
    }
    let datanodes: BTreeSet<&String> = placed
        .iter()
        .filter(|(name, _)| name.starts_with("WCA4-hadoop-datanode-"))
        .map(|(_, leaf)| leaf)
        .collect();
    assert_eq!(
        datanodes.len(),
        4,
        "datanodes are anti-collocated: {placed:?}"
    );
    let text = std::fs::read_to_string(&svg).expect("svg written");
    assert!(
        text.starts_with("<svg") || text.starts_with("<?xml"),
        "{}",
        &text[..text.len().min(80)]
    );
    assert!(
        text.contains("WCA4-hadoop-datanode-1"),
        "resources are labelled in the diagram"
    );
}

#[test]
fn broken_template_exits_1_and_missing_file_exits_2() {
    let out = berth(&[
        "place",
        &example("broken.yaml"),
        "--topology",
        &example("room-rack-pm.yaml"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let out = berth(&[
        "place",
        "/nonexistent.yaml",
        "--topology",
        &example("room-rack-pm.yaml"),
    ]);
    assert_eq!(out.status.code(), Some(2));
}
