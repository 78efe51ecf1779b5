//! Deterministic synthetic datacenters and workloads for benches, examples and tests:
//! identical hosts (so the hosts lower bound is `max over dims of ceil(sum / capacity)`) and
//! VMs with independent 4-dimensional demands, optionally in anti-collocation and LLMN groups.

use std::sync::Arc;

use berth_topology::{Link, Topology, TopologyBuilder};

use crate::error::PlacementError;
use crate::instance::{Instance, Item, PolicyLabel, Rule, RuleKind};

/// Host capacity of synthetic datacenters: vcpu, ram_mib, disk_gib, sriov_vf.
pub const HOST_CAPACITY: [i64; 4] = [64, 262_144, 2_000, 32];

/// A datacenter of identical hosts: site > room (25 racks) > rack (40 hosts) > host, with a
/// network tree wan > aggregation per room > top-of-rack > host.
///
/// # Errors
/// Never for `hosts >= 1` (the builder validates; its problems are passed through).
pub fn datacenter(hosts: usize) -> Result<Topology, berth_topology::TopologyError> {
    let mut b = TopologyBuilder::new();
    for l in ["site", "room", "rack", "host"] {
        b.level(l);
    }
    b.finer_than("room", "site")
        .finer_than("rack", "room")
        .finer_than("host", "rack");
    for d in ["vcpu", "ram_mib", "disk_gib", "sriov_vf"] {
        b.dimension(d);
    }
    b.location("site", None, "site");
    b.switch("wan", None, Link::default());
    let mut left = hosts;
    let mut room = 0;
    while left > 0 {
        let rid = format!("m{room}");
        b.location(rid.clone(), Some("site"), "room");
        b.switch(
            format!("agg-{rid}"),
            Some("wan"),
            Link::new(1_600_000, 10_000),
        );
        for k in 0..25 {
            if left == 0 {
                break;
            }
            let kid = format!("{rid}-k{k:02}");
            b.location(kid.clone(), Some(&rid), "rack");
            b.switch(
                format!("tor-{kid}"),
                Some(&format!("agg-{rid}")),
                Link::new(400_000, 5_000),
            );
            for h in 0..40 {
                if left == 0 {
                    break;
                }
                let hid = format!("{kid}-h{h:02}");
                b.location(hid.clone(), Some(&kid), "host")
                    .capacity("vcpu", HOST_CAPACITY[0])
                    .capacity("ram_mib", HOST_CAPACITY[1])
                    .capacity("disk_gib", HOST_CAPACITY[2])
                    .capacity("sriov_vf", HOST_CAPACITY[3])
                    .machine_type("x86-large");
                b.network_leaf(hid, Some(&format!("tor-{kid}")), Link::new(25_000, 2_000));
                left -= 1;
            }
        }
        room += 1;
    }
    b.build()
}

/// The shape of a synthetic workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadSpec {
    /// Number of VMs.
    pub vms: usize,
    /// Hard anti-collocation groups at host level.
    pub anti_groups: usize,
    /// Members per anti-collocation group.
    pub anti_size: usize,
    /// Hard LLMN groups (rack, host, 2).
    pub llmn_groups: usize,
    /// Members per LLMN group.
    pub llmn_size: usize,
    /// Seed of the demands.
    pub seed: u64,
}

impl WorkloadSpec {
    /// Packing only: `vms` VMs, no groups.
    #[must_use]
    pub fn packing(vms: usize, seed: u64) -> Self {
        WorkloadSpec {
            vms,
            anti_groups: 0,
            anti_size: 0,
            llmn_groups: 0,
            llmn_size: 0,
            seed,
        }
    }

    /// With groups: 10% of the VMs in anti-collocation groups of 5, 10% in LLMN groups of 8.
    #[must_use]
    pub fn with_groups(vms: usize, seed: u64) -> Self {
        WorkloadSpec {
            vms,
            anti_groups: vms / 50,
            anti_size: 5,
            llmn_groups: vms / 80,
            llmn_size: 8,
            seed,
        }
    }
}

/// VMs with independent demands (vcpu 2..16, ram 4..64 GiB, disk 40..400 GiB, 0..4 VFs) on
/// a topology with the synthetic dimensions, grouped as the spec says.
///
/// # Errors
/// [`PlacementError::Invalid`] if the topology lacks the `host` or `rack` level or the four
/// dimensions.
pub fn workload(topo: Arc<Topology>, spec: &WorkloadSpec) -> Result<Instance, PlacementError> {
    let mut rng = spec.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let vcpu = [2, 4, 4, 8, 8, 16];
    let ram = [4_096, 8_192, 16_384, 32_768, 65_536];
    let vf = [0, 0, 1, 2, 4];
    let items: Vec<Item> = (0..spec.vms)
        .map(|i| Item {
            name: format!("vm{i:06}"),
            demand: vec![
                vcpu[next(vcpu.len() as u64) as usize],
                ram[next(ram.len() as u64) as usize],
                40 + 10 * next(37) as i64,
                vf[next(vf.len() as u64) as usize],
            ],
            volume: false,
            fixed: None,
            movable: true,
            licenses: Vec::new(),
        })
        .collect();
    let (Some(host), Some(rack)) = (topo.level("host"), topo.level("rack")) else {
        return Err(PlacementError::Invalid {
            problems: vec![crate::error::Problem {
                subject: "topology".into(),
                message: "no `host` or `rack` level; expected a synthetic datacenter".into(),
            }],
        });
    };
    let policies = vec![
        PolicyLabel {
            type_name: "OS::AntiCoLocation".into(),
            label: "anti-collocation at host".into(),
            path: "synthetic".into(),
        },
        PolicyLabel {
            type_name: "OS::LLMNAntiCoLocation".into(),
            label: "LLMN rack/host/2".into(),
            path: "synthetic".into(),
        },
    ];
    let mut rules = Vec::new();
    let mut next_item = 0u32;
    let n = spec.vms as u32;
    for _ in 0..spec.anti_groups {
        let parts: Vec<Vec<u32>> = (0..spec.anti_size as u32)
            .map(|k| vec![next_item + k])
            .filter(|p| p[0] < n)
            .collect();
        next_item += spec.anti_size as u32;
        if parts.len() >= 2 {
            rules.push(Rule {
                kind: RuleKind::Spread { level: host, parts },
                hard: true,
                weight: 1.0,
                policy: 0,
            });
        }
    }
    for _ in 0..spec.llmn_groups {
        let members: Vec<u32> = (next_item..next_item + spec.llmn_size as u32)
            .filter(|&m| m < n)
            .collect();
        next_item += spec.llmn_size as u32;
        if !members.is_empty() {
            let m = members.len() as u32;
            let nn = 2.min(m);
            rules.push(Rule {
                kind: RuleKind::Llmn {
                    l1: rack,
                    l2: host,
                    n: nn,
                    cap: m.div_ceil(nn),
                    members,
                },
                hard: true,
                weight: 1.0,
                policy: 1,
            });
        }
    }
    Instance::new(topo, items, rules, policies, Vec::new())
}
