//! Generated inventories and attribute-filtered demand requirements for the `resolve` bench.
//!
//! The inventory follows the `solve` bench's (cloud regions over the continental US, disaster
//! zones, vCPU capacity, pools as inventory provider names when `pools > 1`) and adds what
//! attribute filters look at: `cloud_owner`, `region` and `complex_name` fields plus a
//! `tier`, `generation`, `sriov`, `features` (a list) and `bandwidth_gbps` attribute written
//! with mixed YAML typing. Each requirement filters on two to four attributes (plain values,
//! `any`, `not`, list membership, A&AI hyphenated field names, loose number and boolean
//! matches); some exclude candidates or name an existing placement.

use std::collections::BTreeMap;

use berth_inventory::{
    AttrFilter, AttrValue, Candidate, CandidateId, DemandRequirement, InventoryType,
    StaticProvider, ZoneCategory,
};

use crate::Rng;

const OWNERS: [&str; 4] = ["aws", "azure", "gcp", "att-aic"];
const TIERS: [&str; 3] = ["gold", "silver", "bronze"];
const FEATURES: [&str; 4] = ["dpdk", "hugepages", "cpu-pinning", "gpu"];

fn pick<'a>(r: &mut Rng, xs: &[&'a str]) -> &'a str {
    xs[(r.next_u64() % xs.len() as u64) as usize]
}

fn s(x: &str) -> AttrValue {
    AttrValue::Str(x.to_owned())
}

/// `m` cloud regions `r0..`; with `pools > 1` region `i` is served only under `pool{i % pools}`.
pub fn inventory(m: usize, pools: usize, seed: u64) -> StaticProvider {
    let mut r = Rng(seed);
    let candidates = (0..m).map(|i| {
        let lat = 25.0 + r.unit() * 24.0;
        let lon = -124.0 + r.unit() * 57.0;
        let mut c = Candidate::new(format!("r{i}"), InventoryType::Cloud);
        c.latitude = Some(lat);
        c.longitude = Some(lon);
        c.cost = Some(100.0);
        let cell_y = (((lat - 25.0) / 24.0 * 4.0) as usize).min(3);
        let cell_x = (((lon + 124.0) / 57.0 * 5.0) as usize).min(4);
        c.zones
            .insert(ZoneCategory::Disaster, format!("z{}", cell_y * 5 + cell_x));
        c.region = Some(format!("us-{cell_x}"));
        c.complex_name = Some(format!("cx{}", i % 50));
        c.country = Some("USA".to_owned());
        c.cloud_owner = Some(pick(&mut r, &OWNERS).to_owned());
        c.capacity
            .insert("vcpu".to_owned(), 16 + (r.next_u64() % 49) as i64);
        if pools > 1 {
            c.inventory_provider = Some(format!("pool{}", i % pools));
        }
        let mut attrs = BTreeMap::new();
        attrs.insert("tier".to_owned(), s(pick(&mut r, &TIERS)));
        let generation = r.range(1, 4);
        // Mixed typing as YAML authors write it: 3, "3" or 3.0.
        let generation = match r.next_u64() % 3 {
            0 => AttrValue::Int(generation),
            1 => AttrValue::Str(generation.to_string()),
            _ => AttrValue::Float(generation as f64),
        };
        attrs.insert("generation".to_owned(), generation);
        let sriov = r.next_u64().is_multiple_of(2);
        let sriov = if r.next_u64().is_multiple_of(2) {
            AttrValue::Bool(sriov)
        } else {
            s(if sriov { "True" } else { "false" })
        };
        attrs.insert("sriov".to_owned(), sriov);
        let features = FEATURES
            .iter()
            .filter(|_| r.next_u64().is_multiple_of(2))
            .map(|f| s(f))
            .collect();
        attrs.insert("features".to_owned(), AttrValue::List(features));
        if !r.next_u64().is_multiple_of(5) {
            let gbps = [10, 25, 40, 100][(r.next_u64() % 4) as usize];
            let v = if r.next_u64().is_multiple_of(2) {
                AttrValue::Int(gbps)
            } else {
                s(&format!("{gbps}.0"))
            };
            attrs.insert("bandwidth_gbps".to_owned(), v);
        }
        c.attributes = attrs;
        c
    });
    StaticProvider::from_candidates(candidates).expect("unique ids")
}

fn attribute_filter(r: &mut Rng) -> (&'static str, AttrFilter) {
    match r.next_u64() % 7 {
        0 => {
            let a = pick(r, &OWNERS);
            let b = pick(r, &OWNERS);
            ("cloud-owner", AttrFilter::Any(vec![s(a), s(b)]))
        }
        1 => ("tier", AttrFilter::Not(vec![s("bronze")])),
        2 => ("tier", AttrFilter::Eq(s(pick(r, &TIERS)))),
        3 => (
            "generation",
            AttrFilter::Any(vec![s("3"), AttrValue::Float(4.0)]),
        ),
        4 => ("features", AttrFilter::Eq(s(pick(r, &FEATURES)))),
        5 => ("sriov", AttrFilter::Eq(s("true"))),
        _ => (
            "bandwidth_gbps",
            AttrFilter::Not(vec![AttrValue::Int(10), AttrValue::Float(25.0)]),
        ),
    }
}

/// `n` cloud requirements `d0..`; with `pools > 1` demand `i` asks `pool{(i / 2) % pools}`
/// (HA pairs share a pool, as in the `solve` bench), else `aai`. `m` is the inventory size
/// the excluded ids and existing placements are drawn from.
pub fn requirements(n: usize, m: usize, pools: usize, seed: u64) -> Vec<DemandRequirement> {
    let mut r = Rng(seed ^ 0x5EED);
    (0..n)
        .map(|i| {
            let provider = if pools > 1 {
                format!("pool{}", (i / 2) % pools)
            } else {
                "aai".to_owned()
            };
            let mut q = DemandRequirement::new(format!("d{i}"), provider, InventoryType::Cloud);
            for _ in 0..r.range(2, 4) {
                let (k, f) = attribute_filter(&mut r);
                q.attributes.insert(k.to_owned(), f);
            }
            let id = |r: &mut Rng| CandidateId::new(format!("r{}", r.next_u64() % m as u64));
            if r.next_u64().is_multiple_of(4) {
                q.excluded_candidates = (0..3).map(|_| id(&mut r)).collect();
            }
            if r.next_u64().is_multiple_of(4) {
                q.existing_placement = Some(id(&mut r));
            }
            q
        })
        .collect()
}
