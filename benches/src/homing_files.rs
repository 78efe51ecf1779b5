//! A homing instance as the files a user gives `berth solve`: a template and an inventory.
//!
//! The template states the instance's rules as HAS constraints: `attribute` (`owner` ne the
//! refused one), `distance_to_location`, `zone` different disaster, `distance_between_demands`,
//! `region_fit` (requests as Nova's `vcpus`, capacities as HAS's `vCPU`, so the capacity
//! dimension registry is on the path), `inventory_group` (each set as pairs with its first
//! demand) and anti-affinity as `zone` different complex (every candidate its own complex).
//! The objective is the weighted sum of each demand's candidate attribute `customer_km` (the
//! instance's integer km to the customer). The map's km become metres on the globe, at the
//! equator: the great-circle distance of two candidates is then their map distance to about
//! 1e-7, and thresholds halfway between two whole squared distances decide as the instance
//! does. [`to_files`] checks that for every candidate the rules admit exactly the instance's
//! allowed set, and every pair of allowed candidates of a near pair decides as the instance,
//! with the engine's own great-circle distance: an encoding that is not exact is an error.
//! Pair-distance terms become `distance_between` the two demands, weighted by [`SCALE`] times
//! the instance's weight per map km.

use std::fmt::Write as _;

use berth_constraints::geo::haversine_km;

use crate::homing::{Instance, LOCATION_KM, SCALE, dist2, globe};

/// The template km halfway between `km` and the next whole squared distance above it.
fn threshold(km: i64) -> f64 {
    let next = ((km * km + 1) as f64).sqrt();
    (km as f64 + next) / 2.0 / SCALE
}

/// The template and the inventory of `inst` (YAML), or what makes the encoding inexact.
pub fn to_files(inst: &Instance) -> Result<(String, String), String> {
    check_exact(inst)?;
    let mut inv = String::from("candidates:\n");
    for (i, c) in inst.candidates.iter().enumerate() {
        let (lat, lon) = globe((c.x, c.y));
        let km = (dist2(c.x, c.y, inst.customer.0, inst.customer.1) as f64)
            .sqrt()
            .round() as i64;
        // Groups only where a rule uses them (a group of one member is warned of).
        let groups = if inst.same_group.is_empty() {
            String::new()
        } else {
            format!(" groups: [g{}],", c.group)
        };
        let _ = writeln!(
            inv,
            "  - {{candidate_id: c{i}, inventory_type: cloud, latitude: {lat:?}, longitude: {lon:?}, \
             complex_name: c{i}, zones: {{disaster: z{}}}, capacity: {{vCPU: {}}},{groups} \
             attributes: {{owner: o{}, customer_km: {km}}}}}",
            c.zone, c.vcpus, c.owner
        );
    }
    let mut t = String::from("homing_template_version: 2017-10-10\n");
    let located: Vec<(usize, (i64, i64))> = inst
        .demands
        .iter()
        .enumerate()
        .filter_map(|(d, dem)| dem.location.map(|l| (d, l)))
        .collect();
    if !located.is_empty() {
        t.push_str("locations:\n");
        for (d, l) in &located {
            let (lat, lon) = globe(*l);
            let _ = writeln!(t, "  l{d}: {{latitude: {lat:?}, longitude: {lon:?}}}");
        }
    }
    t.push_str("demands:\n");
    for d in 0..inst.demands.len() {
        let _ = writeln!(
            t,
            "  d{d}: [{{inventory_provider: aai, inventory_type: cloud}}]"
        );
    }
    t.push_str("constraints:\n");
    for (d, dem) in inst.demands.iter().enumerate() {
        let _ = writeln!(
            t,
            "  owner_d{d}: {{type: attribute, demands: [d{d}], properties: {{evaluate: {{owner: {{ne: o{}}}}}}}}}",
            dem.banned_owner
        );
    }
    for (d, _) in &located {
        let _ = writeln!(
            t,
            "  near_l{d}: {{type: distance_to_location, demands: [d{d}], properties: {{distance: < {:?} km, location: l{d}}}}}",
            threshold(LOCATION_KM)
        );
    }
    let mut sizes: Vec<i64> = inst.demands.iter().map(|d| d.vcpus).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for v in sizes {
        let ds: Vec<String> = (0..inst.demands.len())
            .filter(|&d| inst.demands[d].vcpus == v)
            .map(|d| format!("d{d}"))
            .collect();
        let _ = writeln!(
            t,
            "  fit_{v}: {{type: region_fit, demands: [{}], properties: {{controller: sdn-c, request: {{vcpus: {v}}}}}}}",
            ds.join(", ")
        );
    }
    for (k, (a, b)) in inst.zone_diff.iter().enumerate() {
        let _ = writeln!(
            t,
            "  zone{k}: {{type: zone, demands: [d{a}, d{b}], properties: {{qualifier: different, category: disaster}}}}"
        );
    }
    for (k, np) in inst.near.iter().enumerate() {
        let _ = writeln!(
            t,
            "  near{k}: {{type: distance_between_demands, demands: [d{}, d{}], properties: {{distance: < {:?} km}}}}",
            np.a,
            np.b,
            threshold(np.max_km)
        );
    }
    for (k, set) in inst.same_group.iter().enumerate() {
        for (j, &d) in set.iter().enumerate().skip(1) {
            let _ = writeln!(
                t,
                "  group{k}_{j}: {{type: inventory_group, demands: [d{}, d{d}]}}",
                set[0]
            );
        }
    }
    for (k, set) in inst.anti_affinity.iter().enumerate() {
        let ds: Vec<String> = set.iter().map(|d| format!("d{d}")).collect();
        let _ = writeln!(
            t,
            "  apart{k}: {{type: zone, demands: [{}], properties: {{qualifier: different, category: complex}}}}",
            ds.join(", ")
        );
    }
    t.push_str("optimization:\n  minimize:\n    sum:\n");
    for (d, dem) in inst.demands.iter().enumerate() {
        let _ = writeln!(
            t,
            "      - {{product: [{}, {{attribute: [d{d}, customer_km]}}]}}",
            dem.weight
        );
    }
    for p in &inst.pair_terms {
        let _ = writeln!(
            t,
            "      - {{product: [{:?}, {{distance_between: [d{}, d{}]}}]}}",
            p.weight as f64 * SCALE,
            p.a,
            p.b
        );
    }
    Ok((t, inv))
}

/// Whether the files' rules decide every candidate and near pair as the instance does.
fn check_exact(inst: &Instance) -> Result<(), String> {
    let at = |i: u32| {
        let c = &inst.candidates[i as usize];
        globe((c.x, c.y))
    };
    for (d, dem) in inst.demands.iter().enumerate() {
        if dem.weight == 0 {
            return Err(format!(
                "{}: demand d{d} has no weight (an instance written before weights were)",
                inst.name
            ));
        }
        let limit = threshold(LOCATION_KM);
        let admitted: Vec<u32> = (0..inst.candidates.len() as u32)
            .filter(|&i| {
                let c = &inst.candidates[i as usize];
                c.vcpus >= dem.vcpus
                    && c.owner != dem.banned_owner
                    && dem
                        .location
                        .is_none_or(|l| haversine_km(at(i), globe(l)) < limit)
            })
            .collect();
        if admitted != dem.allowed {
            return Err(format!(
                "{}: the rules admit other candidates for d{d} than the instance allows",
                inst.name
            ));
        }
        for (&i, &cost) in dem.allowed.iter().zip(&dem.allowed) {
            let c = &inst.candidates[i as usize];
            let km = (dist2(c.x, c.y, inst.customer.0, inst.customer.1) as f64)
                .sqrt()
                .round() as i64;
            if dem.cost[cost as usize] != dem.weight * km {
                return Err(format!(
                    "{}: d{d}'s cost on c{i} is not its weight times the km to the customer",
                    inst.name
                ));
            }
        }
    }
    for np in &inst.near {
        let limit = threshold(np.max_km);
        let (da, db) = (&inst.demands[np.a as usize], &inst.demands[np.b as usize]);
        for &i in &da.allowed {
            for &j in &db.allowed {
                let (a, b) = (&inst.candidates[i as usize], &inst.candidates[j as usize]);
                let near = dist2(a.x, a.y, b.x, b.y) <= np.max_km * np.max_km;
                if near != (haversine_km(at(i), at(j)) < limit) {
                    return Err(format!(
                        "{}: c{i} and c{j} are {} on the map but not on the globe",
                        inst.name,
                        if near { "near" } else { "apart" }
                    ));
                }
            }
        }
    }
    Ok(())
}
