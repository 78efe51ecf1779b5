"""The LP bound of one homing instance, then after rounds of extended cover cuts on its vCPU
rows: what cover cuts can give the root LP, measured outside Berth (OR-Tools' GLOP, inside
the benchmark's virtual environment only).

Usage: lpbound.py FILE [--rounds 8] [--lift]

The LP is the one `cpsat.py` models, relaxed: one [0, 1] variable per (demand, allowed
candidate), one per demand summing to 1, vCPU rows per candidate, zone-different pairs as at
most one per zone, distance pairs as `a on c <= b on a candidate within the limit`, a group
choice per same-group set, at most one per candidate per anti-affinity set. Each round adds,
per vCPU row, the extended cover grown greedily from the columns the LP takes most per vCPU
when it is violated, and solves again. With `--lift` the columns lighter than the cover's
heaviest get their sequentially lifted coefficients too (a knapsack over the cut's columns
so far, in decreasing LP value), instead of staying out of the cut.
"""

import json
import sys

from ortools.linear_solver import pywraplp


def arg(name, default):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


def build(inst):
    cands, dems = inst["candidates"], inst["demands"]
    s = pywraplp.Solver.CreateSolver("GLOP")
    x = []
    for dem in dems:
        xd = {c: s.NumVar(0, 1, "") for c in dem["allowed"]}
        s.Add(sum(xd.values()) == 1)
        x.append(xd)
    s.Minimize(sum(dem["cost"][c] * v for dem, xd in zip(dems, x) for c, v in xd.items()))
    rows = []
    on = [[] for _ in cands]
    for d, xd in enumerate(x):
        for c, v in xd.items():
            on[c].append((dems[d]["vcpus"], v))
    for c, items in enumerate(on):
        if sum(w for w, _ in items) > cands[c]["vcpus"]:
            s.Add(sum(w * v for w, v in items) <= cands[c]["vcpus"])
            rows.append((cands[c]["vcpus"], items))
    for a, b in inst["zone_diff"]:
        zones = {}
        for d in (a, b):
            for c, v in x[d].items():
                zones.setdefault(cands[c]["zone"], []).append(v)
        for vs in zones.values():
            if len(vs) > 1:
                s.Add(sum(vs) <= 1)
    for near in inst["near"]:
        a, b, lim = near["a"], near["b"], near["max_km"] ** 2
        for p, q in ((a, b), (b, a)):
            for c, v in x[p].items():
                cx, cy = cands[c]["x"], cands[c]["y"]
                ok = [
                    w
                    for e, w in x[q].items()
                    if (cands[e]["x"] - cx) ** 2 + (cands[e]["y"] - cy) ** 2 <= lim
                ]
                s.Add(v <= sum(ok))
    groups = sorted({c["group"] for c in cands})
    for members in inst["same_group"]:
        g = {k: s.NumVar(0, 1, "") for k in groups}
        s.Add(sum(g.values()) == 1)
        for d in members:
            for k in groups:
                s.Add(sum(v for c, v in x[d].items() if cands[c]["group"] == k) == g[k])
    for members in inst["anti_affinity"]:
        per = {}
        for d in members:
            for c, v in x[d].items():
                per.setdefault(c, []).append(v)
        for vs in per.values():
            if len(vs) > 1:
                s.Add(sum(vs) <= 1)
    return s, rows


def cover(cap, items, value, lift=False):
    """The violated extended cover of one row at the LP point, or None."""
    taken = [(w, v, value[v.index()]) for w, v in items]
    taken.sort(key=lambda t: (1 - t[2]) / t[0])
    chosen, weight = [], 0
    for t in taken:
        chosen.append(t)
        weight += t[0]
        if weight > cap:
            break
    if weight <= cap:
        return None
    chosen.sort(key=lambda t: t[2])
    for t in list(chosen):
        if weight - t[0] > cap:
            chosen.remove(t)
            weight -= t[0]
    rhs = len(chosen) - 1
    ids = {t[1].index() for t in chosen}
    if not lift:
        if sum(t[2] for t in chosen) <= rhs + 1e-6:
            return None
        heaviest = max(t[0] for t in chosen)
        return [(v, 1) for w, v in items if v.index() in ids or w >= heaviest], rhs
    cut = [(t[0], t[1], 1) for t in chosen]
    for w, v, _ in sorted((t for t in taken if t[1].index() not in ids), key=lambda t: -t[2]):
        room = int(cap - w)
        if room < 0:
            continue
        # The most the cut's columns so far can take beside this one.
        best = [0] * (room + 1)
        for wi, _, a in cut:
            for k in range(room, int(wi) - 1, -1):
                best[k] = max(best[k], best[k - int(wi)] + a)
        if rhs - best[room] > 0:
            cut.append((w, v, rhs - best[room]))
    if sum(a * value[v.index()] for _, v, a in cut) <= rhs + 1e-6:
        return None
    return [(v, a) for _, v, a in cut], rhs


def main():
    with open(sys.argv[1]) as f:
        inst = json.load(f)
    rounds = int(arg("--rounds", "8"))
    lift = "--lift" in sys.argv
    s, rows = build(inst)
    s.Solve()
    print(json.dumps({"name": inst["name"], "round": 0, "cuts": 0, "bound": s.Objective().Value()}))
    total = 0
    for r in range(1, rounds + 1):
        # Read the whole point before adding a row: the solver forgets it on a change.
        value = [v.solution_value() for v in s.variables()]
        cuts = [c for cap, items in rows if (c := cover(cap, items, value, lift))]
        if not cuts:
            break
        for terms, rhs in cuts:
            s.Add(sum(a * v for v, a in terms) <= rhs)
        total += len(cuts)
        s.Solve()
        print(json.dumps({"name": inst["name"], "round": r, "cuts": total, "bound": s.Objective().Value()}))


if __name__ == "__main__":
    main()
