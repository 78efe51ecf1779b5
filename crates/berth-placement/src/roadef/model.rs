//! The challenge's instance format: the model file, the assignment and solution files.

use crate::error::PlacementError;

/// One resource (CPU, RAM, …): transient resources count on both machines while a process moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// Used on the original machine too when the process moves away from it.
    pub transient: bool,
    /// Weight of this resource's load cost.
    pub weight_load_cost: i64,
}

/// One machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// Neighborhood (dependency constraints).
    pub neighborhood: usize,
    /// Location (spread constraints).
    pub location: usize,
    /// Hard capacity per resource.
    pub capacity: Vec<i64>,
    /// Safety capacity per resource: usage above it costs load cost.
    pub safety_capacity: Vec<i64>,
}

/// One service: a set of processes (those naming it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Service {
    /// Minimum number of distinct locations its processes run in.
    pub spread_min: usize,
    /// Services this one depends on (each of its processes needs one of theirs in its
    /// neighborhood).
    pub dependencies: Vec<usize>,
}

/// One process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    /// Its service.
    pub service: usize,
    /// Requirement per resource.
    pub requirement: Vec<i64>,
    /// Cost of moving it off its original machine.
    pub move_cost: i64,
}

/// One balance objective: `target * available(r1)` should not exceed `available(r2)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Balance {
    /// First resource.
    pub resource1: usize,
    /// Second resource.
    pub resource2: usize,
    /// Target ratio.
    pub target: i64,
    /// Weight of this balance cost.
    pub weight: i64,
}

/// A machine reassignment instance (ROADEF/EURO Challenge 2012, proposed by Google).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    /// Resources.
    pub resources: Vec<Resource>,
    /// Machines.
    pub machines: Vec<Machine>,
    /// Services.
    pub services: Vec<Service>,
    /// Processes.
    pub processes: Vec<Process>,
    /// Balance objectives.
    pub balances: Vec<Balance>,
    /// Weight of the process move cost.
    pub weight_process_move: i64,
    /// Weight of the service move cost.
    pub weight_service_move: i64,
    /// Weight of the machine move cost.
    pub weight_machine_move: i64,
    /// Machine move costs, `from * machines + to`.
    move_costs: Vec<u32>,
    /// Number of neighborhoods (largest index + 1).
    pub neighborhoods: usize,
    /// Number of locations (largest index + 1).
    pub locations: usize,
}

impl Model {
    /// Cost of moving a process from machine `from` to machine `to`.
    #[must_use]
    pub fn machine_move_cost(&self, from: usize, to: usize) -> i64 {
        i64::from(self.move_costs[from * self.machines.len() + to])
    }

    /// Parses a model file; `file` names it in errors.
    ///
    /// # Errors
    /// [`PlacementError::Roadef`] at the first token that is missing, not a non-negative
    /// integer, or out of range, with its line:column and field.
    pub fn parse(file: &str, text: &str) -> Result<Model, PlacementError> {
        let mut t = Tokens::new(file, text);
        let nr = t.count(|| "resources".into())?;
        let mut resources = Vec::with_capacity(nr.min(t.text.len()));
        for r in 0..nr {
            let transient = t.int(0, 1, || format!("resources[{r}].transient"))? == 1;
            let weight_load_cost = t.value(|| format!("resources[{r}].weight_load_cost"))?;
            resources.push(Resource {
                transient,
                weight_load_cost,
            });
        }
        let nm = t.count(|| "machines".into())?;
        let mut machines = Vec::with_capacity(nm.min(t.text.len()));
        let mut move_costs = Vec::with_capacity(nm.saturating_mul(nm).min(t.text.len()));
        for m in 0..nm {
            let neighborhood = t.count(|| format!("machines[{m}].neighborhood"))?;
            let location = t.count(|| format!("machines[{m}].location"))?;
            let capacity = (0..nr)
                .map(|r| t.value(|| format!("machines[{m}].capacity[{r}]")))
                .collect::<Result<Vec<_>, _>>()?;
            let safety_capacity = (0..nr)
                .map(|r| t.value(|| format!("machines[{m}].safety_capacity[{r}]")))
                .collect::<Result<Vec<_>, _>>()?;
            for to in 0..nm {
                let c = t.int(0, i64::from(u32::MAX), || {
                    format!("machines[{m}].move_cost[{to}]")
                })?;
                move_costs.push(u32::try_from(c).unwrap_or(u32::MAX));
            }
            machines.push(Machine {
                neighborhood,
                location,
                capacity,
                safety_capacity,
            });
        }
        let ns = t.count(|| "services".into())?;
        let mut services = Vec::with_capacity(ns.min(t.text.len()));
        for s in 0..ns {
            let spread_min = t.count(|| format!("services[{s}].spread_min"))?;
            let nd = t.count(|| format!("services[{s}].dependencies"))?;
            let dependencies = (0..nd)
                .map(|d| t.index(ns, || format!("services[{s}].dependencies[{d}]")))
                .collect::<Result<Vec<_>, _>>()?;
            services.push(Service {
                spread_min,
                dependencies,
            });
        }
        let np = t.count(|| "processes".into())?;
        let mut processes = Vec::with_capacity(np.min(t.text.len()));
        for p in 0..np {
            let service = t.index(ns, || format!("processes[{p}].service"))?;
            let requirement = (0..nr)
                .map(|r| t.value(|| format!("processes[{p}].requirement[{r}]")))
                .collect::<Result<Vec<_>, _>>()?;
            let move_cost = t.value(|| format!("processes[{p}].move_cost"))?;
            processes.push(Process {
                service,
                requirement,
                move_cost,
            });
        }
        let nb = t.count(|| "balances".into())?;
        let mut balances = Vec::with_capacity(nb.min(t.text.len()));
        for b in 0..nb {
            let resource1 = t.index(nr, || format!("balances[{b}].resource1"))?;
            let resource2 = t.index(nr, || format!("balances[{b}].resource2"))?;
            let target = t.value(|| format!("balances[{b}].target"))?;
            let weight = t.value(|| format!("balances[{b}].weight"))?;
            balances.push(Balance {
                resource1,
                resource2,
                target,
                weight,
            });
        }
        let weight_process_move = t.value(|| "weight_process_move".into())?;
        let weight_service_move = t.value(|| "weight_service_move".into())?;
        let weight_machine_move = t.value(|| "weight_machine_move".into())?;
        t.end()?;
        Ok(Model::assemble(
            resources,
            machines,
            services,
            processes,
            balances,
            [
                weight_process_move,
                weight_service_move,
                weight_machine_move,
            ],
            move_costs,
        ))
    }

    /// Parses an assignment (or solution) file: one machine index per process.
    ///
    /// # Errors
    /// [`PlacementError::Roadef`] for a missing, extra or out-of-range machine index.
    pub fn parse_assignment(&self, file: &str, text: &str) -> Result<Vec<usize>, PlacementError> {
        let mut t = Tokens::new(file, text);
        let nm = self.machines.len();
        let out = (0..self.processes.len())
            .map(|p| t.index(nm, || format!("assignment[{p}]")))
            .collect::<Result<Vec<_>, _>>()?;
        t.end()?;
        Ok(out)
    }

    /// Builds a model from parts (tests and generators); `move_costs` is `from * machines + to`.
    ///
    /// # Errors
    /// [`PlacementError::Roadef`] when a size or an index does not fit.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        resources: Vec<Resource>,
        machines: Vec<Machine>,
        services: Vec<Service>,
        processes: Vec<Process>,
        balances: Vec<Balance>,
        weights: [i64; 3],
        move_costs: Vec<u32>,
    ) -> Result<Model, PlacementError> {
        let bad = |field: String, message: String| PlacementError::Roadef {
            file: "<model>".into(),
            line: 0,
            column: 0,
            field,
            message,
        };
        let (nr, nm, ns) = (resources.len(), machines.len(), services.len());
        if move_costs.len() != nm * nm {
            return Err(bad(
                "move_costs".into(),
                format!("expected {} entries, found {}", nm * nm, move_costs.len()),
            ));
        }
        for (m, mach) in machines.iter().enumerate() {
            if mach.capacity.len() != nr || mach.safety_capacity.len() != nr {
                return Err(bad(
                    format!("machines[{m}]"),
                    format!("expected {nr} capacities"),
                ));
            }
        }
        for (p, proc) in processes.iter().enumerate() {
            if proc.service >= ns || proc.requirement.len() != nr {
                return Err(bad(
                    format!("processes[{p}]"),
                    format!("expected a service below {ns} and {nr} requirements"),
                ));
            }
        }
        for (s, svc) in services.iter().enumerate() {
            if svc.dependencies.iter().any(|&d| d >= ns) {
                return Err(bad(
                    format!("services[{s}].dependencies"),
                    format!("expected service indexes below {ns}"),
                ));
            }
        }
        for (b, bal) in balances.iter().enumerate() {
            if bal.resource1 >= nr || bal.resource2 >= nr {
                return Err(bad(
                    format!("balances[{b}]"),
                    format!("expected resource indexes below {nr}"),
                ));
            }
        }
        Ok(Model::assemble(
            resources, machines, services, processes, balances, weights, move_costs,
        ))
    }

    /// The model with its derived counts (neighborhoods, locations) from the machines.
    fn assemble(
        resources: Vec<Resource>,
        machines: Vec<Machine>,
        services: Vec<Service>,
        processes: Vec<Process>,
        balances: Vec<Balance>,
        weights: [i64; 3],
        move_costs: Vec<u32>,
    ) -> Model {
        let neighborhoods = machines
            .iter()
            .map(|m| m.neighborhood + 1)
            .max()
            .unwrap_or(0);
        let locations = machines.iter().map(|m| m.location + 1).max().unwrap_or(0);
        Model {
            resources,
            machines,
            services,
            processes,
            balances,
            weight_process_move: weights[0],
            weight_service_move: weights[1],
            weight_machine_move: weights[2],
            move_costs,
            neighborhoods,
            locations,
        }
    }
}

/// A solution file's text: the machine indexes on one line, space separated.
#[must_use]
pub fn render_solution(assignment: &[usize]) -> String {
    let mut out = assignment
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ");
    out.push('\n');
    out
}

/// Whitespace-separated tokens with their line:column.
struct Tokens<'a> {
    file: &'a str,
    text: &'a [u8],
    at: usize,
    line: usize,
    column: usize,
}

impl<'a> Tokens<'a> {
    fn new(file: &'a str, text: &'a str) -> Self {
        Tokens {
            file,
            text: text.as_bytes(),
            at: 0,
            line: 1,
            column: 1,
        }
    }

    fn skip_space(&mut self) {
        while let Some(&b) = self.text.get(self.at) {
            if b == b'\n' {
                self.line += 1;
                self.column = 1;
            } else if b.is_ascii_whitespace() {
                self.column += 1;
            } else {
                break;
            }
            self.at += 1;
        }
    }

    fn error(&self, line: usize, column: usize, field: String, message: String) -> PlacementError {
        PlacementError::Roadef {
            file: self.file.to_string(),
            line,
            column,
            field,
            message,
        }
    }

    /// The next integer in `low..=high`.
    fn int(
        &mut self,
        low: i64,
        high: i64,
        field: impl FnOnce() -> String,
    ) -> Result<i64, PlacementError> {
        self.skip_space();
        let (line, column, start) = (self.line, self.column, self.at);
        while self
            .text
            .get(self.at)
            .is_some_and(|b| !b.is_ascii_whitespace())
        {
            self.at += 1;
            self.column += 1;
        }
        let token = String::from_utf8_lossy(&self.text[start..self.at]);
        if token.is_empty() {
            return Err(self.error(
                line,
                column,
                field(),
                format!("expected an integer in {low}..={high}, found the end of the file"),
            ));
        }
        match token.parse::<i64>() {
            Ok(v) if (low..=high).contains(&v) => Ok(v),
            _ => Err(self.error(
                line,
                column,
                field(),
                format!("expected an integer in {low}..={high}, found `{token}`"),
            )),
        }
    }

    fn value(&mut self, field: impl FnOnce() -> String) -> Result<i64, PlacementError> {
        self.int(0, i64::MAX / 4, field)
    }

    fn count(&mut self, field: impl FnOnce() -> String) -> Result<usize, PlacementError> {
        // Counts and indexes index memory: bounded so a bad file cannot ask for terabytes.
        Ok(usize::try_from(self.int(0, 100_000_000, field)?).unwrap_or(0))
    }

    fn index(&mut self, n: usize, field: impl FnOnce() -> String) -> Result<usize, PlacementError> {
        let high = i64::try_from(n).unwrap_or(i64::MAX) - 1;
        if high < 0 {
            self.skip_space();
            return Err(self.error(
                self.line,
                self.column,
                field(),
                "expected an index, but there is nothing to index".into(),
            ));
        }
        Ok(usize::try_from(self.int(0, high, field)?).unwrap_or(0))
    }

    fn end(&mut self) -> Result<(), PlacementError> {
        self.skip_space();
        if self.at < self.text.len() {
            let end = self.text[self.at..]
                .iter()
                .position(u8::is_ascii_whitespace)
                .map_or(self.text.len(), |k| self.at + k);
            return Err(self.error(
                self.line,
                self.column,
                "end".into(),
                format!(
                    "expected the end of the file, found `{}`",
                    String::from_utf8_lossy(&self.text[self.at..end])
                ),
            ));
        }
        Ok(())
    }
}
