//! Built-in generic constraints that plugins compose: filters, pairwise relations, groups,
//! counts and capacities.

mod alldiff;
mod at_most;
mod capacity;
mod filter;
mod pairwise;
mod same_group;

pub use alldiff::{AllDifferent, AllDifferentGroup};
pub use at_most::AtMostCount;
pub use capacity::Capacity;
pub(crate) use capacity::CapacityData;
pub use filter::Filter;
pub use pairwise::Pairwise;
pub use same_group::SameGroup;

use crate::VarId;

/// Scope checks shared by the built-ins: variables exist, no duplicates.
fn check_scope(vars: &[VarId], sizes: &[u32]) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    for v in vars {
        if v.index() >= sizes.len() {
            return Err(format!("unknown variable {v}"));
        }
        if !seen.insert(*v) {
            return Err(format!(
                "variable {v} appears twice in the scope; expected distinct variables"
            ));
        }
    }
    Ok(())
}
