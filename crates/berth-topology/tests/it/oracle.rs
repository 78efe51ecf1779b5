//! Random datacenters as plain data, with naive (parent-walking) answers to every query.

use berth_topology::{Coordinates, Link, TopologyBuilder};
use serde_json::{Value, json};

/// Levels `l0` (coarsest) … `l9` form a chain; `x` and `y` are finer than `l3` and
/// incomparable with `l4`… and with each other.
pub const CHAIN: usize = 10;
pub const DIMS: [&str; 3] = ["d0", "d1", "d2"];

pub struct Loc {
    pub id: String,
    pub parent: Option<usize>,
    pub level: String,
    pub coords: Option<Coordinates>,
    pub capacity: [i64; 3],
    pub machine_type: Option<String>,
}

pub struct Net {
    pub id: String,
    /// Index into `locs` for a leaf attachment.
    pub leaf: Option<usize>,
    pub parent: Option<usize>,
    pub link: Link,
}

/// A random datacenter: vertices listed parents first.
pub struct RandomDc {
    pub locs: Vec<Loc>,
    pub nets: Vec<Net>,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

fn chain_index(level: &str) -> Option<usize> {
    level.strip_prefix('l').and_then(|s| s.parse().ok())
}

/// Levels strictly finer than `level`.
fn finer_levels(level: &str) -> Vec<String> {
    match chain_index(level) {
        Some(i) => {
            let mut out: Vec<String> = (i + 1..CHAIN).map(|j| format!("l{j}")).collect();
            if i <= 3 {
                out.push("x".into());
                out.push("y".into());
            }
            out
        }
        None => Vec::new(),
    }
}

impl RandomDc {
    pub fn new(seed: u64, size: usize, switches: usize) -> Self {
        let mut rng = Rng(seed);
        let mut locs = vec![Loc {
            id: "v0".into(),
            parent: None,
            level: "l0".into(),
            coords: None,
            capacity: [0; 3],
            machine_type: None,
        }];
        for i in 1..size.max(1) {
            let open: Vec<usize> = (0..locs.len())
                .filter(|&j| !finer_levels(&locs[j].level).is_empty())
                .collect();
            let p = open[rng.below(open.len())];
            let choices = finer_levels(&locs[p].level);
            // Prefer the next level so trees get deep, but skip levels now and then.
            let level = if rng.chance(60) {
                choices[0].clone()
            } else {
                choices[rng.below(choices.len())].clone()
            };
            let coords = rng.chance(30).then(|| Coordinates {
                lat: (rng.below(180_000) as f64) / 1000.0 - 90.0,
                lon: (rng.below(360_000) as f64) / 1000.0 - 180.0,
            });
            locs.push(Loc {
                id: format!("v{i}"),
                parent: Some(p),
                level,
                coords,
                capacity: [0; 3],
                machine_type: None,
            });
        }
        let mut is_leaf = vec![true; locs.len()];
        for l in &locs {
            if let Some(p) = l.parent {
                is_leaf[p] = false;
            }
        }
        let leaves: Vec<usize> = (0..locs.len()).filter(|&i| is_leaf[i]).collect();
        for &l in &leaves {
            locs[l].capacity = [
                rng.below(1000) as i64,
                rng.below(1000) as i64,
                rng.below(3) as i64,
            ];
            locs[l].machine_type = rng.chance(50).then(|| format!("m{}", rng.below(3)));
        }

        let s = switches.clamp(1, leaves.len());
        let link = |rng: &mut Rng| Link {
            bandwidth_mbps: (!rng.chance(20)).then(|| 1 + rng.below(1_000_000) as u64),
            latency_ns: rng.below(1_000_000) as u64,
        };
        let mut nets: Vec<Net> = Vec::new();
        for i in 0..s {
            let parent = (i > 0).then(|| rng.below(i));
            let l = if i == 0 {
                Link::default()
            } else {
                link(&mut rng)
            };
            nets.push(Net {
                id: format!("s{i}"),
                leaf: None,
                parent,
                link: l,
            });
        }
        let mut childless: Vec<usize> = (0..s)
            .filter(|&i| !nets.iter().any(|n| n.parent == Some(i)))
            .collect();
        childless.reverse();
        for &leaf in &leaves {
            let parent = childless.pop().unwrap_or_else(|| rng.below(s));
            let l = link(&mut rng);
            nets.push(Net {
                id: locs[leaf].id.clone(),
                leaf: Some(leaf),
                parent: Some(parent),
                link: l,
            });
        }
        RandomDc { locs, nets }
    }

    fn declare(b: &mut TopologyBuilder) {
        for i in 0..CHAIN {
            b.level(format!("l{i}"));
        }
        b.level("x").level("y");
        for i in 1..CHAIN {
            b.finer_than(format!("l{i}"), format!("l{}", i - 1));
        }
        b.finer_than("x", "l3").finer_than("y", "l3");
        for d in DIMS {
            b.dimension(d);
        }
        b.flavor("f1", [("d0", 1), ("d2", 2)]);
    }

    pub fn builder(&self) -> TopologyBuilder {
        let mut b = TopologyBuilder::new();
        Self::declare(&mut b);
        for l in &self.locs {
            let parent = l.parent.map(|p| self.locs[p].id.as_str());
            let spec = b.location(l.id.clone(), parent, l.level.clone());
            spec.coordinates = l.coords;
            if self.is_leaf(&l.id) {
                for (d, &v) in DIMS.iter().zip(&l.capacity) {
                    if v != 0 {
                        spec.capacity(*d, v);
                    }
                }
                spec.machine_type = l.machine_type.clone();
            }
        }
        for n in &self.nets {
            let parent = n.parent.map(|p| self.nets[p].id.as_str());
            match n.leaf {
                Some(_) => b.network_leaf(n.id.clone(), parent, n.link),
                None => b.switch(n.id.clone(), parent, n.link),
            };
        }
        b
    }

    /// The flat-form document, written independently of the crate's emitter.
    pub fn flat_document(&self) -> Value {
        let mut levels: Vec<String> = (0..CHAIN).map(|i| format!("l{i}")).collect();
        levels.push("x".into());
        levels.push("y".into());
        let mut finer: Vec<Value> = (1..CHAIN)
            .map(|i| json!([format!("l{i}"), format!("l{}", i - 1)]))
            .collect();
        finer.push(json!(["x", "l3"]));
        finer.push(json!(["y", "l3"]));
        let location: Vec<Value> = self
            .locs
            .iter()
            .map(|l| {
                let mut e = json!({"id": l.id, "level": l.level});
                if let Some(p) = l.parent {
                    e["parent"] = json!(self.locs[p].id);
                }
                if let Some(c) = l.coords {
                    e["lat"] = json!(c.lat);
                    e["lon"] = json!(c.lon);
                }
                if self.is_leaf(&l.id) {
                    let cap: serde_json::Map<String, Value> = DIMS
                        .iter()
                        .zip(&l.capacity)
                        .filter(|(_, v)| **v != 0)
                        .map(|(d, v)| ((*d).to_owned(), json!(v)))
                        .collect();
                    e["capacity"] = Value::Object(cap);
                    if let Some(m) = &l.machine_type {
                        e["machine_type"] = json!(m);
                    }
                }
                e
            })
            .collect();
        let network: Vec<Value> = self
            .nets
            .iter()
            .map(|n| {
                let mut e = if n.leaf.is_some() {
                    json!({"leaf": n.id})
                } else {
                    json!({"id": n.id})
                };
                if let Some(p) = n.parent {
                    e["parent"] = json!(self.nets[p].id);
                    if let Some(b) = n.link.bandwidth_mbps {
                        e["bandwidth_mbps"] = json!(b);
                    }
                    e["latency_ms"] = json!(n.link.latency_ns as f64 / 1e6);
                }
                e
            })
            .collect();
        json!({
            "levels": levels,
            "finer_than": finer,
            "dimensions": DIMS,
            "flavors": {"f1": {"d0": 1, "d2": 2}},
            "location": location,
            "network": network,
        })
    }

    pub fn is_leaf(&self, id: &str) -> bool {
        let i = self.loc_index(id);
        !self.locs.iter().any(|l| l.parent == Some(i))
    }

    pub fn loc_index(&self, id: &str) -> usize {
        self.locs.iter().position(|l| l.id == id).unwrap()
    }

    pub fn leaf_ids(&self) -> Vec<String> {
        self.locs
            .iter()
            .filter(|l| self.is_leaf(&l.id))
            .map(|l| l.id.clone())
            .collect()
    }

    /// Location ancestors of `id`, itself first.
    pub fn loc_path(&self, id: &str) -> Vec<usize> {
        let mut out = vec![self.loc_index(id)];
        while let Some(p) = self.locs[*out.last().unwrap()].parent {
            out.push(p);
        }
        out
    }

    pub fn naive_lca(&self, a: &str, b: &str) -> String {
        let pa = self.loc_path(a);
        let pb = self.loc_path(b);
        let w = pb.iter().find(|v| pa.contains(v)).unwrap();
        self.locs[*w].id.clone()
    }

    pub fn naive_at_level(&self, leaf: &str, level: &str) -> Option<String> {
        self.loc_path(leaf)
            .into_iter()
            .find(|&v| self.locs[v].level == level)
            .map(|v| self.locs[v].id.clone())
    }

    /// Where a leaf is at `level`, from the definition: its ancestor there; else the highest
    /// vertex of the run of ancestors (from the leaf up) whose levels are finer; else the leaf.
    pub fn naive_place(&self, leaf: &str, level: &str) -> String {
        if let Some(v) = self.naive_at_level(leaf, level) {
            return v;
        }
        let finer = finer_levels(level);
        let path = self.loc_path(leaf);
        let mut place = path[0];
        for &v in &path {
            if !finer.contains(&self.locs[v].level) {
                break;
            }
            place = v;
        }
        self.locs[place].id.clone()
    }

    pub fn naive_coords(&self, leaf: &str) -> Option<Coordinates> {
        self.loc_path(leaf)
            .into_iter()
            .find_map(|v| self.locs[v].coords)
    }

    fn net_path(&self, leaf: &str) -> Vec<usize> {
        let mut out = vec![
            self.nets
                .iter()
                .position(|n| n.leaf.is_some() && n.id == leaf)
                .unwrap(),
        ];
        while let Some(p) = self.nets[*out.last().unwrap()].parent {
            out.push(p);
        }
        out
    }

    /// Edges (named by their child vertex) on the network path between two leaves.
    pub fn naive_path(&self, a: &str, b: &str) -> Vec<usize> {
        let pa = self.net_path(a);
        let pb = self.net_path(b);
        let w = *pb.iter().find(|v| pa.contains(v)).unwrap();
        let mut edges: Vec<usize> = pa.iter().take_while(|&&v| v != w).copied().collect();
        edges.extend(pb.iter().take_while(|&&v| v != w));
        edges
    }

    pub fn net_name(&self, i: usize) -> &str {
        &self.nets[i].id
    }

    pub fn net_link(&self, i: usize) -> Link {
        self.nets[i].link
    }

    pub fn levels() -> Vec<String> {
        let mut l: Vec<String> = (0..CHAIN).map(|i| format!("l{i}")).collect();
        l.push("x".into());
        l.push("y".into());
        l
    }
}
