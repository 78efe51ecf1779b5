//! The independent checker: every hard constraint of the challenge, and the objective, from
//! the model and the two assignments alone (no state shared with the search).

use std::collections::BTreeSet;
use std::fmt;

use super::cost::{Cost, cost};
use super::model::Model;

/// One broken hard constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// The assignment does not have one entry per process.
    Length {
        /// Processes in the model.
        expected: usize,
        /// Entries found.
        found: usize,
    },
    /// A process is on a machine that does not exist.
    UnknownMachine {
        /// The process.
        process: usize,
        /// Its machine index.
        machine: usize,
    },
    /// Usage above capacity.
    Capacity {
        /// The machine.
        machine: usize,
        /// The resource.
        resource: usize,
        /// Usage (for a transient resource, also of the processes moved away from it).
        used: i64,
        /// Capacity.
        capacity: i64,
    },
    /// Two processes of one service on one machine.
    Conflict {
        /// The service.
        service: usize,
        /// The machine.
        machine: usize,
    },
    /// A service spans fewer locations than its spread minimum.
    Spread {
        /// The service.
        service: usize,
        /// Distinct locations it runs in.
        locations: usize,
        /// Its minimum.
        minimum: usize,
    },
    /// A process's neighborhood holds no process of a service its service depends on.
    Dependency {
        /// The process.
        process: usize,
        /// The service it needs.
        needs: usize,
        /// The process's neighborhood.
        neighborhood: usize,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::Length { expected, found } => {
                write!(f, "expected {expected} machine indexes, found {found}")
            }
            Violation::UnknownMachine { process, machine } => {
                write!(f, "process {process} is on unknown machine {machine}")
            }
            Violation::Capacity {
                machine,
                resource,
                used,
                capacity,
            } => write!(
                f,
                "machine {machine} resource {resource}: {used} used, capacity {capacity}"
            ),
            Violation::Conflict { service, machine } => {
                write!(
                    f,
                    "service {service} has two processes on machine {machine}"
                )
            }
            Violation::Spread {
                service,
                locations,
                minimum,
            } => write!(
                f,
                "service {service} spans {locations} locations, expected at least {minimum}"
            ),
            Violation::Dependency {
                process,
                needs,
                neighborhood,
            } => write!(
                f,
                "process {process} needs service {needs} in neighborhood {neighborhood}"
            ),
        }
    }
}

/// What the checker found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Every broken hard constraint, in a fixed order.
    pub violations: Vec<Violation>,
    /// The objective, when the assignment has the right shape (even if infeasible).
    pub cost: Option<Cost>,
}

impl Verdict {
    /// No hard constraint broken.
    #[must_use]
    pub fn feasible(&self) -> bool {
        self.violations.is_empty() && self.cost.is_some()
    }
}

/// Checks `assignment` against `model`, with `initial` the original assignment (for the
/// transient resources and the move costs).
#[must_use]
pub fn check(model: &Model, initial: &[usize], assignment: &[usize]) -> Verdict {
    let np = model.processes.len();
    let nm = model.machines.len();
    let mut violations = Vec::new();
    for (a, len) in [(initial, initial.len()), (assignment, assignment.len())] {
        if len != np {
            violations.push(Violation::Length {
                expected: np,
                found: len,
            });
        }
        for (process, &machine) in a.iter().enumerate() {
            if machine >= nm {
                violations.push(Violation::UnknownMachine { process, machine });
            }
        }
    }
    if !violations.is_empty() {
        return Verdict {
            violations,
            cost: None,
        };
    }
    // Capacity; a transient resource also carries the processes that left the machine.
    let nr = model.resources.len();
    let mut used = vec![0i64; nm * nr];
    for (p, proc) in model.processes.iter().enumerate() {
        for (r, res) in model.resources.iter().enumerate() {
            used[assignment[p] * nr + r] += proc.requirement[r];
            if res.transient && initial[p] != assignment[p] {
                used[initial[p] * nr + r] += proc.requirement[r];
            }
        }
    }
    for (m, mach) in model.machines.iter().enumerate() {
        for r in 0..nr {
            if used[m * nr + r] > mach.capacity[r] {
                violations.push(Violation::Capacity {
                    machine: m,
                    resource: r,
                    used: used[m * nr + r],
                    capacity: mach.capacity[r],
                });
            }
        }
    }
    // Conflict and spread, service by service.
    let mut members = vec![Vec::new(); model.services.len()];
    for (p, proc) in model.processes.iter().enumerate() {
        members[proc.service].push(p);
    }
    for (s, svc) in model.services.iter().enumerate() {
        let machines: BTreeSet<usize> = members[s].iter().map(|&p| assignment[p]).collect();
        if machines.len() < members[s].len() {
            for &m in &machines {
                if members[s].iter().filter(|&&p| assignment[p] == m).count() > 1 {
                    violations.push(Violation::Conflict {
                        service: s,
                        machine: m,
                    });
                }
            }
        }
        let locations: BTreeSet<usize> = machines
            .iter()
            .map(|&m| model.machines[m].location)
            .collect();
        if locations.len() < svc.spread_min {
            violations.push(Violation::Spread {
                service: s,
                locations: locations.len(),
                minimum: svc.spread_min,
            });
        }
    }
    // Dependency: the neighborhoods where each service runs.
    let neighborhoods: Vec<BTreeSet<usize>> = members
        .iter()
        .map(|ps| {
            ps.iter()
                .map(|&p| model.machines[assignment[p]].neighborhood)
                .collect()
        })
        .collect();
    for (p, proc) in model.processes.iter().enumerate() {
        let n = model.machines[assignment[p]].neighborhood;
        for &needs in &model.services[proc.service].dependencies {
            if !neighborhoods[needs].contains(&n) {
                violations.push(Violation::Dependency {
                    process: p,
                    needs,
                    neighborhood: n,
                });
            }
        }
    }
    Verdict {
        violations,
        cost: Some(cost(model, initial, assignment)),
    }
}
