//! Property tests: queries against naive walks, level consistency, document round trips and
//! the diagnostics for damaged documents.

use berth_topology::{
    DocumentForm, Topology, TopologyBuilder, TopologyError, haversine_km, load, to_yaml,
};
use proptest::prelude::*;
use serde_json::Value;

use crate::oracle::RandomDc;

fn build(dc: &RandomDc) -> Topology {
    dc.builder()
        .build()
        .unwrap_or_else(|e| panic!("random datacenter must be valid: {e}"))
}

fn diagnostics(text: &str) -> Vec<String> {
    match load(text) {
        Ok(_) => Vec::new(),
        Err(TopologyError::Document { diagnostics }) => {
            diagnostics.iter().map(ToString::to_string).collect()
        }
        Err(other) => vec![format!("unexpected {other}")],
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn network_queries_match_naive_walks(seed in any::<u64>(), size in 1usize..150, switches in 1usize..12) {
        let dc = RandomDc::new(seed, size, switches);
        let t = build(&dc);
        let leaves = dc.leaf_ids();
        prop_assert_eq!(t.leaf_count(), leaves.len());
        for a in leaves.iter().take(40) {
            for b in leaves.iter().take(40) {
                let (la, lb) = (t.leaf(a).unwrap(), t.leaf(b).unwrap());
                let path = dc.naive_path(a, b);
                prop_assert_eq!(t.hops(la, lb) as usize, path.len());
                let bottleneck = path.iter().filter_map(|&e| dc.net_link(e).bandwidth_mbps).min();
                prop_assert_eq!(t.path_bottleneck_bandwidth(la, lb), bottleneck);
                let latency: u64 = path.iter().map(|&e| dc.net_link(e).latency_ns).sum();
                prop_assert_eq!(t.path_latency_ns(la, lb), latency);
                let mut got: Vec<&str> = t.path_edges(la, lb).map(|e| t.net_name(e.child())).collect();
                let mut want: Vec<&str> = path.iter().map(|&e| dc.net_name(e)).collect();
                got.sort_unstable();
                want.sort_unstable();
                prop_assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn location_queries_match_naive_walks(seed in any::<u64>(), size in 1usize..150) {
        let dc = RandomDc::new(seed, size, 3);
        let t = build(&dc);
        let leaves = dc.leaf_ids();
        for a in leaves.iter().take(40) {
            for b in leaves.iter().take(40) {
                let (la, lb) = (t.leaf(a).unwrap(), t.leaf(b).unwrap());
                prop_assert_eq!(t.loc_name(t.lca_location(la, lb)), dc.naive_lca(a, b));
                let want = dc.naive_coords(a).zip(dc.naive_coords(b)).map(|(x, y)| haversine_km(x, y));
                prop_assert_eq!(t.geo_distance_km(la, lb), want);
                for level in RandomDc::levels() {
                    let l = t.level(&level).unwrap();
                    let same = dc.naive_place(a, &level) == dc.naive_place(b, &level);
                    prop_assert_eq!(t.same_at_level(la, lb, l), same);
                    prop_assert_eq!(t.differ_at_level(la, lb, l), !same);
                }
            }
        }
        // LCA of arbitrary vertices, not only leaves.
        for u in 0..t.loc_count().min(30) {
            for v in 0..t.loc_count().min(30) {
                let (u, v) = (berth_topology::LocVertexId(u as u32), berth_topology::LocVertexId(v as u32));
                let want = dc.naive_lca(t.loc_name(u), t.loc_name(v));
                prop_assert_eq!(t.loc_name(t.loc_lca(u, v)), want.as_str());
                prop_assert_eq!(t.loc_is_ancestor(u, v), t.loc_lca(u, v) == u);
            }
        }
    }

    #[test]
    fn ancestor_at_level_is_consistent(seed in any::<u64>(), size in 1usize..200) {
        let dc = RandomDc::new(seed, size, 2);
        let t = build(&dc);
        for leaf in t.leaves() {
            let name = t.leaf_name(leaf).to_owned();
            prop_assert_eq!(t.leaf_coordinates(leaf), dc.naive_coords(&name));
            let v = t.leaf_location(leaf);
            for level in RandomDc::levels() {
                let l = t.level(&level).unwrap();
                let got = t.ancestor_at_level(leaf, l);
                prop_assert_eq!(got.map(|v| t.loc_name(v).to_owned()), dc.naive_at_level(&name, &level));
                prop_assert_eq!(t.loc_ancestor_at_level(v, l), got, "table and binary search agree");
                let place = t.vertex_at_level(leaf, l);
                prop_assert_eq!(t.loc_name(place), dc.naive_place(&name, &level));
                prop_assert!(t.leaves_under(place).contains(&leaf.0));
                if let Some(a) = got {
                    prop_assert_eq!(place, a);
                }
                if let Some(a) = got {
                    prop_assert_eq!(t.loc_level(a), l);
                    prop_assert!(t.vertices_at_level(l).contains(&a));
                    prop_assert!(t.leaves_under(a).contains(&leaf.0));
                }
            }
        }
    }

    #[test]
    fn documents_round_trip_through_the_builder(seed in any::<u64>(), size in 1usize..120, switches in 1usize..10) {
        let dc = RandomDc::new(seed, size, switches);
        let t = build(&dc);
        let flat = dc.flat_document();
        prop_assert_eq!(&load(&flat.to_string()).unwrap(), &t, "independent flat JSON");
        prop_assert_eq!(&load(&to_yaml(&flat)).unwrap(), &t, "independent flat YAML");
        for form in [DocumentForm::Nested, DocumentForm::Flat] {
            let doc = t.to_document(form);
            prop_assert_eq!(&load(&to_yaml(&doc)).unwrap(), &t);
            prop_assert_eq!(&load(&doc.to_string()).unwrap(), &t);
        }
        prop_assert_eq!(&TopologyBuilder::from_topology(&t).build().unwrap(), &t);
    }

    #[test]
    fn a_leaf_missing_from_the_network_is_reported(seed in any::<u64>(), size in 2usize..80, pick in any::<prop::sample::Index>()) {
        let dc = RandomDc::new(seed, size, 1);
        let mut doc = dc.flat_document();
        let network = doc["network"].as_array_mut().unwrap();
        let leaf_entries: Vec<usize> = (0..network.len()).filter(|&i| network[i].get("leaf").is_some()).collect();
        prop_assume!(leaf_entries.len() >= 2);
        let removed = network.remove(leaf_entries[pick.index(leaf_entries.len())]);
        let id = removed["leaf"].as_str().unwrap().to_owned();
        let diags = diagnostics(&to_yaml(&doc));
        let at = dc.loc_index(&id);
        let want = format!("location[{at}] ");
        prop_assert_eq!(diags.len(), 1, "{:?}", diags);
        prop_assert!(diags[0].starts_with(&want), "{}", diags[0]);
        prop_assert!(diags[0].contains(&format!("leaf `{id}` is missing from the network tree")), "{}", diags[0]);
    }

    #[test]
    fn a_leaf_attached_twice_is_reported(seed in any::<u64>(), size in 1usize..80, pick in any::<prop::sample::Index>()) {
        let dc = RandomDc::new(seed, size, 2);
        let mut doc = dc.flat_document();
        let network = doc["network"].as_array_mut().unwrap();
        let leaf_entries: Vec<usize> = (0..network.len()).filter(|&i| network[i].get("leaf").is_some()).collect();
        let copy = network[leaf_entries[pick.index(leaf_entries.len())]].clone();
        network.push(copy.clone());
        let diags = diagnostics(&to_yaml(&doc));
        prop_assert_eq!(diags.len(), 1, "{:?}", diags);
        let id = copy["leaf"].as_str().unwrap();
        prop_assert!(diags[0].contains(&format!("leaf `{id}` appears twice")), "{}", diags[0]);
    }

    #[test]
    fn a_parent_cycle_is_reported(seed in any::<u64>(), size in 3usize..80, pick in any::<prop::sample::Index>()) {
        let dc = RandomDc::new(seed, size, 2);
        let leaves = dc.leaf_ids();
        let leaf = &leaves[pick.index(leaves.len())];
        let path = dc.loc_path(leaf);
        prop_assume!(path.len() >= 3);
        // Hang an inner ancestor of the leaf below the leaf itself.
        let ancestor = path[path.len() - 2];
        let mut doc = dc.flat_document();
        doc["location"][ancestor]["parent"] = Value::String(leaf.clone());
        let diags = diagnostics(&to_yaml(&doc));
        prop_assert!(diags.iter().any(|d| d.contains("cycle in the location tree")), "{:?}", diags);
    }
}
