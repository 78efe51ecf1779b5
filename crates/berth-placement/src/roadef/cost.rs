//! The challenge's objective, recomputed from scratch: load, balance, process, service and
//! machine move costs with their weights.

use super::model::Model;

/// The objective's terms, unweighted, and the weighted total.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cost {
    /// Per resource: sum over machines of usage above the safety capacity.
    pub load: Vec<i64>,
    /// Per balance objective: sum over machines of `max(0, target * A(r1) - A(r2))`, where
    /// `A(r) = capacity - usage`.
    pub balance: Vec<i64>,
    /// Sum of the move costs of the processes not on their original machine.
    pub process_move: i64,
    /// Largest number of moved processes in one service.
    pub service_move: i64,
    /// Sum over processes of the machine move cost from original to current machine.
    pub machine_move: i64,
    /// `sum(weight_load * load) + sum(weight * balance) + weight_process_move * process_move
    /// + weight_service_move * service_move + weight_machine_move * machine_move`.
    pub total: i64,
}

/// The objective of `assignment` (machine per process) given the `initial` one.
///
/// Both must have one entry per process, each a machine index (the checker verifies that
/// first; this function assumes it).
#[must_use]
pub fn cost(model: &Model, initial: &[usize], assignment: &[usize]) -> Cost {
    let nr = model.resources.len();
    let mut usage = vec![vec![0i64; nr]; model.machines.len()];
    for (p, proc) in model.processes.iter().enumerate() {
        for (u, req) in usage[assignment[p]].iter_mut().zip(&proc.requirement) {
            *u += req;
        }
    }
    let load = (0..nr)
        .map(|r| {
            model
                .machines
                .iter()
                .zip(&usage)
                .map(|(m, u)| (u[r] - m.safety_capacity[r]).max(0))
                .sum()
        })
        .collect::<Vec<i64>>();
    let balance = model
        .balances
        .iter()
        .map(|b| {
            model
                .machines
                .iter()
                .zip(&usage)
                .map(|(m, u)| {
                    let a1 = m.capacity[b.resource1] - u[b.resource1];
                    let a2 = m.capacity[b.resource2] - u[b.resource2];
                    (b.target * a1 - a2).max(0)
                })
                .sum()
        })
        .collect::<Vec<i64>>();
    let mut process_move = 0;
    let mut machine_move = 0;
    let mut moved = vec![0i64; model.services.len()];
    for (p, proc) in model.processes.iter().enumerate() {
        if initial[p] != assignment[p] {
            process_move += proc.move_cost;
            moved[proc.service] += 1;
        }
        machine_move += model.machine_move_cost(initial[p], assignment[p]);
    }
    let service_move = moved.into_iter().max().unwrap_or(0);
    let total = model
        .resources
        .iter()
        .zip(&load)
        .map(|(r, l)| r.weight_load_cost * l)
        .sum::<i64>()
        + model
            .balances
            .iter()
            .zip(&balance)
            .map(|(b, c)| b.weight * c)
            .sum::<i64>()
        + model.weight_process_move * process_move
        + model.weight_service_move * service_move
        + model.weight_machine_move * machine_move;
    Cost {
        load,
        balance,
        process_move,
        service_move,
        machine_move,
        total,
    }
}
