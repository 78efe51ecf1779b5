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

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.to_str().expect("utf-8 path").to_owned()
}

fn four_vms(policy: &str) -> String {
    let vms: String = (1..=4)
        .map(|i| format!("  V{i}: {{type: OS::Nova::Server, properties: {{flavor: m1.large}}}}\n"))
        .collect();
    format!(
        "heat_template_version: 2013-05-23\nresources:\n{vms}groups: {{id: g, members: [{{get_resource: V1}}, {{get_resource: V2}}, {{get_resource: V3}}, {{get_resource: V4}}], policies: [{policy}]}}\n"
    )
}

/// Seed 004's LLMN with N = 4 over the room's 3 racks: no placement, and the answer proves it
/// by counting, naming the policy; no lower bound sentinel, no "unsolved".
#[test]
fn llmn_over_too_few_racks_ends_with_a_proof_naming_the_policy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = write(
        dir.path(),
        "llmn.yaml",
        &four_vms(
            "{type: OS::LLMNAntiCoLocation, properties: {l1: rack, l2: PM, n: 4}, metadata: {description: four racks}}",
        ),
    );
    let topo = example("room-rack-pm.yaml");
    let out = berth(&["place", &t, "--topology", &topo, "--time-limit", "5"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["status"], "infeasible", "{v}");
    let e = &v["explanation"];
    assert_eq!(e["proven"], true);
    assert_eq!(e["reasons"][0]["type"], "OS::LLMNAntiCoLocation");
    assert_eq!(e["reasons"][0]["policy"], "four racks");
    assert_eq!(
        e["reasons"][0]["message"],
        "its 4 members need at least 4 rack places; only 3 can hold one"
    );
    assert_eq!(v["stats"]["lower_bound_hosts"], 1);
    let out = berth(&["place", &t, "--topology", &topo, "-o", "table"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("status infeasible (proven)"), "{text}");
    assert!(
        text.contains("proof: OS::LLMNAntiCoLocation four racks (groups.policies[0])"),
        "{text}"
    );
}

/// Unplaced items name what removes each leaf: the policy, or the capacity.
#[test]
fn an_unplaced_item_names_the_policy_or_capacity_removing_each_leaf() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Two racks of one PM each: 4 VMs apart at rack level cannot all be placed.
    let topo = write(
        dir.path(),
        "topo.yaml",
        "levels: [room, rack, PM]\nfiner_than: [[rack, room], [PM, rack]]\ndimensions: [vcpu]\nflavors: {m1.large: {vcpu: 4}}\nlocation: {id: r, level: room, children: [{id: k1, level: rack, children: [{id: p1, level: PM, capacity: {vcpu: 16}}]}, {id: k2, level: rack, children: [{id: p2, level: PM, capacity: {vcpu: 4}}]}]}\nnetwork: [{id: sw}, {leaf: p1, parent: sw}, {leaf: p2, parent: sw}]\n",
    );
    let t = write(
        dir.path(),
        "apart.yaml",
        &four_vms(
            "{type: OS::AntiCoLocation, properties: {level: rack}, metadata: {description: apart}}",
        ),
    );
    let out = berth(&["place", &t, "--topology", &topo, "--time-limit", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["status"], "infeasible", "{v}");
    let e = &v["explanation"];
    assert_eq!(e["proven"], true);
    assert_eq!(e["reasons"][0]["type"], "OS::AntiCoLocation");
    let triage = e["triage"].as_array().expect("triage");
    assert_eq!(triage.len(), 2, "{v}");
    for t in triage {
        assert_eq!(t["leaves"], 2);
        let removed = t["removed"].as_object().expect("removed");
        let total: u64 = removed.values().filter_map(serde_json::Value::as_u64).sum();
        assert_eq!(total, 2, "{t}");
        assert!(removed.contains_key("OS::AntiCoLocation apart"), "{t}");
    }
}

/// A placement using as many hosts as the lower bound is optimal, whatever the time limit.
#[test]
fn a_placement_at_the_lower_bound_is_marked_optimal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = write(
        dir.path(),
        "together.yaml",
        &four_vms("{type: OS::CoLocation, properties: {level: rack}}"),
    );
    let out = berth(&[
        "place",
        &t,
        "--topology",
        &example("room-rack-pm.yaml"),
        "--time-limit",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        (v["hosts_used"].as_u64(), v["optimal"].as_bool()),
        (Some(1), Some(true)),
        "{v}"
    );
    assert_eq!(v["stats"]["lower_bound_hosts"], 1);
}

#[test]
fn a_misspelt_server_type_in_a_policy_group_is_refused_not_left_out() {
    let text = std::fs::read_to_string(example("ha-clusters.yaml"))
        .expect("example")
        .replace(
            "M34: {type: OS::Nova::Server",
            "M34: {type: OS::Nova::Servr",
        );
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("ha-servr.yaml");
    std::fs::write(&file, text).expect("write template");
    let out = berth(&[
        "place",
        file.to_str().expect("utf-8 path"),
        "--topology",
        &example("room-rack-pm.yaml"),
        "--time-limit",
        "1",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "no placement is printed");
    assert!(
        stderr.contains("resource `M34` has unknown type `OS::Nova::Servr`")
            && stderr.contains("did you mean `OS::Nova::Server`?")
            && stderr.contains("ha-servr.yaml:22:15"),
        "{stderr}"
    );
}

/// Issue 51.8: LLMN with fewer members than N, and an `l2` coarser than `l1`, are warnings
/// at the policy's line:column saying what placement does with them.
#[test]
fn llmn_with_n_beyond_its_members_or_swapped_levels_is_warned() {
    let text = std::fs::read_to_string(example("ha-clusters.yaml")).expect("example");
    let parts: Vec<&str> = text.split("{l1: rack, l2: PM, n: 2}").collect();
    assert_eq!(parts.len(), 4);
    let text = format!(
        "{}{{l1: PM, l2: rack, n: 2}}{}{{l1: rack, l2: PM, n: 5}}{}{{l1: rack, l2: PM, n: 2}}{}",
        parts[0], parts[1], parts[2], parts[3]
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("ha-llmn.yaml");
    std::fs::write(&file, text).expect("write template");
    let out = berth(&[
        "place",
        file.to_str().expect("utf-8 path"),
        "--topology",
        &example("room-rack-pm.yaml"),
        "--time-limit",
        "1",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for part in [
        "warning: `l2` level `rack` is not finer than `l1` level `PM`",
        "ha-llmn.yaml:29:11",
        "warning: n = 5 but the group has 4 members; at most 4 `rack`s can hold them, so n is taken as 4",
        "ha-llmn.yaml:33:11",
    ] {
        assert!(stderr.contains(part), "{part} in {stderr}");
    }
    // The shipped example draws no warning.
    let out = berth(&[
        "place",
        &example("ha-clusters.yaml"),
        "--topology",
        &example("room-rack-pm.yaml"),
        "--time-limit",
        "1",
    ]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"));
}

/// Issue 51.3 (seed 004): a hard CoLocation and a hops = 0 rule to a pre-existing resource
/// are enforced at the leaf `--current` gives it; without one, `place` refuses by name.
#[test]
fn relationships_to_a_pre_existing_resource_are_enforced_or_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let t = dir.path().join("ext.yaml");
    std::fs::write(
        &t,
        "heat_template_version: 2013-05-23\nresources:\n  a:\n    type: OS::Nova::Server\n    properties: {flavor: m1.large}\n    relationships:\n      - related: ext-db-7\n        policies: [{type: OS::CoLocation, properties: {level: rack}}]\n  b:\n    type: OS::Nova::Server\n    properties: {flavor: m1.large}\n    relationships:\n      - related: ext-db-7\n        policies: [{type: OS::NetMaxHops, properties: {hops: 0}}]\n",
    )
    .expect("write template");
    let current = dir.path().join("current.yaml");
    std::fs::write(&current, "ext-db-7: rack2-pm3\n").expect("write current");
    let (t, current) = (t.display().to_string(), current.display().to_string());
    let topo = example("room-rack-pm.yaml");
    let out = berth(&[
        "place",
        &t,
        "--topology",
        &topo,
        "--time-limit",
        "1",
        "--current",
        &current,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let placed = placements(&out);
    assert_eq!(placed["ext-db-7"], "rack2-pm3");
    assert_eq!(placed["b"], "rack2-pm3");
    assert!(placed["a"].starts_with("rack2-"), "{placed:?}");
    let out = berth(&["place", &t, "--topology", &topo, "--time-limit", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("`OS::CoLocation` relates to pre-existing resource `ext-db-7`, whose location is not given; expected `ext-db-7: LEAF_ID` in the current placement (--current)"),
        "{stderr}"
    );
}
