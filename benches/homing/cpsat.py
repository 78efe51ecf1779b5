"""CP-SAT's side of `cargo xtask bench-homing`: solves one instance JSON, prints one JSON line.

Usage: cpsat.py FILE --limit SECONDS [--workers 2]

The model is read from the same JSON the Berth runner reads (benches/src/homing.rs documents
it): one Boolean per (demand, allowed candidate), exactly one per demand; the objective is the
sum of the chosen integer costs; vCPU capacity per candidate; zone-different pairs as at most one
of the pair per zone; distance pairs as clauses (a on c implies b on a candidate within the
limit); inventory groups through one group choice per set; anti-affinity as at most one per
candidate. Time counts building and solving the model, not reading the file.
"""

import json
import sys
import time

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
    model.Minimize(
        sum(dem["cost"][c] * b for dem, xd in zip(dems, x) for c, b in xd.items())
    )
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
    # Every coefficient is an integer: the objective is one.
    objective = round(solver.ObjectiveValue()) if name in ("OPTIMAL", "FEASIBLE") else None
    print(
        json.dumps(
            {"name": inst["name"], "status": name, "objective": objective, "seconds": secs}
        )
    )


if __name__ == "__main__":
    main()
