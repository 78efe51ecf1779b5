//! Solving the components alone, merging the ones whose parts clash: bounds and a seed plan.

use crate::decompose::{Comp, Components, find, union};
use crate::expr::Compiled;
use crate::search::{Engine, RunConfig};
use crate::state::State;
use crate::{Assignment, ConstraintId, Problem, SolveOptions, Stats, Value, VarId};

/// Components with more variables (linked by objective terms) get no exact bound.
const MAX_VARS: usize = 64;
/// Node limit of each component's search.
const NODE_LIMIT: u64 = 200_000;
/// Largest component made by merging clashing ones.
const MERGE_LIMIT: usize = 48;
/// Node budget of the whole phase (every component and merge): past it the components left
/// unsolved keep their plain bounds and the main search starts.
pub(crate) const PHASE_LIMIT: u64 = 50_000;

/// Solves each component alone, then merges components whose optimal parts clash on a
/// hard constraint (e.g. two groups filling one host) and solves the merged ones, until the
/// parts fit together or nothing more can merge. Returns the combined plan when it satisfies
/// every hard constraint: it is then optimal for the hard part of the problem.
///
/// With `seed_only` the pass is wanted for that plan alone (a stronger bound follows), so it
/// ends at the first component left unsolved: no plan can come of it then (60×800 seed 4:
/// 57 ms of a 0.4 s solve went to a 16-variable component after an 8-variable one ran out).
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_components(
    p: &Problem,
    obj: &Compiled,
    comps: &mut Components,
    excluded: &[(VarId, Value)],
    opts: &SolveOptions,
    phase_limit: u64,
    seed_only: bool,
    stats: &mut Stats,
) -> Option<Vec<Value>> {
    let n = p.var_count();
    let all: Vec<bool> = (0..p.constraint_count() as u32)
        .map(|i| p.soft_weight(ConstraintId(i)).is_none())
        .collect();
    // Every component search propagates the same root: done once, then copied (with
    // thousands of values per variable, root propagation dominates small searches).
    let mut shared = if excluded.is_empty() {
        Shared::Unknown
    } else {
        Shared::Off
    };
    let end = stats.nodes.saturating_add(phase_limit);
    loop {
        // Smallest first, each with a fair share of what is left of the budget, so one large
        // component cannot starve the small ones.
        let mut todo: Vec<usize> = (0..comps.list.len())
            .filter(|&i| searchable(&comps.list[i]))
            .collect();
        todo.sort_by_key(|&i| (comps.list[i].vars.len(), i));
        let count = todo.len() as u64;
        for (k, i) in todo.into_iter().enumerate() {
            if opts.deadline.as_ref().is_some_and(|d| d.expired()) || stats.nodes >= end {
                return None;
            }
            let budget = ((end - stats.nodes) / (count - k as u64)).max(1);
            solve_one(
                p,
                obj,
                &mut comps.list[i],
                &all,
                excluded,
                opts,
                budget,
                stats,
                &mut shared,
            );
            if seed_only && comps.list[i].sol.is_none() {
                return None;
            }
        }
        // The parts combined, and the hard constraints they break together.
        let mut full: Vec<Option<Value>> = vec![None; n];
        for comp in &comps.list {
            for &(x, v) in comp.sol.as_deref()? {
                full[x as usize] = Some(v);
            }
        }
        let a = Assignment::new(&full);
        let broken: Vec<ConstraintId> = (0..p.constraint_count() as u32)
            .map(ConstraintId)
            .filter(|&c| all[c.index()] && p.constraint(c).is_some_and(|k| k.violation(&a) > 0.0))
            .collect();
        if broken.is_empty() {
            return Some(full.into_iter().map(|v| v.unwrap_or(Value(0))).collect());
        }
        if !merge_clashes(p, comps, &broken, n) {
            return None;
        }
    }
}

/// Whether a pass searches `c`: unsolved, small enough, with a cost.
fn searchable(c: &Comp) -> bool {
    c.opt.is_none() && c.vars.len() <= MAX_VARS && !c.terms.is_empty()
}

/// How many components a pass would search.
pub(crate) fn pending(comps: &Components) -> usize {
    comps.list.iter().filter(|c| searchable(c)).count()
}

/// The root state the component searches share.
enum Shared {
    /// Not propagated yet.
    Unknown,
    /// After root propagation, with the classes of interchangeable variables.
    Root(Box<(State, Vec<Vec<u32>>)>),
    /// Root propagation failed: no component has a solution.
    Failed,
    /// Not shared (exclusions differ by component).
    Off,
}

#[allow(clippy::too_many_arguments)]
fn solve_one(
    p: &Problem,
    obj: &Compiled,
    comp: &mut Comp,
    active: &[bool],
    excluded: &[(VarId, Value)],
    opts: &SolveOptions,
    budget: u64,
    stats: &mut Stats,
    shared: &mut Shared,
) {
    let mut vars = vec![false; p.var_count()];
    for &x in &comp.vars {
        vars[x as usize] = true;
    }
    let mine: Vec<(VarId, Value)> = excluded
        .iter()
        .copied()
        .filter(|e| vars[e.0.index()])
        .collect();
    let cfg = RunConfig {
        active,
        with_objective: true,
        soft: false,
        first_only: false,
        k: 1,
        node_limit: Some(
            opts.node_limit
                .map_or(NODE_LIMIT, |l| {
                    l.saturating_sub(stats.nodes).min(NODE_LIMIT)
                })
                .min(budget),
        ),
        deadline: opts.deadline.as_deref(),
        vars: Some(&vars),
        terms: Some(&comp.terms),
        comps: None,
        remember: opts.remember,
    };
    // A merged component is bounded by the optima of its parts.
    let parts = Components {
        list: std::mem::take(&mut comp.parts),
        loose: Vec::new(),
    };
    let cfg = RunConfig {
        comps: (!parts.list.is_empty()).then_some(&parts),
        ..cfg
    };
    // Every hard constraint stays active: with the other variables unassigned, sound
    // propagation and partial violations still only cut what no full plan uses.
    let mut e = Engine::new(p, obj, &cfg);
    let ok = match shared {
        Shared::Root(root) => {
            e.resume(root.0.clone());
            // Some optimal part has each class ordered (swapping two members maps parts
            // extending to full plans onto such parts, at the same cost).
            e.order_classes(&root.1);
            true
        }
        Shared::Failed => false,
        Shared::Unknown => {
            let ok = e.root(&mine, false).is_ok();
            *shared = if ok {
                let classes = e.find_classes();
                e.order_classes(&classes);
                Shared::Root(Box::new((e.st.clone(), classes)))
            } else {
                Shared::Failed
            };
            ok
        }
        Shared::Off => e.root(&mine, false).is_ok(),
    };
    if ok {
        e.dfs(0);
    }
    if e.stats.stopped.is_none() {
        let best = e.found.first();
        comp.opt = Some(best.map_or(f64::INFINITY, |f| f.cost));
        comp.sol = best.map(|f| {
            comp.vars
                .iter()
                .map(|&x| (x, f.solution.values[x as usize]))
                .collect()
        });
    } else if !parts.list.is_empty() && parts.list.iter().all(|c| c.opt.is_some()) {
        // Unsolved within budget: the parts' optima still bound it.
        comp.opt = Some(parts.list.iter().filter_map(|c| c.opt).sum());
    }
    e.stats.stopped = None;
    stats.add(&e.stats);
    drop(e);
    comp.parts = parts.list;
}

/// Merges pairs of components whose parts together break one of `broken`. False if none can.
fn merge_clashes(p: &Problem, comps: &mut Components, broken: &[ConstraintId], n: usize) -> bool {
    let mut of_var = vec![usize::MAX; n];
    for (i, c) in comps.list.iter().enumerate() {
        for &x in &c.vars {
            of_var[x as usize] = i;
        }
    }
    let mut parent: Vec<u32> = (0..comps.list.len() as u32).collect();
    let mut size: Vec<u32> = comps.list.iter().map(|c| c.vars.len() as u32).collect();
    let mut merged = false;
    let mut pair: Vec<Option<Value>> = vec![None; n];
    for &c in broken {
        let Some(k) = p.constraint(c) else { continue };
        let mut touched: Vec<usize> = k
            .scope()
            .iter()
            .map(|x| of_var[x.index()])
            .filter(|&i| i != usize::MAX)
            .collect();
        touched.sort_unstable();
        touched.dedup();
        // Parts added one by one until the constraint breaks, then each earlier part dropped
        // if it still breaks without it: a minimal clashing set (violation is monotone).
        let set = |pair: &mut [Option<Value>], i: usize, on: bool| {
            for &(x, v) in comps.list[i].sol.iter().flatten() {
                pair[x as usize] = on.then_some(v);
            }
        };
        let mut clash = Vec::new();
        for &i in &touched {
            set(&mut pair, i, true);
            clash.push(i);
            if k.violation(&Assignment::new(&pair)) > 0.0 {
                break;
            }
        }
        let mut j = 0;
        while j + 1 < clash.len() {
            set(&mut pair, clash[j], false);
            if k.violation(&Assignment::new(&pair)) > 0.0 {
                clash.remove(j);
            } else {
                set(&mut pair, clash[j], true);
                j += 1;
            }
        }
        for &i in &touched {
            set(&mut pair, i, false);
        }
        let mut roots: Vec<u32> = clash.iter().map(|&i| find(&mut parent, i as u32)).collect();
        roots.sort_unstable();
        roots.dedup();
        let total: usize = roots.iter().map(|&r| size[r as usize] as usize).sum();
        if roots.len() > 1 && total <= MERGE_LIMIT {
            for w in roots.windows(2) {
                union(&mut parent, &mut size, w[0], w[1]);
            }
            merged = true;
        }
    }
    if !merged {
        return false;
    }
    let old = std::mem::take(&mut comps.list);
    let mut index = vec![usize::MAX; old.len()];
    for (i, c) in old.into_iter().enumerate() {
        let r = find(&mut parent, i as u32) as usize;
        let alone = size[r] as usize == c.vars.len();
        if index[r] == usize::MAX {
            index[r] = comps.list.len();
            comps.list.push(Comp {
                vars: Vec::new(),
                terms: Vec::new(),
                opt: None,
                sol: None,
                parts: Vec::new(),
            });
        }
        let m = &mut comps.list[index[r]];
        m.vars.extend(c.vars.iter().copied());
        m.terms.extend(c.terms.iter().copied());
        if alone {
            m.opt = c.opt;
            m.sol = c.sol;
            m.parts = c.parts;
        } else {
            m.parts.push(c);
        }
    }
    for c in &mut comps.list {
        c.vars.sort_unstable();
        c.terms.sort_unstable();
    }
    true
}
