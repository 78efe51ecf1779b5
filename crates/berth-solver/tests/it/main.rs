//! Integration tests of berth-solver: brute-force oracles, scenarios, explanations.

mod oracle;
mod modules;
mod scenarios;
