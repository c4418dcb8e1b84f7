"""Notebook-style example: solve 10,000 random cubes with cubeswarm's two-phase solver
and look at how long the solutions are.

    pip install ./python matplotlib      # matplotlib is optional
    python examples/python_lengths.py    # add --optimal for proved-optimal lengths (slow)

Tables are built on first use (about 130 MB for two-phase) in the CLI's directory.
"""

import collections
import sys
import time

import cubeswarm

N = 10_000
method = "optimal" if "--optimal" in sys.argv else "twophase"

# %% Random states: a generator, so solve_many reads them as it needs them.
states = (cubeswarm.random_state(seed) for seed in range(N))

# %% Solve them all, in input order, with a progress bar.
start = time.monotonic()
lengths = collections.Counter()
failed = 0
for r in cubeswarm.solve_many(states, method=method, progress=True):
    if not r.ok:
        failed += 1
        continue
    assert cubeswarm.is_solved_by(r.input, r.moves)
    lengths[r.length] += 1
seconds = time.monotonic() - start

# %% The distribution of solution lengths.
total = sum(lengths.values())
mean = sum(k * v for k, v in lengths.items()) / max(total, 1)
print(f"{total} solved ({failed} failed) in {seconds:.1f} s, {total / seconds:.0f}/s; "
      f"mean length {mean:.2f}")
for k in sorted(lengths):
    print(f"{k:3d} moves: {lengths[k]:6d} {'#' * (60 * lengths[k] // max(lengths.values()))}")

# %% A plot, when matplotlib is installed.
try:
    import matplotlib.pyplot as plt
except ImportError:
    print("(pip install matplotlib for the plot)")
else:
    ks = sorted(lengths)
    plt.bar(ks, [lengths[k] for k in ks])
    plt.xlabel("solution length (moves)")
    plt.ylabel("positions")
    plt.title(f"{method}: {total} random positions, mean {mean:.2f}")
    plt.savefig("lengths.png", dpi=120)
    print("wrote lengths.png")
