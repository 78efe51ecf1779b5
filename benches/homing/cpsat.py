"""CP-SAT's side of `cargo xtask bench-homing`: solves one instance JSON, prints one JSON line.

Usage: cpsat.py FILE --limit SECONDS [--workers 2]

The model is read from the same JSON the Berth runner reads (benches/src/homing.rs documents
it): one Boolean per (demand, allowed candidate), exactly one per demand; the objective is the
sum of the chosen integer costs; vCPU capacity per candidate; zone-different pairs as at most one
of the pair per zone; distance pairs as clauses (a on c implies b on a candidate within the
limit); inventory groups through one group choice per set; anti-affinity as at most one per
candidate. Time counts building and solving the model, not reading the file.

Pair-distance terms (`pair_terms`, weight x great-circle km between the candidates of two
demands): CP-SAT needs integers, so the whole objective is scaled by PAIR_SCALE and each pair
cost rounded, round(weight x SCALE x km x PAIR_SCALE), with km the engine's haversine on the
same globe points (benches/src/homing.rs `globe`). One integer D per term, at least the
distance of every candidate pair chosen (enforced by each Boolean of either demand). Each
term's rounding is at most 0.5 / PAIR_SCALE, so CP-SAT's optimum (printed divided by
PAIR_SCALE) lies within `tolerance` = terms x (0.5 + 1e-6) / PAIR_SCALE of the exact one (the
1e-6 covers Python's libm against Rust's); the harness compares within it. Without pair terms
the tolerance is 0 and the objective is an integer.
"""

import json
import math
import sys
import time

# As benches/src/homing.rs (SCALE, PAIR_SCALE) and berth_constraints::geo (EARTH_RADIUS_KM).
SCALE = 1000.0
PAIR_SCALE = 1000
EARTH_RADIUS_KM = 6371.0088


def site(c):
    """A candidate's globe point (radians) as the engine prepares it."""
    deg = lambda v: math.degrees(v / SCALE / EARTH_RADIUS_KM)
    lat, lon = math.radians(deg(c["y"])), math.radians(deg(c["x"]))
    return lat, lon, math.cos(lat)


def km(p, q):
    """berth_constraints::geo::Point::distance_km."""
    dlat = (q[0] - p[0]) / 2.0
    dlon = (q[1] - p[1]) / 2.0
    h = math.sin(dlat) ** 2 + p[2] * q[2] * math.sin(dlon) ** 2
    return 2.0 * EARTH_RADIUS_KM * math.asin(math.sqrt(min(max(h, 0.0), 1.0)))

from ortools.sat.python import cp_model


def arg(name, default):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


def main():
    path = sys.argv[1]
    limit = float(arg("--limit", "20"))
    workers = int(arg("--workers", "2"))
    with open(path) as f:
        inst = json.load(f)
    start = time.perf_counter()
    cands = inst["candidates"]
    dems = inst["demands"]
    m = len(cands)
    model = cp_model.CpModel()
    x = []  # x[d] = {candidate: Boolean}
    for d, dem in enumerate(dems):
        xd = {c: model.NewBoolVar(f"x{d}_{c}") for c in dem["allowed"]}
        model.AddExactlyOne(xd.values())
        x.append(xd)
    pairs = inst.get("pair_terms", [])
    scale = PAIR_SCALE if pairs else 1
    objective = [
        scale * dem["cost"][c] * b for dem, xd in zip(dems, x) for c, b in xd.items()
    ]
    sites = [site(c) for c in cands] if pairs else []
    for k, t in enumerate(pairs):
        a, b, w = t["a"], t["b"], t["weight"] * SCALE * PAIR_SCALE
        cost = {
            (i, j): round(w * km(sites[i], sites[j])) for i in x[a] for j in x[b]
        }
        top = max(cost.values(), default=0)
        d = model.NewIntVar(0, top, f"pair{k}")
        for i, v in x[a].items():
            model.Add(d >= sum(cost[i, j] * u for j, u in x[b].items())).OnlyEnforceIf(v)
        for j, u in x[b].items():
            model.Add(d >= sum(cost[i, j] * v for i, v in x[a].items())).OnlyEnforceIf(u)
        objective.append(d)
    model.Minimize(sum(objective))
    on = [[] for _ in range(m)]
    for d, xd in enumerate(x):
        for c, b in xd.items():
            on[c].append((dems[d]["vcpus"], b))
    for c, terms in enumerate(on):
        if sum(v for v, _ in terms) > cands[c]["vcpus"]:
            model.Add(sum(v * b for v, b in terms) <= cands[c]["vcpus"])
    for a, b in inst["zone_diff"]:
        zones = {}
        for d in (a, b):
            for c, v in x[d].items():
                zones.setdefault(cands[c]["zone"], []).append(v)
        for vs in zones.values():
            if len(vs) > 1:
                model.AddAtMostOne(vs)
    for np_ in inst["near"]:
        a, b, lim = np_["a"], np_["b"], np_["max_km"] ** 2
        for (p, q) in ((a, b), (b, a)):
            for c, v in x[p].items():
                cx, cy = cands[c]["x"], cands[c]["y"]
                ok = [
                    w
                    for e, w in x[q].items()
                    if (cands[e]["x"] - cx) ** 2 + (cands[e]["y"] - cy) ** 2 <= lim
                ]
                model.AddBoolOr([v.Not()] + ok)
    for i, s in enumerate(inst["same_group"]):
        groups = sorted({c["group"] for c in cands})
        g = {k: model.NewBoolVar(f"g{i}_{k}") for k in groups}
        model.AddExactlyOne(g.values())
        for d in s:
            for c, v in x[d].items():
                model.AddImplication(v, g[cands[c]["group"]])
    for s in inst["anti_affinity"]:
        per = {}
        for d in s:
            for c, v in x[d].items():
                per.setdefault(c, []).append(v)
        for vs in per.values():
            if len(vs) > 1:
                model.AddAtMostOne(vs)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.0, limit - (time.perf_counter() - start))
    solver.parameters.num_workers = workers
    status = solver.Solve(model)
    secs = time.perf_counter() - start
    name = {
        cp_model.OPTIMAL: "OPTIMAL",
        cp_model.FEASIBLE: "FEASIBLE",
        cp_model.INFEASIBLE: "INFEASIBLE",
    }.get(status, "UNKNOWN")
    # Every coefficient is an integer: the objective is one (divided by the pair scale).
    objective = None
    if name in ("OPTIMAL", "FEASIBLE"):
        objective = round(solver.ObjectiveValue())
        if pairs:
            objective /= scale
    tolerance = len(pairs) * (0.5 + 1e-6) / PAIR_SCALE
    print(
        json.dumps(
            {
                "name": inst["name"],
                "status": name,
                "objective": objective,
                "tolerance": tolerance,
                "seconds": secs,
            }
        )
    )


if __name__ == "__main__":
    main()
