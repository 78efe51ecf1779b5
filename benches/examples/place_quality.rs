//! Prints greedy placements per second and hosts used versus the lower bound after 1 s and
//! 10 s of large-neighbourhood search (the numbers of `benches/benches/placement.rs` without
//! the criterion harness): `cargo run --release -p berth-benches --example place_quality
//! [-- --only TEXT] [--greedy-only] [--seed N]` (workload seed, default 1 as in the bench).

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `--only "10000h/50000vm packing"`: run the cases whose label contains the text.
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|k| args.get(k + 1));
    let greedy_only = args.iter().any(|a| a == "--greedy-only");
    let seed = args
        .iter()
        .position(|a| a == "--seed")
        .and_then(|k| args.get(k + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    berth_benches::placement::quality(only.map(String::as_str), greedy_only, seed);
}
