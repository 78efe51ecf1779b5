//! Seeded structured-homing instances (issue 13's family), their JSON export and the solver model.
//!
//! An [`Instance`] is the model itself, written out: each demand's allowed candidates (after
//! `distance_to_location`, owner attributes and the vCPU fit), integer costs (weighted distance
//! to the customer), zone-different pairs, `distance_between_demands` pairs (squared integer
//! distances between candidate coordinates), vCPU capacity shared by the demands placed on one
//! candidate (`region_fit`), and for the larger sizes inventory groups (`same_group`) and
//! anti-affinity (distinct candidates). [`to_problem`] builds the Berth model from it; the CP-SAT
//! script `benches/homing/cpsat.py` builds its model from the same JSON, so both solve one
//! model. Every quantity is an integer, so both objectives are exact.
//!
//! [`with_pair_terms`] adds pair-distance objective terms (HAS `distance_between` two demands,
//! instances named `h{n}x{m}p-s{seed}`): weight x the great-circle distance between the two
//! chosen candidates, the map placed on the globe by [`globe`] and measured by the engine's own
//! haversine, so the solver API and `berth solve` compute the same floats. Those objectives are
//! not whole; CP-SAT solves them scaled by [`PAIR_SCALE`] and rounded (see the script).

use std::sync::Arc;

use berth_constraints::geo::{EARTH_RADIUS_KM, MAX_DISTANCE_KM, Point};
use berth_solver::{
    AllDifferent, AllDifferentGroup, Capacity, Expr, Filter, Keys, Pairwise, Problem, SameGroup,
    Sense, Value,
};
use serde::{Deserialize, Serialize};

/// One candidate site (a region / cloud-region candidate of the HAS family).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Candidate {
    /// Coordinates in km on a square map.
    pub x: i64,
    /// Coordinates in km on a square map.
    pub y: i64,
    /// vCPUs, shared by the demands placed here.
    pub vcpus: i64,
    /// Disaster zone.
    pub zone: u32,
    /// Owner attribute.
    pub owner: u32,
    /// Inventory group.
    pub group: u32,
}

/// One demand.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Demand {
    /// vCPUs it needs.
    pub vcpus: i64,
    /// Candidates it may use (sorted), after the unary rules.
    pub allowed: Vec<u32>,
    /// Cost of each candidate (weight * km to the customer), one per candidate.
    pub cost: Vec<i64>,
    /// The weight of its distance to the customer.
    #[serde(default)]
    pub weight: i64,
    /// The owner it refuses.
    #[serde(default)]
    pub banned_owner: u32,
    /// The point its candidates must be within [`LOCATION_KM`] of, if any.
    #[serde(default)]
    pub location: Option<(i64, i64)>,
}

/// `a` and `b` within `max_km` of each other (compared as squares of integers).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct NearPair {
    /// A demand.
    pub a: u32,
    /// Another demand.
    pub b: u32,
    /// Largest distance between their candidates.
    pub max_km: i64,
}

/// An objective term `weight x km` between the candidates of demands `a` and `b`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PairTerm {
    /// A demand.
    pub a: u32,
    /// Another demand.
    pub b: u32,
    /// Cost per map km (the template's weight is [`SCALE`] times it: its km are map metres).
    pub weight: i64,
}

/// A generated instance: the model both solvers read.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Instance {
    /// `h{demands}x{candidates}-s{seed}`.
    pub name: String,
    /// The seed it was generated from.
    pub seed: u64,
    /// The candidates.
    pub candidates: Vec<Candidate>,
    /// The demands.
    pub demands: Vec<Demand>,
    /// Demand pairs on candidates of different zones.
    pub zone_diff: Vec<(u32, u32)>,
    /// Demand pairs within a distance of each other.
    pub near: Vec<NearPair>,
    /// Demand sets in one inventory group.
    pub same_group: Vec<Vec<u32>>,
    /// Demand sets on pairwise distinct candidates.
    pub anti_affinity: Vec<Vec<u32>>,
    /// The customer's point (costs are weighted km to it).
    #[serde(default)]
    pub customer: (i64, i64),
    /// Pair-distance objective terms (absent from the JSON when there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pair_terms: Vec<PairTerm>,
}

/// The sizes of the benchmark, `(demands, candidates)`; the last three add groups and
/// anti-affinity.
pub const SIZES: &[(usize, usize)] = &[
    (4, 20),
    (6, 40),
    (8, 60),
    (10, 80),
    (12, 100),
    (15, 150),
    (20, 200),
    (30, 300),
    (40, 500),
    (60, 800),
    (100, 1000),
];

/// Sizes from this many demands on get inventory groups and anti-affinity.
const LARGE: usize = 40;
/// Side of the map, km.
const MAP_KM: i64 = 2000;
/// Zones per side of the map (zones are squares).
const ZONES_PER_SIDE: i64 = 4;
/// `distance_to_location` radius, km.
pub const LOCATION_KM: i64 = 700;
/// `distance_between_demands` limit, km.
const NEAR_KM: i64 = 500;
/// Owners; each demand accepts all but one.
const OWNERS: u32 = 4;
/// Inventory groups.
const GROUPS: u32 = 8;

/// Map km per template km: the map's km are metres on the globe.
pub const SCALE: f64 = 1000.0;
/// CP-SAT's pair-distance costs are `round(weight x km x PAIR_SCALE)`: each term is off by at
/// most `0.5 / PAIR_SCALE`.
pub const PAIR_SCALE: f64 = 1000.0;

/// A map point as `(latitude, longitude)` in degrees, at the equator, one map km a metre.
pub fn globe((x, y): (i64, i64)) -> (f64, f64) {
    let deg = |v: i64| (v as f64 / SCALE / EARTH_RADIUS_KM).to_degrees();
    (deg(y), deg(x))
}

/// A candidate's globe point, as the engine prepares it from the inventory's coordinates.
fn site(c: &Candidate) -> Point {
    let (lat, lon) = globe((c.x, c.y));
    Point::new(lat, lon)
}

/// SplitMix64: seeded, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    /// Two distinct indices below `n` (`n >= 2`).
    fn pair(&mut self, n: u64) -> (u32, u32) {
        let a = self.below(n);
        let b = (a + 1 + self.below(n - 1)) % n;
        (a as u32, b as u32)
    }
}

/// The squared distance between two points of the map.
pub fn dist2(ax: i64, ay: i64, bx: i64, by: i64) -> i64 {
    (ax - bx).pow(2) + (ay - by).pow(2)
}

/// Generates the instance of `demands` x `candidates` for `seed`.
pub fn generate(demands: usize, candidates: usize, seed: u64) -> Instance {
    let mut r =
        Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ (demands * 1_000_003 + candidates) as u64);
    let cands: Vec<Candidate> = (0..candidates)
        .map(|_| {
            let x = r.below(MAP_KM as u64) as i64;
            let y = r.below(MAP_KM as u64) as i64;
            let side = MAP_KM / ZONES_PER_SIDE;
            Candidate {
                x,
                y,
                vcpus: 8 << r.below(4),
                zone: ((x / side) * ZONES_PER_SIDE + y / side) as u32,
                owner: r.below(u64::from(OWNERS)) as u32,
                group: r.below(u64::from(GROUPS)) as u32,
            }
        })
        .collect();
    let (cx, cy) = (r.below(MAP_KM as u64) as i64, r.below(MAP_KM as u64) as i64);
    let mut dems = Vec::with_capacity(demands);
    for d in 0..demands {
        let vcpus = 4 << r.below(3);
        let weight = 1 + r.below(5) as i64;
        let banned_owner = r.below(u64::from(OWNERS)) as u32;
        let location =
            (d % 2 == 0).then(|| (r.below(MAP_KM as u64) as i64, r.below(MAP_KM as u64) as i64));
        let cost: Vec<i64> = cands
            .iter()
            .map(|c| weight * (dist2(c.x, c.y, cx, cy) as f64).sqrt().round() as i64)
            .collect();
        let allowed: Vec<u32> = (0..candidates as u32)
            .filter(|&i| {
                let c = &cands[i as usize];
                c.vcpus >= vcpus
                    && c.owner != banned_owner
                    && location
                        .is_none_or(|(lx, ly)| dist2(c.x, c.y, lx, ly) <= LOCATION_KM * LOCATION_KM)
            })
            .collect();
        dems.push(Demand {
            vcpus,
            allowed,
            cost,
            weight,
            banned_owner,
            location,
        });
    }
    let n = demands as u64;
    let zone_diff: Vec<(u32, u32)> = (0..demands / 2).map(|_| r.pair(n)).collect();
    // Pairs whose allowed candidates can meet at all (a few draws, then any pair).
    let meet = |a: u32, b: u32| {
        dems[a as usize].allowed.iter().any(|&i| {
            let c = &cands[i as usize];
            dems[b as usize].allowed.iter().any(|&j| {
                let e = &cands[j as usize];
                dist2(c.x, c.y, e.x, e.y) <= NEAR_KM * NEAR_KM
            })
        })
    };
    let near: Vec<NearPair> = (0..demands / 3)
        .map(|_| {
            let mut ab = r.pair(n);
            for _ in 0..20 {
                if meet(ab.0, ab.1) {
                    break;
                }
                ab = r.pair(n);
            }
            NearPair {
                a: ab.0,
                b: ab.1,
                max_km: NEAR_KM,
            }
        })
        .collect();
    let (mut same_group, mut anti_affinity) = (Vec::new(), Vec::new());
    if demands >= LARGE {
        // Disjoint blocks of three consecutive demands.
        for s in 0..demands / 10 {
            let start = 3 * s as u32;
            let set = vec![start, start + 1, start + 2];
            if s % 2 == 0 {
                same_group.push(set);
            } else {
                anti_affinity.push(set);
            }
        }
    }
    Instance {
        name: format!("h{demands}x{candidates}-s{seed}"),
        seed,
        candidates: cands,
        demands: dems,
        zone_diff,
        near,
        same_group,
        anti_affinity,
        customer: (cx, cy),
        pair_terms: Vec::new(),
    }
}

/// `inst` with pair-distance terms: one per ten demands (at least one), between distinct
/// random demand pairs, weights 1–5 per map km, drawn from a generator of their own (the rest
/// of the instance stays as [`generate`] made it); named `h{n}x{m}p-s{seed}`.
pub fn with_pair_terms(mut inst: Instance) -> Instance {
    let n = inst.demands.len();
    let mut r = Rng(inst.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x7061_6972 ^ n as u64);
    let mut pairs: Vec<PairTerm> = Vec::new();
    let want = (n / 10).max(1);
    for _ in 0..100 * want {
        if pairs.len() == want || n < 2 {
            break;
        }
        let (a, b) = r.pair(n as u64);
        let (a, b) = (a.min(b), a.max(b));
        if pairs.iter().all(|p| (p.a, p.b) != (a, b)) {
            let weight = 1 + r.below(5) as i64;
            pairs.push(PairTerm { a, b, weight });
        }
    }
    inst.name = format!("h{n}x{}p-s{}", inst.candidates.len(), inst.seed);
    inst.pair_terms = pairs;
    inst
}

/// The objective of a pair term: its weight per template km and the template km between two
/// candidates (what `berth solve` computes from the files, float for float).
fn pair_cost(inst: &Instance, t: &PairTerm) -> (f64, impl Fn(u32, u32) -> f64 + use<>) {
    let sites: Arc<[Point]> = inst.candidates.iter().map(site).collect();
    let km = move |u: u32, v: u32| {
        sites[u as usize]
            .distance_km(&sites[v as usize])
            .clamp(0.0, MAX_DISTANCE_KM)
    };
    (t.weight as f64 * SCALE, km)
}

/// The Berth model of `inst`: one variable per demand over all candidates.
pub fn to_problem(inst: &Instance) -> Problem {
    let m = inst.candidates.len() as u32;
    let mut p = Problem::new();
    let vars: Vec<_> = (0..inst.demands.len())
        .map(|d| p.add_var(format!("d{d}"), m))
        .collect();
    let mut terms = Vec::new();
    for (d, dem) in inst.demands.iter().enumerate() {
        let mut ok = vec![false; m as usize];
        for &c in &dem.allowed {
            ok[c as usize] = true;
        }
        p.add_constraint(
            format!("allowed d{d}"),
            Filter::keep(vars[d], m, |v| ok[v.index()]),
        );
        let cost: Arc<[f64]> = dem.cost.iter().map(|&c| c as f64).collect();
        terms.push((1.0, Expr::unary(vars[d], cost)));
    }
    // After the unary terms, in order, as the files' objective lists them.
    for t in &inst.pair_terms {
        let (w, km) = pair_cost(inst, t);
        let pair = Expr::pair(
            vars[t.a as usize],
            vars[t.b as usize],
            0.0,
            MAX_DISTANCE_KM,
            move |u: Value, v: Value| km(u.0, v.0),
        );
        terms.push((w, pair));
    }
    p.set_objective(Sense::Minimize, Expr::sum(terms));
    let zone: Keys = inst.candidates.iter().map(|c| c.zone).collect();
    for &(a, b) in &inst.zone_diff {
        p.add_constraint(
            format!("zone d{a} d{b}"),
            AllDifferentGroup::new(
                vec![vars[a as usize], vars[b as usize]],
                vec![zone.clone(), zone.clone()],
            ),
        );
    }
    let xy: Arc<[(i64, i64)]> = inst.candidates.iter().map(|c| (c.x, c.y)).collect();
    for np in &inst.near {
        let xy = xy.clone();
        let lim = np.max_km * np.max_km;
        p.add_constraint(
            format!("near d{} d{}", np.a, np.b),
            Pairwise::new(
                vars[np.a as usize],
                vars[np.b as usize],
                move |u: Value, v: Value| {
                    let (a, b) = (xy[u.index()], xy[v.index()]);
                    dist2(a.0, a.1, b.0, b.1) <= lim
                },
            ),
        );
    }
    let holder: Keys = (0..m).collect();
    let capacity: Vec<Vec<i64>> = inst.candidates.iter().map(|c| vec![c.vcpus]).collect();
    let demands = inst
        .demands
        .iter()
        .enumerate()
        .map(|(d, dem)| (vars[d], holder.clone(), vec![dem.vcpus]))
        .collect();
    p.add_constraint("region_fit", Capacity::new(1, capacity, demands));
    let group: Keys = inst.candidates.iter().map(|c| c.group).collect();
    for (i, set) in inst.same_group.iter().enumerate() {
        p.add_constraint(
            format!("same_group {i}"),
            SameGroup::new(
                set.iter().map(|&d| vars[d as usize]).collect(),
                set.iter().map(|_| group.clone()).collect(),
            ),
        );
    }
    for (i, set) in inst.anti_affinity.iter().enumerate() {
        p.add_constraint(
            format!("anti_affinity {i}"),
            AllDifferent::new(set.iter().map(|&d| vars[d as usize]).collect()),
        );
    }
    p
}

/// The objective of `values` recomputed from the instance alone (an independent check), or
/// `None` when a rule is broken. The whole unary costs first, then each pair term in order:
/// the solver's sum of the same floats in the same order, so the two agree exactly.
pub fn check(inst: &Instance, values: &[u32]) -> Option<f64> {
    if values.len() != inst.demands.len() {
        return None;
    }
    let mut load = vec![0i64; inst.candidates.len()];
    let mut total = 0;
    for (d, &c) in values.iter().enumerate() {
        let dem = &inst.demands[d];
        if dem.allowed.binary_search(&c).is_err() {
            return None;
        }
        load[c as usize] += dem.vcpus;
        total += dem.cost[c as usize];
    }
    let cand = |d: u32| &inst.candidates[values[d as usize] as usize];
    let fits = load
        .iter()
        .zip(&inst.candidates)
        .all(|(l, c)| *l <= c.vcpus);
    let zones = inst
        .zone_diff
        .iter()
        .all(|&(a, b)| cand(a).zone != cand(b).zone);
    let near = inst.near.iter().all(|np| {
        let (a, b) = (cand(np.a), cand(np.b));
        dist2(a.x, a.y, b.x, b.y) <= np.max_km * np.max_km
    });
    let groups = inst
        .same_group
        .iter()
        .all(|s| s.iter().all(|&d| cand(d).group == cand(s[0]).group));
    let apart = inst.anti_affinity.iter().all(|s| {
        s.iter().enumerate().all(|(i, &a)| {
            s[i + 1..]
                .iter()
                .all(|&b| values[a as usize] != values[b as usize])
        })
    });
    let mut objective = total as f64;
    for t in &inst.pair_terms {
        let (w, km) = pair_cost(inst, t);
        objective += w * km(values[t.a as usize], values[t.b as usize]);
    }
    (fits && zones && near && groups && apart).then_some(objective)
}
