//! The `berth` command line.

fn main() {}
