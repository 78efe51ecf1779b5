//! Deterministic synthetic datacenters (global > region > site > room > rack > host) with a
//! matching network tree, for benches, tests and placement experiments.

use crate::builder::{Link, TopologyBuilder};

/// The shape of a generated datacenter. Containers are filled in order until `leaves` leaves
/// exist (the last rack may be partial); no container is left empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatacenterSpec {
    /// Total number of leaves (hosts plus storage boxes).
    pub leaves: usize,
    /// Sites per region.
    pub sites_per_region: u32,
    /// Rooms per site.
    pub rooms_per_site: u32,
    /// Racks per room.
    pub racks_per_room: u32,
    /// Hosts per rack.
    pub hosts_per_rack: u32,
    /// Storage boxes per rack (after the hosts).
    pub storage_per_rack: u32,
}

impl DatacenterSpec {
    /// 2 sites per region, 4 rooms per site, 25 racks per room, 40 hosts per rack, no storage.
    #[must_use]
    pub fn with_leaves(leaves: usize) -> Self {
        DatacenterSpec {
            leaves,
            sites_per_region: 2,
            rooms_per_site: 4,
            racks_per_room: 25,
            hosts_per_rack: 40,
            storage_per_rack: 0,
        }
    }
}

/// Machine types: (name, vcpu, ram_mib, disk_gib, sriov_vf).
const MACHINES: &[(&str, i64, i64, i64, i64)] = &[
    ("x86-small", 32, 131_072, 960, 16),
    ("x86-large", 64, 262_144, 1_920, 32),
    ("x86-highmem", 48, 786_432, 1_920, 32),
    ("arm-dense", 128, 262_144, 3_840, 64),
];

/// Metro areas for site coordinates (lat, lon).
const METROS: &[(f64, f64)] = &[
    (40.71, -74.01),
    (37.77, -122.42),
    (41.88, -87.63),
    (32.78, -96.80),
    (47.61, -122.33),
    (39.04, -77.49),
    (51.51, -0.13),
    (50.11, 8.68),
    (48.86, 2.35),
    (52.37, 4.90),
    (59.33, 18.07),
    (35.68, 139.69),
];

/// Levels, in coarse-to-fine order, declared by generated datacenters.
pub const LEVELS: &[&str] = &[
    "global",
    "region",
    "site",
    "room",
    "rack",
    "host",
    "storage_box",
];

/// Dimensions declared by generated datacenters.
pub const DIMENSIONS: &[&str] = &["vcpu", "ram_mib", "disk_gib", "sriov_vf"];

/// Generates a datacenter; the same spec and seed always give the same builder.
///
/// Location ids are hierarchical (`r0`, `r0-s1`, `r0-s1-m2`, `r0-s1-m2-k07`,
/// `r0-s1-m2-k07-h12`, `…-b0` for storage); network ids are `wan`, `core-<site>`,
/// `agg-<room>` and `tor-<rack>`. Racks are homogeneous (one machine type each); sites sit
/// near real metro coordinates and leaves inherit them.
#[must_use]
pub fn datacenter(spec: &DatacenterSpec, seed: u64) -> TopologyBuilder {
    let mut rng = SplitMix64(seed);
    let mut b = TopologyBuilder::new();
    for l in LEVELS {
        b.level(*l);
    }
    for pair in [
        ("region", "global"),
        ("site", "region"),
        ("room", "site"),
        ("rack", "room"),
        ("host", "rack"),
        ("storage_box", "rack"),
    ] {
        b.finer_than(pair.0, pair.1);
    }
    for d in DIMENSIONS {
        b.dimension(*d);
    }
    for (name, v, r, d, s) in [
        ("m1.small", 1, 2_048, 20, 0),
        ("m1.medium", 2, 4_096, 40, 0),
        ("m1.large", 4, 8_192, 80, 1),
        ("m1.xlarge", 8, 16_384, 160, 2),
    ] {
        b.flavor(
            name,
            [
                ("vcpu", v),
                ("ram_mib", r),
                ("disk_gib", d),
                ("sriov_vf", s),
            ],
        );
    }
    b.location("dc", None, "global");
    b.switch("wan", None, Link::default());

    let per_rack = spec.hosts_per_rack as usize + spec.storage_per_rack as usize;
    if per_rack == 0
        || spec.sites_per_region == 0
        || spec.rooms_per_site == 0
        || spec.racks_per_room == 0
    {
        return b;
    }
    let mut remaining = spec.leaves;
    let mut region = 0;
    let mut site_seq = 0usize;
    while remaining > 0 {
        let rid = format!("r{region}");
        b.location(rid.clone(), Some("dc"), "region");
        for s in 0..spec.sites_per_region {
            if remaining == 0 {
                break;
            }
            let sid = format!("{rid}-s{s}");
            let (lat, lon) = METROS[site_seq % METROS.len()];
            site_seq += 1;
            let jitter = |rng: &mut SplitMix64| (rng.next_f64() - 0.5) * 0.6;
            let (lat, lon) = (lat + jitter(&mut rng), lon + jitter(&mut rng));
            b.location(sid.clone(), Some(&rid), "site")
                .coordinates(round6(lat), round6(lon));
            let core = format!("core-{sid}");
            b.switch(core.clone(), Some("wan"), Link::new(100_000, 2_000_000));
            for m in 0..spec.rooms_per_site {
                if remaining == 0 {
                    break;
                }
                let mid = format!("{sid}-m{m}");
                b.location(mid.clone(), Some(&sid), "room");
                let agg = format!("agg-{mid}");
                b.switch(agg.clone(), Some(&core), Link::new(1_600_000, 10_000));
                for k in 0..spec.racks_per_room {
                    if remaining == 0 {
                        break;
                    }
                    let kid = format!("{mid}-k{k:02}");
                    b.location(kid.clone(), Some(&mid), "rack");
                    let tor = format!("tor-{kid}");
                    b.switch(tor.clone(), Some(&agg), Link::new(400_000, 5_000));
                    let machine = MACHINES[rng.below(MACHINES.len() as u64) as usize];
                    let cpu = if machine.0.starts_with("arm") {
                        "arm"
                    } else {
                        "x86"
                    };
                    for h in 0..spec.hosts_per_rack {
                        if remaining == 0 {
                            break;
                        }
                        let hid = format!("{kid}-h{h:02}");
                        let (name, vcpu, ram, disk, vf) = machine;
                        b.location(hid.clone(), Some(&kid), "host")
                            .capacity("vcpu", vcpu)
                            .capacity("ram_mib", ram)
                            .capacity("disk_gib", disk)
                            .capacity("sriov_vf", vf)
                            .machine_type(name)
                            .attribute("cpu", cpu.into());
                        b.network_leaf(hid, Some(&tor), Link::new(25_000, 2_000));
                        remaining -= 1;
                    }
                    for x in 0..spec.storage_per_rack {
                        if remaining == 0 {
                            break;
                        }
                        let bid = format!("{kid}-b{x}");
                        b.location(bid.clone(), Some(&kid), "storage_box")
                            .capacity("disk_gib", 100_000)
                            .machine_type("storage-array");
                        b.network_leaf(bid, Some(&tor), Link::new(100_000, 2_000));
                        remaining -= 1;
                    }
                }
            }
        }
        region += 1;
    }
    b
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// SplitMix64: tiny, seedable, good enough for synthetic data.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }
}
