//! Fuzz target: arbitrary text as a datacenter topology; loading never panics, and a loaded
//! topology answers its level and hop queries for every pair of its first leaves.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match berth_topology::load(text) {
        Ok(topo) => exercise(&topo),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});

fn exercise(topo: &berth_topology::Topology) {
    let leaves: Vec<_> = topo.leaves().take(8).collect();
    for &a in &leaves {
        for &b in &leaves {
            // Hop counts are symmetric and zero exactly on the diagonal.
            assert_eq!(topo.hops(a, b), topo.hops(b, a));
            assert_eq!(topo.hops(a, b) == 0, a == b);
        }
    }
}
