//! Machine reassignment (ROADEF/EURO Challenge 2012, proposed by Google) as a public benchmark
//! of the datacenter placement engine: the official file format, the objective exactly as
//! the challenge defines it, an independent checker and a local search.
//!
//! - [`Model::parse`] / [`Model::parse_assignment`]: the model and assignment files; errors
//!   name `file:line:column`, the field (`machines[3].capacity[1]`) and what was expected.
//! - [`cost`]: load cost (usage above safety capacity, per resource), balance cost, process,
//!   service (largest number of moved processes in one service) and machine move costs,
//!   weighted, recomputed from scratch.
//! - [`check`]: capacity (transient resources count on the original machine too), conflict,
//!   spread and dependency, from the files alone; shares no code with the search.
//! - [`improve`]: shift and swap moves with incremental costs, late acceptance, ruin and
//!   recreate from the best assignment on stalls.
//!
//! Invariant: [`improve`] returns an assignment [`check`] accepts, whose [`cost`] is the
//! returned cost.

mod check;
mod cost;
mod lns;
mod model;
mod pair;
mod state;

#[cfg(test)]
mod tests;

pub use check::{Verdict, Violation, check};
pub use cost::{Cost, cost};
pub use lns::{LnsOptions, LnsOutcome, history_for, improve};
pub use model::{Balance, Machine, Model, Process, Resource, Service, render_solution};
