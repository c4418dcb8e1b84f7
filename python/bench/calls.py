"""One measurement of the installed cubeswarm package: cubeswarm.kociemba.solve per call
(mean, median, p99) on random states, and solve_many's throughput on a batch. Prints one
JSON line. `ab.sh` alternates two installs with it; every solution is checked.

    CUBESWARM_TABLES=DIR VENV/bin/python python/bench/calls.py --states 1000 --batch 10000
"""

import argparse
import json
import statistics
import time

import cubeswarm
from cubeswarm import kociemba


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--states", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    states = [cubeswarm.random_state(a.seed * 1_000_003 + i) for i in range(a.states)]
    solved = cubeswarm.facelets("")
    kociemba.solve(states[0])  # the first call opens the tables: outside the timing
    ms = []
    for s in states:
        t = time.perf_counter()
        sol = kociemba.solve(s)
        ms.append((time.perf_counter() - t) * 1e3)
        assert cubeswarm.apply(s, sol) == solved, (s, sol)
    batch = [cubeswarm.random_state(a.seed * 7_000_001 + i) for i in range(a.batch)]
    t = time.perf_counter()
    got = list(cubeswarm.solve_many(batch, method="twophase"))
    secs = time.perf_counter() - t
    assert all(cubeswarm.is_solved_by(g.input, g.moves) for g in got)
    print(json.dumps({
        "mean_ms": round(statistics.mean(ms), 4),
        "median_ms": round(statistics.median(ms), 4),
        "p99_ms": round(sorted(ms)[int(len(ms) * 0.99) - 1], 4),
        "solve_many_per_s": round(len(batch) / secs, 1),
    }))


if __name__ == "__main__":
    main()
