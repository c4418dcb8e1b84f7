"""Benchmark: cubeswarm.kociemba.solve against the `kociemba` PyPI package on the same
random states (per call, alternating which goes first), and solve_many against the CLI on
the same file.

Run it in an environment of its own (kociemba is never a dependency of the project):

    python3 -m venv /tmp/bench && /tmp/bench/bin/pip install ./python kociemba
    CUBESWARM_TABLES=/path/to/tables /tmp/bench/bin/python python/bench/bench_kociemba.py \
        --states 1000 --cli target/release/cubeswarm

Every solution of both is checked by applying it.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import kociemba as their

import cubeswarm
from cubeswarm import kociemba as ours

SOLVED = cubeswarm.facelets("")


def per_call(states):
    # First calls load (or, for kociemba, build) tables: outside the timing.
    their.solve(states[0])
    ours.solve(states[0])
    t = {"kociemba": [], "cubeswarm": []}
    n = {"kociemba": [], "cubeswarm": []}
    fns = {"kociemba": their.solve, "cubeswarm": ours.solve}
    for i, s in enumerate(states):
        order = ["kociemba", "cubeswarm"] if i % 2 == 0 else ["cubeswarm", "kociemba"]
        for name in order:
            a = time.perf_counter()
            sol = fns[name](s)
            t[name].append(time.perf_counter() - a)
            assert cubeswarm.apply(s, sol) == SOLVED, (name, s, sol)
            n[name].append(len(sol.split()))
    for name in ("kociemba", "cubeswarm"):
        ms = [x * 1e3 for x in t[name]]
        print(f"{name:10s} per call: mean {statistics.mean(ms):7.3f} ms, median "
              f"{statistics.median(ms):7.3f} ms, p99 {sorted(ms)[int(len(ms) * 0.99) - 1]:7.3f} ms; "
              f"mean length {statistics.mean(n[name]):.2f}, max {max(n[name])}")


def throughput(states, cli, rounds):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "states.txt")
        with open(path, "w") as f:
            f.write("\n".join(states) + "\n")
        res = {"solve_many": [], "cli": []}
        for r in range(rounds):
            order = ["solve_many", "cli"] if r % 2 == 0 else ["cli", "solve_many"]
            for name in order:
                a = time.perf_counter()
                if name == "cli":
                    subprocess.run([cli, "solve", "--method", "twophase", "--quiet",
                                    "--input", path, "--output", os.devnull], check=True)
                else:
                    with open(path) as f:
                        got = list(cubeswarm.solve_many(f, method="twophase"))
                    assert all(cubeswarm.is_solved_by(g.input, g.moves) for g in got)
                res[name].append(len(states) / (time.perf_counter() - a))
        for name, v in res.items():
            print(f"{name:10s} throughput: " + ", ".join(f"{x:.0f}" for x in v)
                  + f" positions/s (best {max(v):.0f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--states", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=10000, help="states for the throughput runs")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--cli", default="target/release/cubeswarm")
    a = ap.parse_args()
    states = [cubeswarm.random_state(seed) for seed in range(a.states)]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {a.states} random states")
    per_call(states)
    batch = [cubeswarm.random_state(10**6 + seed) for seed in range(a.batch)]
    throughput(batch, a.cli, a.rounds)


if __name__ == "__main__":
    main()
