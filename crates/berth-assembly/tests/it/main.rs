//! Integration tests: the seed examples end to end, and a broken descriptor's diagnostics.

mod seeds;
