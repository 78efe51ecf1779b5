//! Project automation.

fn main() {}
